package placementdb

import (
	"context"

	"github.com/jmoiron/sqlx"
	"github.com/rpctl/rpctl/storage"
)

// Release removes every allocation of consumer and its consumer record in
// one transaction, as DELETE /allocations/{consumer} does (no generation
// changes). It returns false when the consumer held nothing.
func (l ClaimsLedger) Release(ctx context.Context, consumer string) (bool, error) {
	p := l.DB
	consumer = canonicalUUID(consumer)
	released := false
	err := p.Tx(ctx, func(tx *sqlx.Tx) error {
		res, err := tx.ExecContext(ctx, p.Rebind(`DELETE FROM allocations WHERE consumer_id = ?`), consumer)
		if err != nil {
			return p.Errorf("delete allocations of consumer %s: %w", consumer, storage.CleanError(err))
		}
		n, _ := res.RowsAffected()
		released = n > 0
		if !released {
			return nil
		}
		if _, err := tx.ExecContext(ctx, p.Rebind(`DELETE FROM consumers WHERE uuid = ?`), consumer); err != nil {
			return p.Errorf("delete consumer %s: %w", consumer, storage.CleanError(err))
		}
		return nil
	})
	return released, err
}
