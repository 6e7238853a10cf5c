package storage

import (
	"context"
	"database/sql"

	"github.com/jmoiron/sqlx"
)

// The helpers below let storage/placementdb (the inventory domain's
// database store) write timestamps, read FLOAT columns and recognise
// unique-key violations exactly as the rest of storage does.

// Now is the current time as Placement's created_at/updated_at columns take
// it on this database.
func (db *DB) Now() any { return db.now() }

// Float reads a single-precision FLOAT column as the decimal MySQL prints
// (what PyMySQL hands Placement); NULL reads as 0.
func (db *DB) Float(v sql.NullFloat64) float64 {
	if f := db.floatPtr(v); f != nil {
		return *f
	}
	return 0
}

// IsDuplicate reports a unique-key violation.
func IsDuplicate(err error) bool { return isDuplicate(err) }

// ReadTx runs fn in one read-only snapshot.
func (db *DB) ReadTx(ctx context.Context, fn func(tx *sqlx.Tx) error) error {
	return db.placementReadTx(ctx, fn)
}
