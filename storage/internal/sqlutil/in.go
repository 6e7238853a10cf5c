package sqlutil

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/go-sql-driver/mysql"
	"github.com/jmoiron/sqlx"
	"github.com/rpctl/rpctl/storage"
)

// MaxInList bounds the uuids of one IN (...) list.
const MaxInList = 1000

// SelectIn runs q (with one %s for the IN list) over vals in chunks.
func SelectIn(ctx context.Context, db *storage.DB, tx *sqlx.Tx, q string, vals []string, scan func(*sql.Rows) error) error {
	for start := 0; start < len(vals); start += MaxInList {
		chunk := vals[start:min(start+MaxInList, len(vals))]
		args := make([]any, len(chunk))
		for i, v := range chunk {
			args[i] = v
		}
		rows, err := tx.QueryContext(ctx, db.Rebind(fmt.Sprintf(q, InList(len(chunk)))), args...)
		if err != nil {
			return db.Errorf("%s: %w", FirstWords(q), storage.CleanError(err))
		}
		for rows.Next() {
			if err := scan(rows); err != nil {
				rows.Close()
				return db.Errorf("%s: %w", FirstWords(q), storage.CleanError(err))
			}
		}
		if err := rows.Close(); err != nil {
			return db.Errorf("%s: %w", FirstWords(q), storage.CleanError(err))
		}
	}
	return nil
}

// ExecIn runs a statement (with one %s for the IN list, after the lead
// arguments) over vals in chunks.
func ExecIn(ctx context.Context, db *storage.DB, tx *sqlx.Tx, q string, lead []any, vals []string) error {
	for start := 0; start < len(vals); start += MaxInList {
		chunk := vals[start:min(start+MaxInList, len(vals))]
		args := append([]any{}, lead...)
		for _, v := range chunk {
			args = append(args, v)
		}
		if _, err := tx.ExecContext(ctx, db.Rebind(fmt.Sprintf(q, InList(len(chunk)))), args...); err != nil {
			return db.Errorf("%s: %w", FirstWords(q), storage.CleanError(err))
		}
	}
	return nil
}

func FirstWords(q string) string {
	f := strings.Fields(q)
	return strings.ToLower(strings.Join(f[:min(4, len(f))], " "))
}

// InList is an IN list of n placeholders; none matches nothing.
func InList(n int) string {
	if n == 0 {
		return "NULL"
	}
	return strings.TrimSuffix(strings.Repeat("?,", n), ",")
}

func NameIDs(ctx context.Context, db *storage.DB, table, col string) (map[string]int64, error) {
	rows, err := db.QueryContext(ctx, "SELECT id, "+col+" FROM "+table)
	if err != nil {
		return nil, db.Errorf("read %s: %w", table, storage.CleanError(err))
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var id int64
		var n sql.NullString
		if err := rows.Scan(&id, &n); err != nil {
			return nil, db.Errorf("read %s: %w", table, storage.CleanError(err))
		}
		if n.Valid {
			out[n.String] = id
		}
	}
	if err := rows.Err(); err != nil {
		return nil, db.Errorf("read %s: %w", table, storage.CleanError(err))
	}
	return out, nil
}

func InsertIgnoringDuplicate(ctx context.Context, db *storage.DB, table, col, val string) error {
	_, err := db.ExecContext(ctx, db.Rebind("INSERT INTO "+table+" (created_at, "+col+") VALUES (?, ?)"), db.Now(), val)
	if err != nil && !storage.IsDuplicate(err) {
		return db.Errorf("create %s %s: %w", table, val, storage.CleanError(err))
	}
	return nil
}

// badValueErrors are MySQL's errors for a value that does not fit its
// column: 1264 out of range, 1265 truncated, 1292 incorrect value, 1366
// incorrect string or integer value, 1406 data too long, 1048 NULL in a NOT
// NULL column.
var badValueErrors = []uint16{1264, 1265, 1292, 1366, 1406, 1048}

func IsBadValue(err error) bool {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return slices.Contains(badValueErrors, me.Number)
	}
	for _, n := range badValueErrors {
		if err != nil && strings.Contains(err.Error(), fmt.Sprintf("MySQL error %d:", n)) {
			return true
		}
	}
	return false
}

// ExecInline runs q with its ? placeholders replaced by literals when every
// argument has one on MySQL (one round trip instead of a prepare and an
// execute), else with bound arguments.
func ExecInline(ctx context.Context, db *storage.DB, ex sqlx.ExecerContext, q string, args ...any) (sql.Result, error) {
	q, args = Inline(db, q, args...)
	return ex.ExecContext(ctx, q, args...)
}

// Inline is q with args written in as literals where it can be (one round
// trip on MySQL instead of a prepare, an execute and a close), else q
// rebound for db with args.
func Inline(db *storage.DB, q string, args ...any) (string, []any) {
	if lit, ok := inline(db, q, args); ok {
		return lit, nil
	}
	return db.Rebind(q), args
}

func inline(db *storage.DB, q string, args []any) (string, bool) {
	if !db.IsMySQL() {
		return "", false
	}
	b := make([]byte, 0, len(q)+len(args)*40)
	i := 0
	for _, a := range args {
		j := strings.IndexByte(q[i:], '?')
		if j < 0 {
			return "", false
		}
		b = append(b, q[i:i+j]...)
		i += j + 1
		var ok bool
		if b, ok = AppendLiteral(b, a); !ok {
			return "", false
		}
	}
	if strings.IndexByte(q[i:], '?') >= 0 {
		return "", false
	}
	return string(append(b, q[i:]...)), true
}

func SQLStr(s *string) sql.NullString {
	if s == nil {
		return sql.NullString{}
	}
	return sql.NullString{String: *s, Valid: true}
}
