package sqlutil

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/rpctl/rpctl/storage"
)

// MaxPlaceholders bounds one INSERT's bound parameters: SQLite's default
// SQLITE_MAX_VARIABLE_NUMBER is 32766 and MySQL's prepared-statement limit
// 65535. MaxBatchRows is what measured best: 100,000 realistic compute nodes
// (230 MB of NUMA JSON) went into MariaDB 10.11 in 14 s with 100-row batches
// against 24 s with 500-row ones.
const (
	MaxPlaceholders = 30000
	MaxBatchRows    = 100
)

// Inserter writes rows of one table in multi-row INSERTs. A statement for a
// full batch is prepared once and reused, since go-sql-driver otherwise
// prepares, executes and closes it for every call: three round trips each.
type Inserter struct {
	db    *storage.DB
	tx    *sqlx.Tx
	table string
	cols  []string
	rows  int // rows per full batch
	full  *sql.Stmt
	args  []any
	n     int // rows buffered in args
}

func NewInserter(db *storage.DB, tx *sqlx.Tx, table string, cols ...string) *Inserter {
	rows := min(MaxBatchRows, MaxPlaceholders/len(cols))
	return &Inserter{db: db, tx: tx, table: table, cols: cols, rows: rows, args: make([]any, 0, rows*len(cols))}
}

func (w *Inserter) query(rows int) string {
	var b strings.Builder
	quoted := make([]string, len(w.cols))
	for i, c := range w.cols {
		// Backticks quote in both MySQL and SQLite; services.binary and
		// flavor_extra_specs.key are reserved words in MySQL.
		quoted[i] = "`" + c + "`"
	}
	fmt.Fprintf(&b, "INSERT INTO %s (%s) VALUES ", w.table, strings.Join(quoted, ", "))
	one := "(" + strings.TrimSuffix(strings.Repeat("?, ", len(w.cols)), ", ") + ")"
	for i := 0; i < rows; i++ {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(one)
	}
	return w.db.Rebind(b.String())
}

// add buffers one row; its values must be in column order.
func (w *Inserter) Add(ctx context.Context, vals ...any) error {
	if len(vals) != len(w.cols) {
		panic(fmt.Sprintf("insert into %s: %d values for %d columns", w.table, len(vals), len(w.cols)))
	}
	w.args = append(w.args, vals...)
	w.n++
	if w.n < w.rows {
		return nil
	}
	if w.full == nil {
		st, err := w.tx.PrepareContext(ctx, w.query(w.rows))
		if err != nil {
			return w.db.Errorf("insert into %s: %w", w.table, storage.CleanError(err))
		}
		w.full = st
	}
	if _, err := w.full.ExecContext(ctx, w.args...); err != nil {
		return w.db.Errorf("insert into %s: %w", w.table, storage.CleanError(err))
	}
	w.args, w.n = w.args[:0], 0
	return nil
}

// flush writes the rows still buffered and releases the statement.
func (w *Inserter) Flush(ctx context.Context) error {
	if w.full != nil {
		defer w.full.Close()
	}
	if w.n == 0 {
		return nil
	}
	if _, err := w.tx.ExecContext(ctx, w.query(w.n), w.args...); err != nil {
		return w.db.Errorf("insert into %s: %w", w.table, storage.CleanError(err))
	}
	w.args, w.n = w.args[:0], 0
	return nil
}

// Ptr dereferences optional values into driver arguments (nil for NULL).
func Ptr[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

// InsertAll writes rows into table through one Inserter; vals gives a row's
// values in the order of cols.
func InsertAll[T any](ctx context.Context, db *storage.DB, tx *sqlx.Tx, table string, cols []string, rows []T, vals func(*T) []any) error {
	w := NewInserter(db, tx, table, cols...)
	for i := range rows {
		if err := w.Add(ctx, vals(&rows[i])...); err != nil {
			return err
		}
	}
	return w.Flush(ctx)
}

// ClearTables deletes every row of tables, in their order.
func ClearTables(ctx context.Context, db *storage.DB, tx *sqlx.Tx, tables ...string) error {
	for _, t := range tables {
		if _, err := tx.ExecContext(ctx, "DELETE FROM "+t); err != nil {
			return db.Errorf("clear %s: %w", t, storage.CleanError(err))
		}
	}
	return nil
}

// CountRows counts the rows of a table, for summaries.
func CountRows(ctx context.Context, db *storage.DB, table string) (int, error) {
	var n int
	if err := db.GetContext(ctx, &n, "SELECT COUNT(*) FROM "+table); err != nil {
		return 0, db.Errorf("count %s: %w", table, storage.CleanError(err))
	}
	return n, nil
}

func TimePtr(t sql.NullTime) *time.Time {
	if !t.Valid {
		return nil
	}
	u := t.Time.UTC()
	return &u
}

func IntPtr(v sql.NullInt64) *int64 {
	if !v.Valid {
		return nil
	}
	x := v.Int64
	return &x
}

func StrPtr(v sql.NullString) *string {
	if !v.Valid {
		return nil
	}
	x := v.String
	return &x
}
