package placementdb

import (
	"context"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/rpctl/rpctl/migrate"
	"github.com/rpctl/rpctl/storage"
)

var _ migrate.PlacementOnline = (*Store)(nil)

// SetRootProviderIDs implements migrate.PlacementOnline with
// set_root_provider_ids' statement; updated_at is stamped as SQLAlchemy's
// onupdate stamps it in a Core UPDATE. (The derived table lets MySQL read
// the table it updates.)
func (s *Store) SetRootProviderIDs(ctx context.Context, limit int, now time.Time) (int, error) {
	db := s.db
	n := 0
	err := db.Tx(ctx, func(tx *sqlx.Tx) error {
		res, err := tx.ExecContext(ctx, db.Rebind(`UPDATE resource_providers SET root_provider_id = id, updated_at = ?
			WHERE id IN (SELECT subq_1.id FROM (SELECT id FROM resource_providers WHERE root_provider_id IS NULL LIMIT ?) AS subq_1)`), db.TimeArg(&now), limit)
		if err != nil {
			return db.Errorf("set_root_provider_ids: %w", storage.CleanError(err))
		}
		k, _ := res.RowsAffected()
		n = int(k)
		return nil
	})
	return n, err
}

// CreateIncompleteConsumers implements migrate.PlacementOnline as
// create_incomplete_consumers writes: ensure_incomplete_project and
// ensure_incomplete_user (an INSERT of external_id, created_at stamped,
// when no row has it), then one INSERT … SELECT of the allocations'
// consumer ids without a consumers row, grouped by consumer_id, LIMIT
// limit (created_at stamped once for the statement, generation 0, as
// SQLAlchemy renders the columns' Python defaults into it).
//
// A duplicate key means another run (two operators, or two nodes of a
// Galera cluster) created the incomplete project, user or one of the
// consumers since this transaction read them: Placement's own function
// fails then; rpctl runs the whole transaction again (storage.DB.EnsureTx),
// whose fresh reads see the other run's rows.
func (s *Store) CreateIncompleteConsumers(ctx context.Context, project, user string, limit int, now time.Time) (int, error) {
	db := s.db
	n := 0
	err := db.EnsureTx(ctx, func(tx *sqlx.Tx) error {
		return s.createIncompleteConsumers(ctx, tx, project, user, limit, now, &n)
	})
	return n, err
}

// createIncompleteConsumers is one try of CreateIncompleteConsumers.
func (s *Store) createIncompleteConsumers(ctx context.Context, tx *sqlx.Tx, project, user string, limit int, now time.Time, n *int) error {
	db := s.db
	{
		ids := make([]int64, 2)
		for i, t := range []struct{ table, external string }{{"projects", project}, {"users", user}} {
			var found []int64
			if err := tx.SelectContext(ctx, &found, db.Rebind(`SELECT id FROM `+t.table+` WHERE external_id = ?`), t.external); err != nil {
				return db.Errorf("read %s: %w", t.table, storage.CleanError(err))
			}
			if len(found) > 0 {
				ids[i] = found[0]
				continue
			}
			res, err := tx.ExecContext(ctx, db.Rebind(`INSERT INTO `+t.table+` (external_id, created_at) VALUES (?, ?)`), t.external, db.TimeArg(&now))
			if err != nil {
				return db.Errorf("create the incomplete consumer's %s row: %w", t.table, storage.CleanError(err))
			}
			if ids[i], err = res.LastInsertId(); err != nil {
				return db.Errorf("create the incomplete consumer's %s row: %w", t.table, storage.CleanError(err))
			}
		}
		res, err := tx.ExecContext(ctx, db.Rebind(`INSERT INTO consumers (uuid, project_id, user_id, created_at, generation)
			SELECT allocations.consumer_id, ?, ?, ?, 0 FROM allocations
			LEFT OUTER JOIN consumers ON allocations.consumer_id = consumers.uuid
			WHERE consumers.id IS NULL GROUP BY allocations.consumer_id LIMIT ?`), ids[0], ids[1], db.TimeArg(&now), limit)
		if err != nil {
			return db.Errorf("create_incomplete_consumers: %w", storage.CleanError(err))
		}
		k, _ := res.RowsAffected()
		*n = int(k)
		return nil
	}
}
