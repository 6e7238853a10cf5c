package placementdb

import (
	"context"
	"fmt"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/rpctl/rpctl/candidates"
	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/internal/sqlutil"
)

// SyntheticConsumerUUID owns the allocations WriteSyntheticPlacement writes for
// a ModelInput's usages, so that Placement sees them as one instance's.
const SyntheticConsumerUUID = "00000000-0000-4000-8000-0000000c0de5"

// WriteSyntheticPlacement bulk-writes a synthetic cloud (benchmark data sets) into
// an initialised Placement database whose resource_providers table is empty,
// in one transaction: what the real placement-api would have stored had the
// providers come through its REST API, thousands of times faster. Traits,
// custom resource classes and aggregates are matched by name, so the input's
// ids need not agree with the database's; provider ids are kept.
func WriteSyntheticPlacement(ctx context.Context, db *storage.DB, in *candidates.ModelInput) error {
	var n int
	if err := db.GetContext(ctx, &n, `SELECT COUNT(*) FROM resource_providers`); err != nil {
		return db.Errorf("count resource_providers: %w", storage.CleanError(err))
	}
	if n > 0 {
		return db.Errorf("resource_providers already has %d rows; synthetic clouds are only written into an empty Placement", n)
	}
	now := time.Now().UTC().Truncate(time.Second)
	parent := make(map[int64]int64, len(in.Providers))
	for _, p := range in.Providers {
		parent[p.ID] = p.ParentID
	}
	rootOf := func(id int64) (int64, error) {
		for range len(in.Providers) + 1 {
			p, ok := parent[id]
			if !ok {
				return 0, fmt.Errorf("unknown parent provider id %d", id)
			}
			if p == 0 {
				return id, nil
			}
			id = p
		}
		return 0, fmt.Errorf("provider id %d is in a parent cycle", id)
	}
	return db.Tx(ctx, func(tx *sqlx.Tx) error {
		rcIDs, err := syntheticNamedIDs(ctx, db, tx, "resource_classes", "name", in.ResourceClasses, now, true)
		if err != nil {
			return err
		}
		traitIDs, err := syntheticNamedIDs(ctx, db, tx, "traits", "name", in.Traits, now, false)
		if err != nil {
			return err
		}
		aggIDs, err := syntheticNamedIDs(ctx, db, tx, "placement_aggregates", "uuid", in.Aggregates, now, false)
		if err != nil {
			return err
		}
		rc := func(id int64) int64 {
			if v, ok := rcIDs[id]; ok {
				return v
			}
			return id // a standard class: its id is its os-resource-classes index
		}

		w := sqlutil.NewInserter(db, tx, "resource_providers", "created_at", "id", "uuid", "name", "generation", "root_provider_id", "parent_provider_id")
		for _, p := range in.Providers {
			root, err := rootOf(p.ID)
			if err != nil {
				return db.Errorf("provider %s: %w", p.UUID, err)
			}
			var par any
			if p.ParentID != 0 {
				par = p.ParentID
			}
			if err := w.Add(ctx, now, p.ID, p.UUID, p.Name, p.Generation, root, par); err != nil {
				return err
			}
		}
		if err := w.Flush(ctx); err != nil {
			return err
		}
		w = sqlutil.NewInserter(db, tx, "inventories", "created_at", "resource_provider_id", "resource_class_id", "total", "reserved", "min_unit", "max_unit", "step_size", "allocation_ratio")
		for _, r := range in.Inventories {
			if err := w.Add(ctx, now, r.ProviderID, rc(r.ResourceClassID), r.Total, r.Reserved, r.MinUnit, r.MaxUnit, r.StepSize, r.AllocationRatio); err != nil {
				return err
			}
		}
		if err := w.Flush(ctx); err != nil {
			return err
		}
		w = sqlutil.NewInserter(db, tx, "resource_provider_traits", "created_at", "trait_id", "resource_provider_id")
		for _, r := range in.ProviderTraits {
			if err := w.Add(ctx, now, traitIDs[r.OtherID], r.ProviderID); err != nil {
				return err
			}
		}
		if err := w.Flush(ctx); err != nil {
			return err
		}
		w = sqlutil.NewInserter(db, tx, "resource_provider_aggregates", "created_at", "resource_provider_id", "aggregate_id")
		for _, r := range in.ProviderAggregates {
			if err := w.Add(ctx, now, r.ProviderID, aggIDs[r.OtherID]); err != nil {
				return err
			}
		}
		if err := w.Flush(ctx); err != nil {
			return err
		}
		if len(in.Usages) == 0 {
			return nil
		}
		// Placement's allocations belong to a consumer of a project and user.
		var ids [2]int64
		for i, table := range []string{"projects", "users"} {
			res, err := tx.ExecContext(ctx, db.Rebind(`INSERT INTO `+table+` (created_at, external_id) VALUES (?, ?)`), now, "rpctl-synthetic")
			if err != nil {
				return db.Errorf("insert into %s: %w", table, storage.CleanError(err))
			}
			if ids[i], err = res.LastInsertId(); err != nil {
				return db.Errorf("insert into %s: %w", table, storage.CleanError(err))
			}
		}
		if _, err := tx.ExecContext(ctx, db.Rebind(`INSERT INTO consumers (created_at, uuid, project_id, user_id, generation) VALUES (?, ?, ?, ?, 1)`),
			now, SyntheticConsumerUUID, ids[0], ids[1]); err != nil {
			return db.Errorf("insert into consumers: %w", storage.CleanError(err))
		}
		w = sqlutil.NewInserter(db, tx, "allocations", "created_at", "resource_provider_id", "consumer_id", "resource_class_id", "used")
		for _, r := range in.Usages {
			if err := w.Add(ctx, now, r.ProviderID, SyntheticConsumerUUID, rc(r.ResourceClassID), r.Used); err != nil {
				return err
			}
		}
		return w.Flush(ctx)
	})
}

