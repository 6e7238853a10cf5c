package sqlutil

import (
	"context"
	"database/sql"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/rpctl/rpctl/storage"
)

// The inventory migration writes 100,000 nodes as a few multi-row
// statements per group. go-sql-driver without interpolateParams sends a
// statement with bound arguments as prepare, execute and close: two round
// trips and a server-side parse per statement, whatever its size. Values
// whose SQL text means the same in every sql_mode are therefore written as
// literals (one round trip); anything else keeps bound parameters.

// MaxLiteralSQL bounds one literal statement well under the 4 MiB
// max_allowed_packet of the oldest servers Placement supports.
const MaxLiteralSQL = 1 << 20

// AppendLiteral appends v as SQL text, or reports false when v has no
// representation that reads the same with and without NO_BACKSLASH_ESCAPES.
func AppendLiteral(b []byte, v any) ([]byte, bool) {
	switch x := v.(type) {
	case nil:
		return append(b, "NULL"...), true
	case int64:
		return strconv.AppendInt(b, x, 10), true
	case int:
		return strconv.AppendInt(b, int64(x), 10), true
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return b, false
		}
		// The exponent makes MySQL read a DOUBLE, as a bound float64 is,
		// not a DECIMAL that would round differently into a FLOAT column.
		return strconv.AppendFloat(b, x, 'e', -1, 64), true
	case string:
		if strings.ContainsAny(x, "\\\x00") {
			return b, false
		}
		b = append(b, '\'')
		b = append(b, strings.ReplaceAll(x, "'", "''")...)
		return append(b, '\''), true
	case time.Time:
		b = append(b, '\'')
		b = x.UTC().AppendFormat(b, "2006-01-02 15:04:05.999999")
		return append(b, '\''), true
	}
	return b, false
}

// RowInsert collects the rows of one multi-row INSERT.
type RowInsert struct {
	db    *storage.DB
	table string
	cols  []string
	args  []any
}

func NewRowInsert(db *storage.DB, table string, cols ...string) *RowInsert {
	return &RowInsert{db: db, table: table, cols: cols}
}

func (w *RowInsert) Add(vals ...any) {
	if len(vals) != len(w.cols) {
		panic("insert into " + w.table + ": wrong number of values")
	}
	w.args = append(w.args, vals...)
}

func (w *RowInsert) Rows() int { return len(w.args) / len(w.cols) }

func (w *RowInsert) Head() string {
	return "INSERT INTO " + w.table + " (`" + strings.Join(w.cols, "`, `") + "`) VALUES "
}

// InsertChunk is one executed statement: its first auto-increment id (MySQL
// reports the first of a multi-row INSERT) and its number of rows.
type InsertChunk struct {
	First int64
	Rows  int
}

// exec writes the rows in as few statements as the size limits allow.
func (w *RowInsert) Exec(ctx context.Context, tx *sqlx.Tx) ([]InsertChunk, error) {
	n := w.Rows()
	if n == 0 {
		return nil, nil
	}
	if w.db.IsMySQL() {
		if chunks, ok, err := w.execLiteral(ctx, tx); ok || err != nil {
			return chunks, err
		}
	}
	return w.execBound(ctx, tx)
}

func (w *RowInsert) execBound(ctx context.Context, tx *sqlx.Tx) ([]InsertChunk, error) {
	n := w.Rows()
	var out []InsertChunk
	per := max(1, min(MaxPlaceholders/len(w.cols), 2000))
	one := "(" + strings.TrimSuffix(strings.Repeat("?, ", len(w.cols)), ", ") + ")"
	for lo := 0; lo < n; lo += per {
		hi := min(lo+per, n)
		q := w.Head() + strings.TrimSuffix(strings.Repeat(one+", ", hi-lo), ", ")
		res, err := tx.ExecContext(ctx, w.db.Rebind(q), w.args[lo*len(w.cols):hi*len(w.cols)]...)
		if err != nil {
			return nil, w.db.Errorf("insert into %s: %w", w.table, storage.CleanError(err))
		}
		id, _ := res.LastInsertId()
		out = append(out, InsertChunk{id, hi - lo})
	}
	return out, nil
}

func (w *RowInsert) execLiteral(ctx context.Context, tx *sqlx.Tx) ([]InsertChunk, bool, error) {
	nc := len(w.cols)
	var stmts [][]byte
	var counts []int
	head := w.Head()
	b := append(make([]byte, 0, 4096), head...)
	rows := 0
	for r := 0; r*nc < len(w.args); r++ {
		if rows > 0 {
			if len(b) > MaxLiteralSQL {
				stmts, counts = append(stmts, b), append(counts, rows)
				b, rows = append(make([]byte, 0, 4096), head...), 0
			} else {
				b = append(b, ", "...)
			}
		}
		b = append(b, '(')
		for c := 0; c < nc; c++ {
			if c > 0 {
				b = append(b, ", "...)
			}
			var ok bool
			if b, ok = AppendLiteral(b, w.args[r*nc+c]); !ok {
				return nil, false, nil
			}
		}
		b = append(b, ')')
		rows++
	}
	stmts, counts = append(stmts, b), append(counts, rows)
	out := make([]InsertChunk, 0, len(stmts))
	for i, q := range stmts {
		res, err := tx.ExecContext(ctx, string(q))
		if err != nil {
			return nil, true, w.db.Errorf("insert into %s: %w", w.table, storage.CleanError(err))
		}
		id, _ := res.LastInsertId()
		out = append(out, InsertChunk{id, counts[i]})
	}
	return out, true, nil
}

// AutoIncStep is the step between the auto-increment ids of one multi-row
// INSERT, or 0 when they need not be evenly spaced. InnoDB's "traditional"
// (0) and "consecutive" (1) lock modes allocate the ids of a simple
// multi-row INSERT as one run of auto_increment_increment steps;
// "interleaved" (2, Galera's) may interleave concurrent statements.
// SQLite reports the last rowid, not the first: the ids are read back.
func AutoIncStep(ctx context.Context, db *storage.DB) int64 {
	if !db.IsMySQL() {
		return 0
	}
	if v, ok := autoIncSteps.Load(db); ok {
		return v.(int64)
	}
	var mode, inc sql.NullInt64
	var step int64
	if err := db.QueryRowContext(ctx, `SELECT @@innodb_autoinc_lock_mode, @@auto_increment_increment`).Scan(&mode, &inc); err == nil &&
		mode.Valid && mode.Int64 <= 1 && inc.Valid && inc.Int64 >= 1 {
		step = inc.Int64
	}
	autoIncSteps.Store(db, step)
	return step
}

var autoIncSteps sync.Map // *storage.DB -> int64

// SQLInts renders ids for an IN list.
func SQLInts(ids []int64) string {
	b := make([]byte, 0, len(ids)*8)
	for i, id := range ids {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, id, 10)
	}
	return string(b)
}

// LiteralList renders strings for an IN list, or reports false when one has
// no literal that reads the same in every sql_mode.
func LiteralList(vals []string) (string, bool) {
	b := make([]byte, 0, len(vals)*40)
	for i, v := range vals {
		if i > 0 {
			b = append(b, ',')
		}
		var ok bool
		if b, ok = AppendLiteral(b, v); !ok {
			return "", false
		}
	}
	return string(b), true
}

// ForcePrimary makes MySQL find an UPDATE's rows by primary key: its
// optimizer may otherwise walk a secondary unique index (uuid) for an IN
// list or an IS NULL test, locking the gaps concurrent inserts need.
func ForcePrimary(db *storage.DB) string {
	if db.IsMySQL() {
		return " FORCE INDEX (PRIMARY)"
	}
	return ""
}
