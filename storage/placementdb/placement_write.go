package placementdb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/jmoiron/sqlx"

	"github.com/rpctl/rpctl/internal/release"
	"github.com/rpctl/rpctl/inventory"
	"github.com/rpctl/rpctl/migrate"
	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/internal/sqlutil"
	"github.com/rpctl/rpctl/storage/schema"
)

// LoadPlacementState reads every resource provider with its inventories,
// traits, aggregates and allocated classes in five queries, so that planning
// 100,000 nodes does not cost 100,000 round trips.
func LoadPlacementState(ctx context.Context, db *storage.DB) (*migrate.PlacementState, error) {
	return loadProviders(ctx, db, nil)
}

// LoadProviders reads the providers with the given uuids or names and every
// provider of their trees (to re-plan after a generation conflict).
func LoadProviders(ctx context.Context, db *storage.DB, uuids, names []string) (*migrate.PlacementState, error) {
	if len(uuids) == 0 && len(names) == 0 {
		return &migrate.PlacementState{Providers: map[string]*migrate.PProvider{}, ByName: map[string]string{}}, nil
	}
	return loadProviders(ctx, db, &providerFilter{uuids, names})
}

type providerFilter struct{ uuids, names []string }

func loadProviders(ctx context.Context, db *storage.DB, f *providerFilter) (*migrate.PlacementState, error) {
	st := &migrate.PlacementState{Providers: map[string]*migrate.PProvider{}, ByName: map[string]string{}}
	byID := map[int64]*migrate.PProvider{}
	// One snapshot, so that the five reads agree with each other.
	err := db.ReadTx(ctx, func(tx *sqlx.Tx) error {
		clear(st.Providers)
		clear(st.ByName)
		clear(byID)
		// The queries that read ratios take no bound parameters: that keeps
		// go-sql-driver on the text protocol, where FLOAT columns arrive as
		// the decimal MySQL prints.
		where := ""
		if f != nil {
			// Two indexed steps instead of one OR'ed subquery, which MySQL
			// answers with a scan of every provider and inventory.
			var roots []int64
			q := "SELECT COALESCE(root_provider_id, id) FROM resource_providers WHERE uuid IN (" + sqlutil.InList(len(f.uuids)) +
				") UNION SELECT COALESCE(root_provider_id, id) FROM resource_providers WHERE name IN (" + sqlutil.InList(len(f.names)) + ")"
			args := make([]any, 0, len(f.uuids)+len(f.names))
			for _, v := range f.uuids {
				args = append(args, v)
			}
			for _, v := range f.names {
				args = append(args, v)
			}
			if err := tx.SelectContext(ctx, &roots, db.Rebind(q), args...); err != nil {
				return db.Errorf("read resource_providers: %w", storage.CleanError(err))
			}
			if len(roots) == 0 {
				return nil
			}
			idl := sqlutil.SQLInts(roots)
			where = " WHERE rp.root_provider_id IN (" + idl + ") OR rp.id IN (" + idl + ")"
		}
		if err := scanPlacementRows(ctx, db, tx, "resource_providers", `SELECT rp.id, rp.uuid, COALESCE(rp.name, ''), COALESCE(rp.generation, 0),
			COALESCE(p.uuid, ''), COALESCE(r.uuid, '')
			FROM resource_providers rp
			LEFT JOIN resource_providers p ON p.id = rp.parent_provider_id
			LEFT JOIN resource_providers r ON r.id = rp.root_provider_id`+where,
			func(rows *sql.Rows) error {
				p := &migrate.PProvider{Inventories: map[string]inventory.Inventory{}, Traits: map[string]bool{}, Aggregates: map[string]bool{}, Used: map[string]bool{}}
				if err := rows.Scan(&p.ID, &p.UUID, &p.Name, &p.Generation, &p.ParentUUID, &p.RootUUID); err != nil {
					return err
				}
				// Keyed as the cells' node uuids are read (sqlutil.FoldUUID):
				// a provider an earlier rpctl stored upper case is the one its
				// node plans, updated in place, not a name conflict.
				p.UUID, p.ParentUUID, p.RootUUID = sqlutil.FoldUUID(p.UUID), sqlutil.FoldUUID(p.ParentUUID), sqlutil.FoldUUID(p.RootUUID)
				st.Providers[p.UUID] = p
				byID[p.ID] = p
				if p.Name != "" {
					st.ByName[p.Name] = p.UUID
				}
				return nil
			}); err != nil {
			return err
		}
		filter := func(string) string { return "" }
		if f != nil {
			if len(byID) == 0 {
				return nil
			}
			idl := sqlutil.SQLInts(slices.Collect(maps.Keys(byID)))
			filter = func(col string) string { return " WHERE " + col + " IN (" + idl + ")" }
		}
		if err := scanPlacementRows(ctx, db, tx, "inventories", `SELECT i.resource_provider_id, rc.name, i.total, i.reserved, i.min_unit, i.max_unit, i.step_size, i.allocation_ratio
			FROM inventories i JOIN resource_classes rc ON rc.id = i.resource_class_id`+filter("i.resource_provider_id"),
			func(r *sql.Rows) error {
				var id int64
				var rc string
				var inv inventory.Inventory
				var ratio sql.NullFloat64
				if err := r.Scan(&id, &rc, &inv.Total, &inv.Reserved, &inv.MinUnit, &inv.MaxUnit, &inv.StepSize, &ratio); err != nil {
					return err
				}
				if f := db.FloatPtr(ratio); f != nil {
					inv.AllocationRatio = *f
				}
				if p := byID[id]; p != nil {
					p.Inventories[rc] = inv
				}
				return nil
			}); err != nil {
			return err
		}
		if err := scanPlacementRows(ctx, db, tx, "resource_provider_traits", `SELECT t.resource_provider_id, tr.name FROM resource_provider_traits t JOIN traits tr ON tr.id = t.trait_id`+filter("t.resource_provider_id"),
			func(r *sql.Rows) error {
				var id int64
				var name string
				if err := r.Scan(&id, &name); err != nil {
					return err
				}
				if p := byID[id]; p != nil {
					p.Traits[name] = true
				}
				return nil
			}); err != nil {
			return err
		}
		if err := scanPlacementRows(ctx, db, tx, "resource_provider_aggregates", `SELECT a.resource_provider_id, pa.uuid FROM resource_provider_aggregates a JOIN placement_aggregates pa ON pa.id = a.aggregate_id`+filter("a.resource_provider_id"),
			func(r *sql.Rows) error {
				var id int64
				var u string
				if err := r.Scan(&id, &u); err != nil {
					return err
				}
				if p := byID[id]; p != nil {
					p.Aggregates[u] = true
				}
				return nil
			}); err != nil {
			return err
		}
		return scanPlacementRows(ctx, db, tx, "allocations", `SELECT DISTINCT al.resource_provider_id, rc.name FROM allocations al JOIN resource_classes rc ON rc.id = al.resource_class_id`+filter("al.resource_provider_id"),
			func(r *sql.Rows) error {
				var id int64
				var rc string
				if err := r.Scan(&id, &rc); err != nil {
					return err
				}
				if p := byID[id]; p != nil {
					p.Used[rc] = true
				}
				return nil
			})
	})
	if err != nil {
		return nil, err
	}
	return st, nil
}

