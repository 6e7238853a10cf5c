package placementdb

import (
	"context"
	"database/sql"
	"errors"
	"maps"
	"slices"
	"strconv"

	"github.com/jmoiron/sqlx"

	"github.com/rpctl/rpctl/inventory"
	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/internal/sqlutil"
)

var _ inventory.BatchStore = (*Store)(nil)

// batchProvider is a provider as a batch reads it.
type batchProvider struct {
	id  int64
	inv inventory.ProviderInventories
}

// providersInventories reads the providers of uuids with their
// inventories, each provider's in the order Placement's own read of it
// returns them (inventoryList), keyed by uuid as stored. On MariaDB that
// order is the plan's of placementInventoryRead for that one provider, so
// one query over all the providers cannot give it: each provider gets
// Placement's statement, all of them sent as scripts (many per round trip,
// issue 35's bound) where the database takes them, else one by one in the
// read's transaction (a Galera cluster: one round trip per provider).
// SQLite's order is the written one (sqliteInventoryOrder), which one
// query gives.
func (s *Store) providersInventories(ctx context.Context, uuids []string) (map[string]*batchProvider, error) {
	var out map[string]*batchProvider
	var err error
	switch {
	case !s.db.IsMySQL():
		out, err = s.providersInventoriesOrdered(ctx, uuids)
	case s.db.TakesScripts():
		out, err = s.providersInventoriesScripted(ctx, uuids)
	default:
		out, err = s.providersInventoriesOneByOne(ctx, uuids)
	}
	if err != nil {
		return nil, s.fail("read inventories", err)
	}
	return out, nil
}

// providersInventoriesOrdered is providersInventories in one query, in
// written order (SQLite).
func (s *Store) providersInventoriesOrdered(ctx context.Context, uuids []string) (map[string]*batchProvider, error) {
	out := map[string]*batchProvider{}
	err := s.db.ReadTx(ctx, func(tx *sqlx.Tx) error {
		clear(out)
		return sqlutil.SelectIn(ctx, s.db, tx, `SELECT rp.uuid, rp.id, COALESCE(rp.generation, 0), rc.name, i.total, i.reserved, i.min_unit, i.max_unit, i.step_size, i.allocation_ratio
			FROM resource_providers rp LEFT JOIN inventories i ON i.resource_provider_id = rp.id LEFT JOIN resource_classes rc ON rc.id = i.resource_class_id
			WHERE rp.uuid IN (%s) ORDER BY rp.id, i.id`, uuids, func(r *sql.Rows) error {
			var u string
			var id, gen int64
			var class sql.NullString
			var total, reserved, minUnit, maxUnit, step sql.NullInt64
			var ratio sql.NullFloat64
			if err := r.Scan(&u, &id, &gen, &class, &total, &reserved, &minUnit, &maxUnit, &step, &ratio); err != nil {
				return err
			}
			p := out[u]
			if p == nil {
				p = newBatchProvider(id, gen)
				out[u] = p
			}
			if class.Valid {
				p.add(inventory.ClassInventory{Class: class.String, Inventory: inventory.Inventory{Total: total.Int64, Reserved: reserved.Int64, MinUnit: minUnit.Int64,
					MaxUnit: maxUnit.Int64, StepSize: step.Int64, AllocationRatio: s.db.Float(ratio)}})
			}
			return nil
		})
	})
	return out, err
}

func newBatchProvider(id, gen int64) *batchProvider {
	return &batchProvider{id: id, inv: inventory.ProviderInventories{Generation: gen, Inventories: map[string]inventory.Inventory{}}}
}

func (p *batchProvider) add(v inventory.ClassInventory) {
	p.inv.Order = append(p.inv.Order, v.Class)
	p.inv.Inventories[v.Class] = v.Inventory
}

// providerIDs reads the ids of the providers of uuids, keyed by uuid as
// stored.
func (s *Store) providerIDs(ctx context.Context, tx *sqlx.Tx, uuids []string) (map[string]int64, error) {
	ids := map[string]int64{}
	err := sqlutil.SelectIn(ctx, s.db, tx, `SELECT uuid, id FROM resource_providers WHERE uuid IN (%s)`, uuids, func(r *sql.Rows) error {
		var u string
		var id int64
		if err := r.Scan(&u, &id); err != nil {
			return err
		}
		ids[u] = id
		return nil
	})
	return ids, err
}

