package storage

import (
	"context"
	"database/sql"
	"errors"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jmoiron/sqlx"
)

// The dialect of an opened database: how its columns take times and
// floats, how it locks and quotes, and how it reports a duplicate key. The
// per-database packages below storage/ write their SQL with these.

// TimeArg binds a datetime. SQLite gets the text SQLAlchemy writes
// ("2006-01-02 15:04:05.000000"), so that rows rpctl writes and rows Nova
// writes into a SQLite database read back the same way.
func (db *DB) TimeArg(t *time.Time) any {
	if t == nil {
		return nil
	}
	u := t.UTC()
	if db.IsMySQL() {
		return u
	}
	return u.Format("2006-01-02 15:04:05.000000")
}

// FloatPtr reads an allocation ratio. MySQL's FLOAT is single precision: a
// stored 1.1 can come back as 1.100000023841858 (binary protocol, or a
// server that prints full precision), so MySQL values are rounded to the
// shortest decimal that is the same float32, which is what was written.
func (db *DB) FloatPtr(v sql.NullFloat64) *float64 {
	if !v.Valid {
		return nil
	}
	x := v.Float64
	if db.IsMySQL() && !math.IsInf(x, 0) && !math.IsNaN(x) && math.Abs(x) < math.MaxFloat32 {
		x, _ = strconv.ParseFloat(strconv.FormatFloat(x, 'g', -1, 32), 64)
	}
	return &x
}

// IsDuplicate reports a unique-key violation.
func IsDuplicate(err error) bool {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number == 1062
	}
	// Errors that went through CleanError keep only their text.
	return err != nil && (strings.Contains(err.Error(), "UNIQUE constraint failed") || strings.Contains(err.Error(), "MySQL error 1062"))
}

// Now is the current time as Nova's and Placement's created_at/updated_at
// columns take it on this database.
func (db *DB) Now() any {
	t := time.Now().UTC().Truncate(time.Second)
	return db.TimeArg(&t)
}

// ForUpdate locks the rows a write reads (MySQL); SQLite has one writer.
func (db *DB) ForUpdate() string {
	if db.IsMySQL() {
		return " FOR UPDATE"
	}
	return ""
}

// QuoteKey quotes the column named key, a reserved word in MySQL.
func (db *DB) QuoteKey() string {
	if db.IsMySQL() {
		return "`key`"
	}
	return `"key"`
}

// ReadTx runs fn in a read-only transaction; the snapshot is what makes the
// bulk queries agree with each other. Like Tx, a Retryable failure (on a
// Galera node: a causality wait that timed out, a node not ready) runs the
// whole of fn again, so fn must start from scratch each time it is called.
func (db *DB) ReadTx(ctx context.Context, fn func(tx *sqlx.Tx) error) error {
	return Retry(ctx, func() error { return db.readTx1(ctx, fn) })
}

func (db *DB) readTx1(ctx context.Context, fn func(tx *sqlx.Tx) error) error {
	opts := &sql.TxOptions{ReadOnly: db.IsMySQL()}
	tx, err := db.BeginTxx(ctx, opts)
	if err != nil {
		return db.Errorf("begin transaction: %w", CleanError(err))
	}
	defer tx.Rollback()
	return fn(tx)
}

// NullString is a helper for optional text columns.
func NullString(s sql.NullString) string {
	if s.Valid {
		return s.String
	}
	return ""
}

// Float reads a single-precision FLOAT column as the decimal MySQL prints
// (what PyMySQL hands Placement); NULL reads as 0.
func (db *DB) Float(v sql.NullFloat64) float64 {
	if f := db.FloatPtr(v); f != nil {
		return *f
	}
	return 0
}