// EnsurePlacementNames makes sure the standard classes and traits, the given
// custom resource classes and traits, and the given aggregates exist, and
// returns every id. Custom classes are numbered from 10000 on, as Placement
// numbers them; a concurrent creator of the same name is tolerated.
func EnsurePlacementNames(ctx context.Context, db *storage.DB, classes, traits, aggregates []string) (*migrate.PlacementIDs, error) {
	// The default release's traits: a subset of every later release's
	// (none was removed up to 2025.1), so a newer Placement's database
	// gains nothing its own sync did not write.
	if err := schema.SyncStandards(ctx, db, release.Default); err != nil {
		return nil, err
	}
	ids := &migrate.PlacementIDs{}
	var err error
	if ids.Classes, err = sqlutil.NameIDs(ctx, db, "resource_classes", "name"); err != nil {
		return nil, err
	}
	for _, c := range classes {
		if _, ok := ids.Classes[c]; ok {
			continue
		}
		id, err := createCustomClass(ctx, db, c)
		if err != nil {
			return nil, err
		}
		ids.Classes[c] = id
	}
	ensure := func(table, col string, names []string, dst *map[string]int64) error {
		var err error
		if *dst, err = sqlutil.NameIDs(ctx, db, table, col); err != nil {
			return err
		}
		added := false
		for _, n := range names {
			if _, ok := (*dst)[n]; ok {
				continue
			}
			if err := sqlutil.InsertIgnoringDuplicate(ctx, db, table, col, n); err != nil {
				return err
			}
			added = true
		}
		if added {
			*dst, err = sqlutil.NameIDs(ctx, db, table, col)
		}
		return err
	}
	if err := ensure("traits", "name", traits, &ids.Traits); err != nil {
		return nil, err
	}
	if err := ensure("placement_aggregates", "uuid", aggregates, &ids.Aggregates); err != nil {
		return nil, err
	}
	return ids, nil
}