// syntheticNamedIDs inserts the rows of an (id, name) table that are missing by
// name and maps the input's ids to the database's. Custom resource classes
// take ids from 10000 up, as Placement numbers them.
func syntheticNamedIDs(ctx context.Context, db *storage.DB, tx *sqlx.Tx, table, col string, rows []candidates.NamedRow, now time.Time, customRC bool) (map[int64]int64, error) {
	have := map[string]int64{}
	next := int64(CustomResourceClassMinID)
	read := func() error {
		rs, err := tx.QueryContext(ctx, fmt.Sprintf(`SELECT id, %s FROM %s`, col, table))
		if err != nil {
			return db.Errorf("read %s: %w", table, storage.CleanError(err))
		}
		defer rs.Close()
		for rs.Next() {
			var id int64
			var name string
			if err := rs.Scan(&id, &name); err != nil {
				return db.Errorf("read %s: %w", table, storage.CleanError(err))
			}
			have[name] = id
			next = max(next, id+1)
		}
		if err := rs.Err(); err != nil {
			return db.Errorf("read %s: %w", table, storage.CleanError(err))
		}
		return nil
	}
	if err := read(); err != nil {
		return nil, err
	}
	var cols []string
	if customRC {
		cols = []string{"created_at", "id", col}
	} else {
		cols = []string{"created_at", col}
	}
	w := sqlutil.NewInserter(db, tx, table, cols...)
	added := false
	for _, r := range rows {
		if _, ok := have[r.Name]; ok {
			continue
		}
		var err error
		if customRC {
			err = w.Add(ctx, now, next, r.Name)
			have[r.Name] = next
			next++
		} else {
			err = w.Add(ctx, now, r.Name)
			added = true
			have[r.Name] = -1 // read back below, once the database has numbered it
		}
		if err != nil {
			return nil, err
		}
	}
	if err := w.Flush(ctx); err != nil {
		return nil, err
	}
	if added {
		// Read back the ids the database gave the new rows.
		if err := read(); err != nil {
			return nil, err
		}
	}
	out := make(map[int64]int64, len(rows))
	for _, r := range rows {
		out[r.ID] = have[r.Name]
	}
	return out, nil
}