// providersInventoriesOneByOne is providersInventories with Placement's
// statement sent once per provider, in one read transaction after one
// read of the providers and one of the class names.
func (s *Store) providersInventoriesOneByOne(ctx context.Context, uuids []string) (map[string]*batchProvider, error) {
	out := map[string]*batchProvider{}
	err := s.db.ReadTx(ctx, func(tx *sqlx.Tx) error {
		clear(out)
		if err := sqlutil.SelectIn(ctx, s.db, tx, `SELECT uuid, id, COALESCE(generation, 0) FROM resource_providers WHERE uuid IN (%s)`, uuids, func(r *sql.Rows) error {
			var u string
			var id, gen int64
			if err := r.Scan(&u, &id, &gen); err != nil {
				return err
			}
			out[u] = newBatchProvider(id, gen)
			return nil
		}); err != nil {
			return err
		}
		_, names, err := s.classIDs(ctx, tx)
		if err != nil {
			return err
		}
		for _, p := range out {
			list, err := s.inventoryListNamed(ctx, tx, p.id, names)
			if err != nil {
				return err
			}
			for _, v := range list {
				p.add(v)
			}
		}
		return nil
	})
	return out, err
}

// providersInventoriesScripted is providersInventories as scripts: after
// one read of the providers' ids, each script is a read-only transaction
// that reads the resource classes, then for each of its providers the
// generation and Placement's statement (placementInventoryRead, the id a
// literal as PyMySQL sends it), so that each provider's generation and
// inventories come from one snapshot. A provider gone since the first
// read is left out, as one not found.
func (s *Store) providersInventoriesScripted(ctx context.Context, uuids []string) (map[string]*batchProvider, error) {
	var ids map[string]int64
	err := s.db.ReadTx(ctx, func(tx *sqlx.Tx) error {
		var err error
		ids, err = s.providerIDs(ctx, tx, uuids)
		return err
	})
	if err != nil {
		return nil, err
	}
	out := make(map[string]*batchProvider, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	order := slices.Sorted(maps.Keys(ids))
	var c scriptConn
	if err := c.open(ctx, s.db); err != nil {
		return nil, err
	}
	defer c.release(false)
	for from := 0; from < len(order); {
		b := append(make([]byte, 0, 64<<10), "START TRANSACTION READ ONLY;\nSELECT id, name FROM resource_classes;\n"...)
		to := from
		for to < len(order) && (to == from || len(b) < sqlutil.MaxLiteralSQL) {
			id := strconv.FormatInt(ids[order[to]], 10)
			b = append(b, "SELECT COALESCE(generation, 0) FROM resource_providers WHERE id = "+id+";\n"+placementInventoryRead+id+";\n"...)
			to++
		}
		b = append(b, "COMMIT;\n"...)
		if err := s.readInventoryScript(ctx, c.conn, string(b), order[from:to], ids, out); err != nil {
			return nil, c.scriptFailed(ctx, err)
		}
		from = to
	}
	return out, nil
}

// readInventoryScript sends one script of providersInventoriesScripted
// and reads its answers into out: the classes, then per provider of
// uuids its generation (no row: gone) and its inventories.
func (s *Store) readInventoryScript(ctx context.Context, conn *sql.Conn, script string, uuids []string, ids map[string]int64, out map[string]*batchProvider) error {
	rows, err := conn.QueryContext(ctx, script)
	if err != nil {
		return err
	}
	defer rows.Close()
	names := map[int64]string{}
	for rows.Next() {
		var id int64
		var name string
		if err := rows.Scan(&id, &name); err != nil {
			return err
		}
		names[id] = name
	}
	next := func() error {
		if rows.NextResultSet() {
			return nil
		}
		if err := rows.Err(); err != nil {
			return err
		}
		return errors.New("inventory script: fewer answers than statements")
	}
	for _, u := range uuids {
		if err := next(); err != nil {
			return err
		}
		var p *batchProvider
		for rows.Next() {
			var gen int64
			if err := rows.Scan(&gen); err != nil {
				return err
			}
			p = newBatchProvider(ids[u], gen)
		}
		if err := next(); err != nil {
			return err
		}
		for rows.Next() {
			v, err := s.scanInventory(rows, names)
			if err != nil {
				return err
			}
			if p != nil {
				p.add(v)
			}
		}
		if p != nil {
			out[u] = p
		}
	}
	for rows.NextResultSet() {
	}
	return rows.Err()
}

// InventoriesOf implements inventory.BatchStore.
func (s *Store) InventoriesOf(ctx context.Context, uuids []string) (map[string]inventory.ProviderInventories, error) {
	ps, err := s.providersInventories(ctx, uuids)
	if err != nil {
		return nil, err
	}
	out := make(map[string]inventory.ProviderInventories, len(ps))
	for u, p := range ps {
		out[u] = p.inv
	}
	return out, nil
}

// errNotScripted is a write ReplaceInventoriesBatch leaves to
// ReplaceInventories, whose checks give its own answer: it removes a class
// (refused while allocated), names a class without an id or a value
// without a literal, or fails Placement's schema.
var errNotScripted = errors.New("written one by one")

// ReplaceInventoriesBatch implements inventory.BatchStore with scripts
// (placement_script.go): each write is one transaction that increments
// the provider's generation from the one it was decided at (failing, as a
// generation conflict, when that matched no row), updates the classes the
// provider has and inserts the new ones, as ReplaceInventories leaves
// them, then a marker SELECT; the first failure ends the batch, its
// transaction rolled back.
func (s *Store) ReplaceInventoriesBatch(ctx context.Context, ws []inventory.InventoryReplace) (int, error) {
	var c scriptConn
	if err := c.open(ctx, s.db); err != nil {
		if err == storage.ErrNoScripts {
			return 0, inventory.ErrNoBatch
		}
		return 0, err
	}
	defer c.release(false)
	ts, ok := sqlutil.AppendLiteral(nil, s.db.Now())
	if !ok {
		return 0, inventory.ErrNoBatch
	}
	ids, _, err := s.classIDs(ctx, s.db)
	if err != nil {
		return 0, s.fail("read resource classes", err)
	}
	uuids := make([]string, len(ws))
	for i, w := range ws {
		uuids[i] = w.UUID
	}
	have, err := s.providersInventories(ctx, uuids)
	if err != nil {
		return 0, err
	}
	done := 0
	for done < len(ws) {
		b := make([]byte, 0, 64<<10)
		to := done
		for to < len(ws) && (to == done || len(b) < sqlutil.MaxLiteralSQL) {
			script, ok := inventoryScript(&ws[to], have[ws[to].UUID], ids, ts, to, scriptGuard(s.db.Galera))
			if !ok {
				break
			}
			b = append(b, script...)
			to++
		}
		if to == done {
			return done, errNotScripted
		}
		n, err := runScript(ctx, c.conn, string(b), done)
		done = n
		if err == nil {
			continue
		}
		if casFailed(err) {
			err = concurrentUpdate("update conflict: ")
		} else {
			err = s.db.Errorf("write inventories %s: %w", ws[done].UUID, storage.CleanError(err))
		}
		return done, c.scriptFailed(ctx, err)
	}
	return done, nil
}

// inventoryScript is w's transaction and marker k as SQL, or false when it
// is left to ReplaceInventories (see errNotScripted). p is the provider as
// read, nil when it was not found.
func inventoryScript(w *inventory.InventoryReplace, p *batchProvider, ids map[string]int64, ts []byte, k int, g scriptGuard) ([]byte, bool) {
	if p == nil {
		return nil, false
	}
	for rc := range p.inv.Inventories {
		if _, kept := w.Want[rc]; !kept {
			return nil, false
		}
	}
	ok := true
	lit := func(b []byte, v any) []byte {
		b, good := sqlutil.AppendLiteral(b, v)
		ok = ok && good
		return b
	}
	byID := map[int64]string{}
	for rc, v := range w.Want {
		id, known := ids[rc]
		if !known || inventory.CheckSchema(rc, v) != nil || v.Capacity() < 0 {
			return nil, false
		}
		byID[id] = rc
	}
	b := append(g.begin(make([]byte, 0, 1024)), "UPDATE resource_providers SET generation = "...)
	b = lit(b, w.Generation+1)
	b = append(append(b, ", updated_at = "...), ts...)
	b = lit(append(b, " WHERE id = "...), p.id)
	b = g.and(lit(append(b, " AND generation = "...), w.Generation))
	b = append(b, ";\nSET @rpctl_generation_check = (SELECT 1 FROM (SELECT 1 UNION ALL SELECT 2) two WHERE ROW_COUNT() <> 1);\n"...)
	var inserts [][2]any
	for _, id := range slices.Sorted(maps.Keys(byID)) {
		rc := byID[id]
		v := w.Want[rc]
		if _, has := p.inv.Inventories[rc]; !has {
			inserts = append(inserts, [2]any{id, v})
			continue
		}
		b = lit(append(b, "UPDATE inventories SET total = "...), v.Total)
		b = lit(append(b, ", reserved = "...), v.Reserved)
		b = lit(append(b, ", min_unit = "...), v.MinUnit)
		b = lit(append(b, ", max_unit = "...), v.MaxUnit)
		b = lit(append(b, ", step_size = "...), v.StepSize)
		b = lit(append(b, ", allocation_ratio = "...), v.AllocationRatio)
		b = append(append(b, ", updated_at = "...), ts...)
		b = lit(append(b, " WHERE resource_provider_id = "...), p.id)
		b = append(g.and(lit(append(b, " AND resource_class_id = "...), id)), ";\n"...)
	}
	if len(inserts) > 0 {
		b = g.values(append(b, "INSERT INTO inventories (resource_provider_id, resource_class_id, total, reserved, min_unit, max_unit, step_size, allocation_ratio, created_at) "...))
		for i, in := range inserts {
			if i > 0 {
				b = append(b, g.sep()...)
			}
			v := in[1].(inventory.Inventory)
			b = lit(g.open(b), p.id)
			for _, x := range []any{in[0], v.Total, v.Reserved, v.MinUnit, v.MaxUnit, v.StepSize, v.AllocationRatio} {
				b = lit(append(b, ", "...), x)
			}
			b = g.close(append(append(b, ", "...), ts...))
		}
		b = append(b, ";\n"...)
	}
	return g.commit(b, k), ok
}