// createCustomClass adds a CUSTOM_ class with the next id at or above 10000
// (placement's ResourceClass._get_next_id), retrying when a concurrent
// creator took that id.
func createCustomClass(ctx context.Context, db *storage.DB, name string) (int64, error) {
	for try := 0; try < 10; try++ {
		var maxID sql.NullInt64
		if err := db.GetContext(ctx, &maxID, `SELECT MAX(id) FROM resource_classes`); err != nil {
			return 0, db.Errorf("read resource_classes: %w", storage.CleanError(err))
		}
		id := max(maxID.Int64+1, CustomResourceClassMinID)
		_, err := db.ExecContext(ctx, db.Rebind(`INSERT INTO resource_classes (id, name, created_at) VALUES (?, ?, ?)`), id, name, db.Now())
		if err == nil {
			return id, nil
		}
		if !storage.IsDuplicate(err) {
			return 0, db.Errorf("create resource class %s: %w", name, storage.CleanError(err))
		}
		var got int64
		if db.GetContext(ctx, &got, db.Rebind(`SELECT id FROM resource_classes WHERE name = ?`), name) == nil {
			return got, nil
		}
	}
	return 0, db.Errorf("create resource class %s: gave up after 10 id conflicts", name)
}

// WriteNodes applies each node's writes atomically, each node in a
// transaction of its own, so that one bad node neither undoes nor blocks
// the others. Where the database takes scripts (storage.DB.TakesScripts:
// MySQL) the nodes go as scripts, many transactions per round
// trip (writeScripts): nodeScript's for a node that only creates
// providers, updateScript's for the others (re-runs, layout switches),
// guarded on a Galera node (scriptGuard) so that a brute-force abort
// writes nothing outside the node's transaction and ends in error 1213;
// every node elsewhere, and one a script cannot carry, one transaction at
// a time, one statement per round trip, with its arguments written into
// it on Galera (storage.Open's Galera sessions). The result has one
// error (or nil) per node.
func WriteNodes(ctx context.Context, db *storage.DB, ids *migrate.PlacementIDs, nodes []migrate.NodeWrite) []error {
	errs := make([]error, len(nodes))
	var fast, slow []int
	var scripts [][]byte
	var probes []string
	now := db.Now()
	for i := range nodes {
		if db.TakesScripts() {
			probe := ""
			s, ok := nodeScript(&nodes[i], ids, now, len(fast), scriptGuard(db.Galera))
			if ok {
				probe, ok = nodeProbe(&nodes[i])
			} else {
				s, ok = updateScript(&nodes[i], ids, now, len(fast), scriptGuard(db.Galera))
			}
			if ok {
				fast, scripts, probes = append(fast, i), append(scripts, s), append(probes, probe)
				continue
			}
		}
		slow = append(slow, i)
	}
	if len(fast) > 0 && !writeScripts(ctx, db, nodes, fast, scripts, probes, errs) {
		slow = append(slow, fast...)
	}
	// A node whose script failed a check goes again through writeGroup,
	// which answers the condition with its own error (updateScript).
	for _, i := range fast {
		if errors.Is(errs[i], errScriptCheck) {
			errs[i] = nil
			slow = append(slow, i)
		}
	}
	for _, i := range slow {
		if ctx.Err() != nil {
			errs[i] = ctx.Err()
			continue
		}
		errs[i] = markDuplicate(db.SessionTx(ctx, func(tx *sqlx.Tx) error { return writeGroup(ctx, db, tx, ids, nodes[i:i+1]) }))
	}
	return errs
}

