package placementdb

import (
	"context"
	"database/sql"
	"errors"
	"strconv"

	"github.com/jmoiron/sqlx"

	"github.com/rpctl/rpctl/claims"
	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/internal/sqlutil"
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

var _ claims.BatchRemover = ClaimsLedger{}

// removalsPerScript bounds the removals of one round trip: the server runs
// a script to its end even when its client is gone, so a signal (or a
// SIGKILL) stops the removals within this many.
const removalsPerScript = 100

// RemoveConsumersFromProviders implements claims.BatchRemover with scripts
// (placement_script.go): each removal is RemoveConsumerFromProvider's
// transaction as SQL whose branches are conditions on what it read under
// its locks (session variables): the consumer's generation, whether the
// consumer holds the provider and whether it holds others; then a marker
// SELECT. Many go in one round trip; the first failure ends the batch, its
// transaction rolled back.
func (l ClaimsLedger) RemoveConsumersFromProviders(ctx context.Context, rs []claims.Removal) (int, error) {
	db := l.DB
	var c scriptConn
	if err := c.open(ctx, db); err != nil {
		if err == storage.ErrNoScripts {
			return 0, claims.ErrNoBatch
		}
		return 0, err
	}
	defer c.release(false)
	done := 0
	for done < len(rs) {
		b := make([]byte, 0, 64<<10)
		to := done
		for to < len(rs) && to-done < removalsPerScript {
			script, ok := removalScript(rs[to], to, scriptGuard(db.Galera))
			if !ok {
				break
			}
			b = append(b, script...)
			to++
		}
		if to == done {
			return done, db.Errorf("remove consumer %s: no literal for its uuid", rs[done].Consumer)
		}
		n, err := runScript(ctx, c.conn, string(b), done)
		done = n
		if err == nil {
			continue
		}
		return done, c.scriptFailed(ctx, db.Errorf("remove consumer %s: %w", rs[done].Consumer, storage.CleanError(err)))
	}
	return done, nil
}

// removalScript is r's transaction and marker k as SQL.
func removalScript(r claims.Removal, k int, g scriptGuard) ([]byte, bool) {
	u, ok := sqlutil.AppendLiteral(nil, r.Consumer)
	if !ok {
		return nil, false
	}
	p := strconv.AppendInt(nil, r.ProviderID, 10)
	b := make([]byte, 0, 1024)
	add := func(parts ...[]byte) {
		for _, x := range parts {
			b = append(b, x...)
		}
	}
	s := func(x string) []byte { return []byte(x) }
	guard := s("")
	if g {
		guard = s(" AND @@in_transaction = 1")
	}
	add(g.begin(nil), s("SET @rpctl_g = NULL, @rpctl_held = 0, @rpctl_others = 0;\n"),
		s("SELECT generation INTO @rpctl_g FROM consumers WHERE uuid = "), u, s(" FOR UPDATE;\n"),
		s("SELECT COUNT(*) INTO @rpctl_held FROM allocations WHERE consumer_id = "), u, s(" AND resource_provider_id = "), p, s(" FOR UPDATE;\n"),
		s("SELECT COUNT(*) INTO @rpctl_others FROM allocations WHERE consumer_id = "), u, s(" AND resource_provider_id <> "), p, s(" FOR UPDATE;\n"),
		// Another provider's generation goes up when the consumer keeps
		// allocations there (Nova's PUT of the rest), and so does the
		// consumer's; a consumer left without allocations goes (DELETE).
		s("UPDATE resource_providers SET generation = generation + 1 WHERE @rpctl_held > 0 AND id IN (SELECT DISTINCT resource_provider_id FROM allocations WHERE consumer_id = "), u, s(" AND resource_provider_id <> "), p, s(")"), guard, s(";\n"),
		s("UPDATE consumers SET generation = generation + 1 WHERE uuid = "), u, s(" AND generation = @rpctl_g AND @rpctl_held > 0 AND @rpctl_others > 0"), guard, s(";\n"),
		s("DELETE FROM allocations WHERE consumer_id = "), u, s(" AND resource_provider_id = "), p, s(" AND @rpctl_held > 0"), guard, s(";\n"),
		s("DELETE FROM consumers WHERE uuid = "), u, s(" AND @rpctl_held > 0 AND @rpctl_others = 0"), guard, s(";\n"))
	// A removal writes only when the consumer held the provider.
	return g.commitIf(b, k, "@rpctl_held > 0"), true
}
