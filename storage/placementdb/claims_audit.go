package placementdb

import (
	"context"
	"database/sql"
	"errors"

	"github.com/jmoiron/sqlx"
	"github.com/rpctl/rpctl/storage"
)

// ProviderExists reports whether a resource provider with uuid exists.
func (l ClaimsLedger) ProviderExists(ctx context.Context, uuid string) (bool, error) {
	p := l.DB
	var n int
	if err := p.GetContext(ctx, &n, p.Rebind(`SELECT COUNT(*) FROM resource_providers WHERE uuid = ?`), uuid); err != nil {
		return false, p.Errorf("read resource_providers: %w", storage.CleanError(err))
	}
	return n > 0, nil
}

// RemoveConsumerFromProvider takes consumer's allocations off one provider,
// leaving the rows Placement leaves when Nova's `placement audit --delete`
// does it through the API, in one transaction:
//   - the consumer also holds other providers: Nova re-PUTs its allocations
//     without this provider, so those rows go, the other providers'
//     generations and the consumer's generation go up by one;
//   - it holds only this provider: Nova DELETEs its allocations, so they go
//     and so does the consumer record (Placement drops consumers left without
//     allocations); no generation changes.
//
// It returns false, changing nothing, when the consumer no longer holds the
// provider (a re-run after an interruption).
func (l ClaimsLedger) RemoveConsumerFromProvider(ctx context.Context, consumer string, providerID int64) (bool, error) {
	p := l.DB
	removed := false
	err := p.Tx(ctx, func(tx *sqlx.Tx) error {
		removed = false // a retried transaction starts over
		var gen int64
		err := tx.GetContext(ctx, &gen, p.Rebind(`SELECT generation FROM consumers WHERE uuid = ?`+p.ForUpdate()), consumer)
		hasConsumer := err == nil
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return p.Errorf("read consumer %s: %w", consumer, storage.CleanError(err))
		}
		var provs []int64
		if err := tx.SelectContext(ctx, &provs, p.Rebind(`SELECT DISTINCT resource_provider_id FROM allocations WHERE consumer_id = ? ORDER BY resource_provider_id`+p.ForUpdate()), consumer); err != nil {
			return p.Errorf("read allocations of consumer %s: %w", consumer, storage.CleanError(err))
		}
		var others []int64
		held := false
		for _, id := range provs {
			if id == providerID {
				held = true
			} else {
				others = append(others, id)
			}
		}
		if !held {
			return nil
		}
		removed = true
		if len(others) == 0 {
			if _, err := tx.ExecContext(ctx, p.Rebind(`DELETE FROM allocations WHERE consumer_id = ?`), consumer); err != nil {
				return p.Errorf("delete allocations of consumer %s: %w", consumer, storage.CleanError(err))
			}
			if _, err := tx.ExecContext(ctx, p.Rebind(`DELETE FROM consumers WHERE uuid = ?`), consumer); err != nil {
				return p.Errorf("delete consumer %s: %w", consumer, storage.CleanError(err))
			}
			return nil
		}
		if _, err := tx.ExecContext(ctx, p.Rebind(`DELETE FROM allocations WHERE consumer_id = ? AND resource_provider_id = ?`), consumer, providerID); err != nil {
			return p.Errorf("delete allocations of consumer %s: %w", consumer, storage.CleanError(err))
		}
		q, args, err := sqlx.In(`UPDATE resource_providers SET generation = generation + 1 WHERE id IN (?)`, others)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, p.Rebind(q), args...); err != nil {
			return p.Errorf("bump provider generations: %w", storage.CleanError(err))
		}
		if hasConsumer {
			if _, err := tx.ExecContext(ctx, p.Rebind(`UPDATE consumers SET generation = generation + 1 WHERE uuid = ? AND generation = ?`), consumer, gen); err != nil {
				return p.Errorf("bump consumer %s generation: %w", consumer, storage.CleanError(err))
			}
		}
		return nil
	})
	return removed, err
}