// markDuplicate makes a unique-key violation recognisable as migrate.ErrDuplicate,
// and a value the server refused as migrate.ErrBadValue.
func markDuplicate(err error) error {
	if err != nil && !errors.Is(err, migrate.ErrDuplicate) && storage.IsDuplicate(err) {
		return fmt.Errorf("%w: %v", migrate.ErrDuplicate, err)
	}
	if err != nil && !errors.Is(err, migrate.ErrBadValue) && sqlutil.IsBadValue(err) {
		return fmt.Errorf("%w: %v", migrate.ErrBadValue, err)
	}
	return err
}

func writeGroup(ctx context.Context, db *storage.DB, tx *sqlx.Tx, ids *migrate.PlacementIDs, nodes []migrate.NodeWrite) error {
	now := db.Now()
	step := sqlutil.AutoIncStep(ctx, db)
	provID := map[string]int64{}
	rootID := map[string]int64{}
	var roots, children []*migrate.ProviderWrite
	for n := range nodes {
		for i := range nodes[n].Providers {
			p := &nodes[n].Providers[i]
			switch {
			case !p.Create:
				// The generation check is what makes the write safe against
				// a concurrent nova-compute or operator.
				id, root, err := bumpGeneration(ctx, db, tx, p)
				if err != nil {
					return err
				}
				provID[p.UUID], rootID[p.UUID] = id, root
			case p.ParentUUID == "":
				roots = append(roots, p)
			default:
				children = append(children, p)
			}
		}
	}
	if len(roots) > 0 {
		w := sqlutil.NewRowInsert(db, "resource_providers", "created_at", "uuid", "name", "generation")
		for _, p := range roots {
			w.Add(now, p.UUID, p.Name, p.Generation)
		}
		got, err := insertProviders(ctx, db, tx, w, roots, step)
		if err != nil {
			return err
		}
		idl := make([]int64, 0, len(roots))
		for _, p := range roots {
			provID[p.UUID], rootID[p.UUID] = got[p.UUID], got[p.UUID]
			idl = append(idl, got[p.UUID])
		}
		// Placement's _create_in_db sets a root's root_provider_id to its
		// own id right after the insert, in the same transaction. The uuid
		// condition also proves the ids derived from LAST_INSERT_ID are
		// this statement's rows.
		// By primary key only: through the uuid index the UPDATE would take
		// gap locks that deadlock with a concurrent writer's inserts.
		q := "UPDATE resource_providers" + sqlutil.ForcePrimary(db) + " SET root_provider_id = id WHERE id IN (" + sqlutil.SQLInts(idl) + ")"
		if l, ok := sqlutil.LiteralList(provUUIDs(roots)); ok {
			q += " AND uuid IN (" + l + ")"
		}
		res, err := tx.ExecContext(ctx, q)
		if err != nil {
			return db.Errorf("set root_provider_id: %w", storage.CleanError(err))
		}
		if n, err := res.RowsAffected(); err == nil && n != int64(len(roots)) {
			// Rows this transaction inserted are gone: something ended it
			// without an error. On a Galera node a brute-force abort
			// (another node committing the same provider) did, around a
			// server-side prepared statement (the race test saw this
			// UPDATE match none of the rows its INSERT had just made;
			// storage.Open now has Galera sessions interpolate arguments,
			// and this stays as the defence). Like a deadlock, the whole
			// transaction is tried again; its INSERT then meets the other
			// writer's provider.
			return db.Errorf("set root_provider_id: %d of %d new providers found by id: %w", n, len(roots), storage.ErrRetry)
		}
	}
	// Children a level at a time, since a child's root is its parent's.
	for len(children) > 0 {
		var level, rest []*migrate.ProviderWrite
		for _, p := range children {
			if _, ok := provID[p.ParentUUID]; ok {
				level = append(level, p)
			} else {
				rest = append(rest, p)
			}
		}
		if len(level) == 0 {
			// Parents outside this write: they must exist already.
			for _, p := range rest {
				if err := parentIDs(ctx, db, tx, p.ParentUUID, provID, rootID); err != nil {
					return err
				}
			}
			continue
		}
		w := sqlutil.NewRowInsert(db, "resource_providers", "created_at", "uuid", "name", "generation", "parent_provider_id", "root_provider_id")
		for _, p := range level {
			w.Add(now, p.UUID, p.Name, p.Generation, provID[p.ParentUUID], rootID[p.ParentUUID])
		}
		got, err := insertProviders(ctx, db, tx, w, level, step)
		if err != nil {
			return err
		}
		for _, p := range level {
			provID[p.UUID], rootID[p.UUID] = got[p.UUID], rootID[p.ParentUUID]
		}
		children = rest
	}

	inv := sqlutil.NewRowInsert(db, "inventories", "created_at", "resource_provider_id", "resource_class_id", "total", "reserved", "min_unit", "max_unit", "step_size", "allocation_ratio")
	trt := sqlutil.NewRowInsert(db, "resource_provider_traits", "created_at", "trait_id", "resource_provider_id")
	agg := sqlutil.NewRowInsert(db, "resource_provider_aggregates", "created_at", "resource_provider_id", "aggregate_id")
	for n := range nodes {
		// A layout switch's allocations move before the inventories they
		// leave are deleted below.
		if err := applyMoves(ctx, db, tx, ids, nodes[n].Moves, provID); err != nil {
			return err
		}
		for i := range nodes[n].Providers {
			p := &nodes[n].Providers[i]
			if err := removeAggregates(ctx, db, tx, provID[p.UUID], p.RemoveAggregates); err != nil {
				return err
			}
		}
	}
	for n := range nodes {
		for i := range nodes[n].Providers {
			p := &nodes[n].Providers[i]
			id := provID[p.UUID]
			for _, rc := range slices.Sorted(maps.Keys(p.AddInventories)) {
				v := p.AddInventories[rc]
				cid, ok := ids.Classes[rc]
				if !ok {
					return db.Errorf("resource class %s does not exist", rc)
				}
				inv.Add(now, id, cid, v.Total, v.Reserved, v.MinUnit, v.MaxUnit, v.StepSize, v.AllocationRatio)
			}
			for _, rc := range slices.Sorted(maps.Keys(p.UpdateInventories)) {
				v := p.UpdateInventories[rc]
				if _, err := tx.ExecContext(ctx, db.Rebind(`UPDATE inventories SET updated_at = ?, total = ?, reserved = ?, min_unit = ?, max_unit = ?, step_size = ?, allocation_ratio = ?
					WHERE resource_provider_id = ? AND resource_class_id = ?`), now, v.Total, v.Reserved, v.MinUnit, v.MaxUnit, v.StepSize, v.AllocationRatio, id, ids.Classes[rc]); err != nil {
					return db.Errorf("update inventory %s of %s: %w", rc, p.UUID, storage.CleanError(err))
				}
			}
			for _, rc := range p.DeleteInventories {
				var used int
				if err := tx.GetContext(ctx, &used, db.Rebind(`SELECT COUNT(*) FROM allocations WHERE resource_provider_id = ? AND resource_class_id = ?`), id, ids.Classes[rc]); err != nil {
					return db.Errorf("read allocations: %w", storage.CleanError(err))
				}
				if used > 0 {
					return fmt.Errorf("%w: cannot remove %s from provider %s: it has allocations", migrate.ErrInventoryInUse, rc, p.UUID)
				}
				if _, err := tx.ExecContext(ctx, db.Rebind(`DELETE FROM inventories WHERE resource_provider_id = ? AND resource_class_id = ?`), id, ids.Classes[rc]); err != nil {
					return db.Errorf("delete inventory %s of %s: %w", rc, p.UUID, storage.CleanError(err))
				}
			}
			for _, t := range p.RemoveTraits {
				if _, err := tx.ExecContext(ctx, db.Rebind(`DELETE FROM resource_provider_traits WHERE resource_provider_id = ? AND trait_id IN (SELECT id FROM traits WHERE name = ?)`), id, t); err != nil {
					return db.Errorf("remove trait %s of %s: %w", t, p.UUID, storage.CleanError(err))
				}
			}
			for _, t := range p.AddTraits {
				tid, ok := ids.Traits[t]
				if !ok {
					return db.Errorf("trait %s does not exist", t)
				}
				trt.Add(now, tid, id)
			}
			for _, a := range p.AddAggregates {
				aid, ok := ids.Aggregates[a]
				if !ok {
					return db.Errorf("aggregate %s does not exist", a)
				}
				agg.Add(now, id, aid)
			}
		}
	}
	for _, w := range []*sqlutil.RowInsert{inv, trt, agg} {
		if _, err := w.Exec(ctx, tx); err != nil {
			return err
		}
	}
	for n := range nodes {
		for i := range nodes[n].Providers {
			if p := &nodes[n].Providers[i]; p.Delete {
				if err := deleteProvider(ctx, db, tx, provID[p.UUID], p.UUID); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// deleteProvider removes a provider as Placement's
// ResourceProvider._delete does: refused while it has
// allocations or children, else its inventories, traits and aggregate
// memberships go with it.
func deleteProvider(ctx context.Context, db *storage.DB, tx *sqlx.Tx, id int64, uuid string) error {
	var n struct {
		Allocs   int `db:"a"`
		Children int `db:"c"`
	}
	if err := tx.GetContext(ctx, &n, db.Rebind(`SELECT (SELECT COUNT(*) FROM allocations WHERE resource_provider_id = ?) AS a,
		(SELECT COUNT(*) FROM resource_providers WHERE parent_provider_id = ?) AS c`), id, id); err != nil {
		return db.Errorf("read provider %s: %w", uuid, storage.CleanError(err))
	}
	if n.Allocs > 0 || n.Children > 0 {
		return fmt.Errorf("%w: cannot delete provider %s: it has %d allocations and %d children", migrate.ErrInventoryInUse, uuid, n.Allocs, n.Children)
	}
	for _, q := range []string{
		`DELETE FROM inventories WHERE resource_provider_id = ?`,
		`DELETE FROM resource_provider_traits WHERE resource_provider_id = ?`,
		`DELETE FROM resource_provider_aggregates WHERE resource_provider_id = ?`,
		`DELETE FROM resource_providers WHERE id = ?`,
	} {
		if _, err := tx.ExecContext(ctx, db.Rebind(q), id); err != nil {
			return db.Errorf("delete provider %s: %w", uuid, storage.CleanError(err))
		}
	}
	return nil
}

// insertProviders runs the providers' INSERT and returns their ids: derived
// from the statements' first ids when the server allocates them as one
// evenly spaced run (step > 0), else read back by uuid.
func insertProviders(ctx context.Context, db *storage.DB, tx *sqlx.Tx, w *sqlutil.RowInsert, ps []*migrate.ProviderWrite, step int64) (map[string]int64, error) {
	chunks, err := w.Exec(ctx, tx)
	if err != nil {
		return nil, err
	}
	if step <= 0 {
		return idsByUUID(ctx, db, tx, ps)
	}
	out := make(map[string]int64, len(ps))
	i := 0
	for _, c := range chunks {
		if c.First <= 0 {
			return idsByUUID(ctx, db, tx, ps)
		}
		for r := 0; r < c.Rows; r++ {
			out[ps[i].UUID] = c.First + int64(r)*step
			i++
		}
	}
	return out, nil
}

func provUUIDs(ps []*migrate.ProviderWrite) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.UUID
	}
	return out
}

// bumpGeneration moves an existing provider from the generation the plan
// saw to the one it leaves, as Placement's increment_generation does, and
// fails with migrate.ErrGenerationConflict when someone else changed it meanwhile.
func bumpGeneration(ctx context.Context, db *storage.DB, tx *sqlx.Tx, p *migrate.ProviderWrite) (id, root int64, err error) {
	// The uuid as MySQL's collation matches it, on SQLite too (uuidMatch):
	// the state folds a stored upper-case spelling.
	match, margs := uuidMatch("uuid", p.UUID)
	res, err := sqlutil.ExecInline(ctx, db, tx, `UPDATE resource_providers SET generation = ?, updated_at = ? WHERE `+match+` AND generation = ?`,
		append(append([]any{p.Generation, db.Now()}, margs...), p.ExpectGeneration)...)
	if err != nil {
		return 0, 0, db.Errorf("update resource provider %s: %w", p.UUID, storage.CleanError(err))
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return 0, 0, fmt.Errorf("%w: provider %s is no longer at generation %d", migrate.ErrGenerationConflict, p.UUID, p.ExpectGeneration)
	}
	if id, root, err = providerIDs(ctx, db, tx, p.UUID); err != nil {
		return 0, 0, db.Errorf("read resource provider %s: %w", p.UUID, storage.CleanError(err))
	}
	return id, root, nil
}

// providerIDs reads a provider's id and root_provider_id.
func providerIDs(ctx context.Context, db *storage.DB, tx *sqlx.Tx, uuid string) (id, root int64, err error) {
	var r struct {
		ID   int64         `db:"id"`
		Root sql.NullInt64 `db:"root_provider_id"`
	}
	match, args := uuidMatch("uuid", uuid)
	if err := tx.GetContext(ctx, &r, db.Rebind(`SELECT id, root_provider_id FROM resource_providers WHERE `+match), args...); err != nil {
		return 0, 0, err
	}
	return r.ID, r.Root.Int64, nil
}

// parentIDs looks up a parent provider outside the write; a parent deleted
// since the plan read it is a conflict, to re-plan.
func parentIDs(ctx context.Context, db *storage.DB, tx *sqlx.Tx, uuid string, provID, rootID map[string]int64) error {
	id, root, err := providerIDs(ctx, db, tx, uuid)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%w: parent provider %s not found", migrate.ErrGenerationConflict, uuid)
	}
	if err != nil {
		return db.Errorf("read resource provider %s: %w", uuid, storage.CleanError(err))
	}
	provID[uuid], rootID[uuid] = id, root
	return nil
}

func idsByUUID(ctx context.Context, db *storage.DB, tx *sqlx.Tx, ps []*migrate.ProviderWrite) (map[string]int64, error) {
	args := make([]any, len(ps))
	for i, p := range ps {
		args[i] = p.UUID
	}
	q := "SELECT id, uuid FROM resource_providers WHERE uuid IN (" + strings.TrimSuffix(strings.Repeat("?,", len(ps)), ",") + ")"
	rows, err := tx.QueryContext(ctx, db.Rebind(q), args...)
	if err != nil {
		return nil, db.Errorf("read resource provider ids: %w", storage.CleanError(err))
	}
	defer rows.Close()
	out := make(map[string]int64, len(ps))
	for rows.Next() {
		var id int64
		var u string
		if err := rows.Scan(&id, &u); err != nil {
			return nil, db.Errorf("read resource provider ids: %w", storage.CleanError(err))
		}
		out[u] = id
	}
	if err := rows.Err(); err != nil {
		return nil, db.Errorf("read resource provider ids: %w", storage.CleanError(err))
	}
	for _, p := range ps {
		if _, ok := out[p.UUID]; !ok {
			// As in writeGroup: the transaction that inserted it has
			// ended under this session.
			return nil, db.Errorf("read resource provider ids: %s not found after its INSERT: %w", p.UUID, storage.ErrRetry)
		}
	}
	return out, nil
}

// BulkLoadProviders inserts root providers with their inventories, traits
// and aggregates in one transaction with explicit ids and no reads, each
// table in multi-row statements of up to 1 MiB of literal SQL: the floor
// the inventory migration's benchmark compares itself with.
func BulkLoadProviders(ctx context.Context, db *storage.DB, ids *migrate.PlacementIDs, ps []*migrate.PProvider) error {
	return db.Tx(ctx, func(tx *sqlx.Tx) error {
		now := db.Now()
		var next int64
		if err := tx.GetContext(ctx, &next, `SELECT COALESCE(MAX(id), 0) FROM resource_providers`); err != nil {
			return db.Errorf("read resource_providers: %w", storage.CleanError(err))
		}
		rp := sqlutil.NewRowInsert(db, "resource_providers", "id", "created_at", "uuid", "name", "generation", "root_provider_id")
		inv := sqlutil.NewRowInsert(db, "inventories", "created_at", "resource_provider_id", "resource_class_id", "total", "reserved", "min_unit", "max_unit", "step_size", "allocation_ratio")
		trt := sqlutil.NewRowInsert(db, "resource_provider_traits", "created_at", "trait_id", "resource_provider_id")
		agg := sqlutil.NewRowInsert(db, "resource_provider_aggregates", "created_at", "resource_provider_id", "aggregate_id")
		for _, p := range ps {
			next++
			rp.Add(next, now, p.UUID, p.Name, p.Generation, next)
			for _, rc := range slices.Sorted(maps.Keys(p.Inventories)) {
				v := p.Inventories[rc]
				inv.Add(now, next, ids.Classes[rc], v.Total, v.Reserved, v.MinUnit, v.MaxUnit, v.StepSize, v.AllocationRatio)
			}
			for t := range p.Traits {
				trt.Add(now, ids.Traits[t], next)
			}
			for a := range p.Aggregates {
				agg.Add(now, next, ids.Aggregates[a])
			}
		}
		for _, w := range []*sqlutil.RowInsert{rp, inv, trt, agg} {
			if _, err := w.Exec(ctx, tx); err != nil {
				return err
			}
		}
		return nil
	})
}
