package placementdb

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"slices"

	"github.com/jmoiron/sqlx"

	"github.com/rpctl/rpctl/inventory"
	"github.com/rpctl/rpctl/migrate"
	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/internal/sqlutil"
)

// SwitchAllocations implements migrate.AllocationReader: every allocation
// of the consumers holding anything on the tree providers, and the summed
// usage and the inventories of the target providers.
func (s *Store) SwitchAllocations(ctx context.Context, tree, targets []string) ([]migrate.AllocationRow, map[[2]string]int64, map[[2]string]inventory.Inventory, error) {
	db := s.db
	var rows []migrate.AllocationRow
	usage := map[[2]string]int64{}
	invs := map[[2]string]inventory.Inventory{}
	err := db.ReadTx(ctx, func(tx *sqlx.Tx) error {
		rows = nil
		clear(usage)
		clear(invs)
		if err := sqlutil.SelectIn(ctx, db, tx, `SELECT a.consumer_id, rp.uuid, rc.name, a.used FROM allocations a
			JOIN resource_providers rp ON rp.id = a.resource_provider_id JOIN resource_classes rc ON rc.id = a.resource_class_id
			WHERE a.consumer_id IN (SELECT a2.consumer_id FROM allocations a2 JOIN resource_providers rp2 ON rp2.id = a2.resource_provider_id WHERE rp2.uuid IN (%s))
			ORDER BY a.consumer_id, rp.uuid, rc.name`, tree, func(r *sql.Rows) error {
			var a migrate.AllocationRow
			if err := r.Scan(&a.Consumer, &a.Provider, &a.Class, &a.Used); err != nil {
				return err
			}
			rows = append(rows, a)
			return nil
		}); err != nil {
			return err
		}
		if err := sqlutil.SelectIn(ctx, db, tx, `SELECT rp.uuid, rc.name, SUM(a.used) FROM allocations a
			JOIN resource_providers rp ON rp.id = a.resource_provider_id JOIN resource_classes rc ON rc.id = a.resource_class_id
			WHERE rp.uuid IN (%s) GROUP BY rp.uuid, rc.name`, targets, func(r *sql.Rows) error {
			var p, c string
			var n int64
			if err := r.Scan(&p, &c, &n); err != nil {
				return err
			}
			usage[[2]string{p, c}] = n
			return nil
		}); err != nil {
			return err
		}
		return sqlutil.SelectIn(ctx, db, tx, `SELECT rp.uuid, rc.name, i.total, i.reserved, i.min_unit, i.max_unit, i.step_size, i.allocation_ratio FROM inventories i
			JOIN resource_providers rp ON rp.id = i.resource_provider_id JOIN resource_classes rc ON rc.id = i.resource_class_id
			WHERE rp.uuid IN (%s)`, targets, func(r *sql.Rows) error {
			var p, c string
			var v inventory.Inventory
			var ratio sql.NullFloat64
			if err := r.Scan(&p, &c, &v.Total, &v.Reserved, &v.MinUnit, &v.MaxUnit, &v.StepSize, &ratio); err != nil {
				return err
			}
			if f := db.FloatPtr(ratio); f != nil {
				v.AllocationRatio = *f
			}
			invs[[2]string{p, c}] = v
			return nil
		})
	})
	if err != nil {
		return nil, nil, nil, err
	}
	return rows, usage, invs, nil
}

