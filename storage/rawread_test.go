package storage_test

import (
	"context"
	"database/sql/driver"
	"errors"
	"io"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/rpctl/rpctl/internal/dsn"
	"github.com/rpctl/rpctl/internal/testdb"
	"github.com/rpctl/rpctl/storage"
)

// rawRows reads every row of rows, each value copied (a driver's []byte
// is valid only until the next row).
func rawRows(t *testing.T, rows driver.Rows) [][]any {
	t.Helper()
	defer rows.Close()
	var out [][]any
	vals := make([]driver.Value, len(rows.Columns()))
	for {
		err := rows.Next(vals)
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		row := make([]any, len(vals))
		for i, v := range vals {
			if b, ok := v.([]byte); ok {
				v = string(b)
			}
			row[i] = v
		}
		out = append(out, row)
	}
}

// TestRawReadTx: on SQLite and MariaDB, the raw read sees the rows, with
// bound arguments too (go-sql-driver binds them only in a prepared
// statement, which must be closed with its rows), inside a transaction
// that on MariaDB is read-only.
func TestRawReadTx(t *testing.T) {
	ctx := context.Background()
	dbs := map[string]*storage.DB{}
	lite, err := storage.Open(ctx, dsn.SQLiteFile(filepath.Join(t.TempDir(), "r.db")), storage.RolePlacement, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lite.Close() })
	dbs["sqlite"] = lite
	if testdb.MySQLWanted() {
		dbs["mysql"] = testdb.Open(t, testdb.NewMySQL(t).DSN, storage.RolePlacement)
	}
	for name, db := range dbs {
		t.Run(name, func(t *testing.T) {
			for _, q := range []string{"CREATE TABLE t (id INTEGER PRIMARY KEY, name VARCHAR(20))", "INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, NULL)"} {
				if _, err := db.ExecContext(ctx, q); err != nil {
					t.Fatal(err)
				}
			}
			err := db.RawReadTx(ctx, func(query storage.RawQuery) error {
				for _, tc := range []struct {
					q    string
					args []any
					want int
				}{
					{"SELECT id, name FROM t ORDER BY id", nil, 3},
					{db.Rebind("SELECT id, name FROM t WHERE id >= ? AND name <> ? ORDER BY id"), []any{1, "b"}, 1},
					// storage.Prepared: a prepared statement without arguments.
					{"SELECT id, name FROM t ORDER BY id", []any{storage.Prepared}, 3},
				} {
					var closes int64
					if db.IsMySQL() {
						closes = stmtCloses(t, query)
					}
					rows, err := query(tc.q, tc.args...)
					if err != nil {
						t.Fatalf("%s: %v", tc.q, err)
					}
					got := rawRows(t, rows)
					if len(got) != tc.want || got[0][1] != "a" {
						t.Errorf("%s %v: %v, want %d rows, the first named a", tc.q, tc.args, got, tc.want)
					}
					if db.IsMySQL() && tc.args != nil {
						if n := stmtCloses(t, query); n != closes+1 {
							t.Errorf("%s: %d statements closed, want 1", tc.q, n-closes)
						}
					}
				}
				if db.IsMySQL() {
					if _, err := query("INSERT INTO t VALUES (4, 'd')"); err == nil {
						t.Error("an INSERT in the raw read succeeded: the transaction is not read-only")
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

// stmtCloses is the session's count of closed prepared statements.
func stmtCloses(t *testing.T, query storage.RawQuery) int64 {
	t.Helper()
	rows, err := query("SHOW SESSION STATUS LIKE 'Com_stmt_close'")
	if err != nil {
		t.Fatal(err)
	}
	got := rawRows(t, rows)
	if len(got) != 1 {
		t.Fatalf("Com_stmt_close: %v", got)
	}
	n, err := strconv.ParseInt(got[0][1].(string), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
