package storage_test

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
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

// TestRawReadTxScripts: a database opened by OpenReadScripts takes several
// SELECTs in one query inside RawReadTx, their rows in one result set
// each; the transaction starts with the first query (a prepared first
// query still runs inside it), is read-only and is over when RawReadTx
// returns. Open's connections keep refusing a second statement.
func TestRawReadTxScripts(t *testing.T) {
	if !testdb.MySQLWanted() {
		t.Skip("needs MariaDB (RPCTL_INTEGRATION=1, RPCTL_TEST_MYSQL)")
	}
	ctx := context.Background()
	my := testdb.NewMySQL(t)
	plain := testdb.Open(t, my.DSN, storage.RolePlacement)
	if plain.ReadsScripts() {
		t.Fatal("Open: ReadsScripts")
	}
	if _, err := plain.ExecContext(ctx, "CREATE TABLE t (id INTEGER PRIMARY KEY, name VARCHAR(20))"); err != nil {
		t.Fatal(err)
	}
	if _, err := plain.ExecContext(ctx, "INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, NULL)"); err != nil {
		t.Fatal(err)
	}
	err := plain.RawReadTx(ctx, func(query storage.RawQuery) error {
		rows, err := query("SELECT 1; SELECT 2")
		if err == nil {
			rows.Close()
			return errors.New("a second statement ran on Open's connection")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	tg, err := dsn.Parse(my.DSN)
	if err != nil {
		t.Fatal(err)
	}
	db, err := storage.OpenReadScripts(ctx, tg, storage.RolePlacement, "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if !db.ReadsScripts() {
		t.Fatal("OpenReadScripts: not ReadsScripts")
	}
	// One connection, so that the transaction's end shows on the next use.
	db.SetMaxOpenConns(1)
	inTx := func(query storage.RawQuery) int64 {
		rows, err := query("SELECT @@in_transaction")
		if err != nil {
			t.Fatal(err)
		}
		got := rawRows(t, rows)
		n, err := strconv.ParseInt(fmt.Sprint(got[0][0]), 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	for _, first := range []struct {
		name string
		args []any
	}{{"literal first", nil}, {"prepared first", []any{storage.Prepared}}} {
		t.Run(first.name, func(t *testing.T) {
			err := db.RawReadTx(ctx, func(query storage.RawQuery) error {
				rows, err := query("SELECT id, name FROM t WHERE id = 1", first.args...)
				if err != nil {
					return err
				}
				if got := rawRows(t, rows); len(got) != 1 {
					t.Errorf("first query: %v", got)
				}
				if n := inTx(query); n != 1 {
					t.Errorf("after the first query @@in_transaction = %d, want 1", n)
				}
				rows, err = query("SELECT id, name FROM t WHERE id < 3 ORDER BY id; SELECT id, name FROM t WHERE id = 3")
				if err != nil {
					return err
				}
				defer rows.Close()
				sets := rows.(driver.RowsNextResultSet)
				var got [][][]any
				for {
					var set [][]any
					vals := make([]driver.Value, 2)
					for rows.Next(vals) == nil {
						set = append(set, []any{vals[0], vals[1]})
					}
					got = append(got, set)
					if !sets.HasNextResultSet() || sets.NextResultSet() != nil {
						break
					}
				}
				if len(got) != 2 || len(got[0]) != 2 || len(got[1]) != 1 || got[1][0][1] != nil {
					t.Errorf("two statements: %v, want rows 1 and 2, then 3", got)
				}
				if _, err := query("INSERT INTO t VALUES (4, 'd')"); err == nil {
					t.Error("an INSERT in the raw read succeeded: the transaction is not read-only")
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			err = db.RawReadTx(ctx, func(query storage.RawQuery) error {
				if n := inTx(query); n != 1 {
					t.Errorf("the next read's first query: @@in_transaction = %d, want 1", n)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			var n int64
			if err := db.QueryRowContext(ctx, "SELECT @@in_transaction").Scan(&n); err != nil || n != 0 {
				t.Errorf("after RawReadTx: @@in_transaction %d (%v), want 0", n, err)
			}
		})
	}
	// storage.LastRead: the script ends the transaction itself (no
	// ROLLBACK after fn: the session's Com_rollback grows by the script's
	// one), also as the first query; when fn fails in a script that
	// stopped before its ROLLBACK, RawReadTx still ends the transaction.
	rollbacks := func() int64 {
		var name string
		var n int64
		if err := db.QueryRowContext(ctx, "SHOW SESSION STATUS LIKE 'Com_rollback'").Scan(&name, &n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	// A failing statement is seen either by fn (it reads that result)
	// or only by Close (it does not).
	for _, tc := range []struct {
		name, script string
		first        bool
		fail         bool // fn reads the second result and fails
	}{
		{"last after another", "SELECT id FROM t WHERE id = 3", false, false},
		{"last and first", "SELECT id FROM t WHERE id = 3", true, false},
		{"last fails, fn sees it", "SELECT id FROM t WHERE id = 3; SELECT nosuchcolumn FROM t", false, true},
		{"last fails unread", "SELECT id FROM t WHERE id = 3; SELECT nosuchcolumn FROM t", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := rollbacks()
			err := db.RawReadTx(ctx, func(query storage.RawQuery) error {
				if !tc.first {
					rows, err := query("SELECT 1")
					if err != nil {
						return err
					}
					rawRows(t, rows)
				}
				rows, err := query(tc.script, storage.LastRead)
				if err != nil {
					return err
				}
				defer rows.Close()
				vals := make([]driver.Value, 1)
				if err := rows.Next(vals); err != nil || vals[0] != int64(3) {
					return fmt.Errorf("row %v: %v", vals, err)
				}
				if tc.fail {
					next := rows.(driver.RowsNextResultSet)
					if err := next.NextResultSet(); err != nil {
						return err
					}
					return rows.Next(vals)
				}
				return nil
			})
			if tc.fail != (err != nil) {
				t.Fatalf("RawReadTx: %v, want failure %v", err, tc.fail)
			}
			var n int64
			if err := db.QueryRowContext(ctx, "SELECT @@in_transaction").Scan(&n); err != nil || n != 0 {
				t.Errorf("after RawReadTx: @@in_transaction %d (%v), want 0", n, err)
			}
			// SHOW SESSION STATUS counts itself out of Com_rollback.
			if got := rollbacks() - before; got != 1 {
				t.Errorf("%d ROLLBACKs, want 1", got)
			}
		})
	}
}
