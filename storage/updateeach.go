package storage

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"time"

	"github.com/jmoiron/sqlx"
)

// UpdateEach runs the UPDATE q once per key of values, in key order, in one
// transaction, with the arguments (value, updated_at = now, key), and
// returns the rows it changed: the shape of Nova's online data migrations,
// which set one column of each found row and stamp updated_at as the ORM's
// save does. what names the change in an error.
func UpdateEach[K cmp.Ordered, V any](ctx context.Context, db *DB, q, what string, values map[K]V, now time.Time) (int, error) {
	keys := slices.Sorted(maps.Keys(values))
	q = db.Rebind(q)
	n := 0
	err := db.Tx(ctx, func(tx *sqlx.Tx) error {
		n = 0
		for _, k := range keys {
			res, err := tx.ExecContext(ctx, q, values[k], db.TimeArg(&now), k)
			if err != nil {
				return db.Errorf("%s: %w", what, CleanError(err))
			}
			c, _ := res.RowsAffected()
			n += int(c)
		}
		return nil
	})
	return n, err
}