// applyMoves carries a node's allocations to their new providers inside
// the node's transaction, before its emptied inventories are deleted: each
// move must find the allocation exactly as planned (else the node is
// re-read and re-planned), and the consumers' and providers' generations
// go up as a PUT /allocations would move them.
func applyMoves(ctx context.Context, db *storage.DB, tx *sqlx.Tx, ids *migrate.PlacementIDs, moves []migrate.AllocationMove, provID map[string]int64) error {
	if len(moves) == 0 {
		return nil
	}
	now := db.Now()
	id := func(uuid string) (int64, error) {
		if v, ok := provID[uuid]; ok {
			return v, nil
		}
		v, _, err := providerIDs(ctx, db, tx, uuid)
		if err == nil {
			provID[uuid] = v
		}
		return v, err
	}
	type bound struct {
		to, class int64
	}
	type resolved struct {
		mv       migrate.AllocationMove
		from, to int64
		class    int64
	}
	var rs []resolved
	for _, mv := range moves {
		from, err := id(mv.From)
		if err != nil {
			return err
		}
		to, err := id(mv.To)
		if err != nil {
			return err
		}
		cid, ok := ids.Classes[mv.Class]
		if !ok {
			return db.Errorf("resource class %s does not exist", mv.Class)
		}
		rs = append(rs, resolved{mv, from, to, cid})
	}
	// The providers' generations go up first, in id order: the row locks
	// make writers that aim at the same provider (a pool) wait for each
	// other, so that each one's usage check below sees the others' moves.
	touched := map[int64]bool{}
	for _, r := range rs {
		touched[r.from], touched[r.to] = true, true
	}
	for _, p := range slices.Sorted(maps.Keys(touched)) {
		if _, err := tx.ExecContext(ctx, db.Rebind(`UPDATE resource_providers SET generation = generation + 1 WHERE id = ?`), p); err != nil {
			return db.Errorf("bump provider generation: %w", storage.CleanError(err))
		}
	}
	consumers := map[string]bool{}
	limits := map[bound]int64{}
	names := map[bound]string{}
	for _, r := range rs {
		mv := r.mv
		res, err := tx.ExecContext(ctx, db.Rebind(`UPDATE allocations SET resource_provider_id = ?, updated_at = ? WHERE consumer_id = ? AND resource_provider_id = ? AND resource_class_id = ? AND used = ?`),
			r.to, now, mv.Consumer, r.from, r.class, mv.Used)
		if err != nil {
			return db.Errorf("move allocation of %s: %w", mv.Consumer, storage.CleanError(err))
		}
		if n, err := res.RowsAffected(); err != nil || n != 1 {
			return fmt.Errorf("%w: the %s allocation of consumer %s on %s changed", migrate.ErrGenerationConflict, mv.Class, mv.Consumer, mv.From)
		}
		consumers[mv.Consumer] = true
		limits[bound{r.to, r.class}] = mv.Limit
		names[bound{r.to, r.class}] = mv.Class + " on " + mv.To
	}
	// A locking read: on MySQL it sees what other transactions committed
	// after this one's snapshot was taken.
	lock := ""
	if db.IsMySQL() {
		lock = " LOCK IN SHARE MODE"
	}
	for b, limit := range limits {
		var used int64
		if err := tx.GetContext(ctx, &used, db.Rebind(`SELECT COALESCE(SUM(used), 0) FROM allocations WHERE resource_provider_id = ? AND resource_class_id = ?`+lock), b.to, b.class); err != nil {
			return db.Errorf("read usage: %w", storage.CleanError(err))
		}
		if used > limit {
			return fmt.Errorf("%w: moved allocations would use %d of %s, more than the %d planned", migrate.ErrGenerationConflict, used, names[b], limit)
		}
	}
	for c := range consumers {
		if _, err := tx.ExecContext(ctx, db.Rebind(`UPDATE consumers SET generation = generation + 1, updated_at = ? WHERE uuid = ?`), now, c); err != nil {
			return db.Errorf("bump consumer %s: %w", c, storage.CleanError(err))
		}
	}
	return nil
}

// removeAggregates takes a provider out of aggregates (a node leaving a
// shared-storage pool).
func removeAggregates(ctx context.Context, db *storage.DB, tx *sqlx.Tx, provider int64, aggs []string) error {
	for _, a := range aggs {
		if _, err := tx.ExecContext(ctx, db.Rebind(`DELETE FROM resource_provider_aggregates WHERE resource_provider_id = ? AND aggregate_id IN (SELECT id FROM placement_aggregates WHERE uuid = ?)`), provider, a); err != nil {
			return db.Errorf("leave aggregate %s: %w", a, storage.CleanError(err))
		}
	}
	return nil
}
