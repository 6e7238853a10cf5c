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
// inventories (in Placement's order, as inventoryList), keyed by uuid as
// stored.
func (s *Store) providersInventories(ctx context.Context, uuids []string) (map[string]*batchProvider, error) {
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
				p = &batchProvider{id: id, inv: inventory.ProviderInventories{Generation: gen, Inventories: map[string]inventory.Inventory{}}}
				out[u] = p
			}
			if class.Valid {
				p.inv.Order = append(p.inv.Order, class.String)
				p.inv.Inventories[class.String] = inventory.Inventory{Total: total.Int64, Reserved: reserved.Int64, MinUnit: minUnit.Int64,
					MaxUnit: maxUnit.Int64, StepSize: step.Int64, AllocationRatio: s.db.Float(ratio)}
			}
			return nil
		})
	})
	if err != nil {
		return nil, s.fail("read inventories", err)
	}
	return out, nil
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
			script, ok := inventoryScript(&ws[to], have[ws[to].UUID], ids, ts, to)
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
func inventoryScript(w *inventory.InventoryReplace, p *batchProvider, ids map[string]int64, ts []byte, k int) ([]byte, bool) {
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
	b := append(make([]byte, 0, 1024), "START TRANSACTION;\nUPDATE resource_providers SET generation = "...)
	b = lit(b, w.Generation+1)
	b = append(append(b, ", updated_at = "...), ts...)
	b = lit(append(b, " WHERE id = "...), p.id)
	b = lit(append(b, " AND generation = "...), w.Generation)
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
		b = append(lit(append(b, " AND resource_class_id = "...), id), ";\n"...)
	}
	if len(inserts) > 0 {
		b = append(b, "INSERT INTO inventories (resource_provider_id, resource_class_id, total, reserved, min_unit, max_unit, step_size, allocation_ratio, created_at) VALUES "...)
		for i, in := range inserts {
			if i > 0 {
				b = append(b, ", "...)
			}
			v := in[1].(inventory.Inventory)
			b = lit(append(b, '('), p.id)
			for _, x := range []any{in[0], v.Total, v.Reserved, v.MinUnit, v.MaxUnit, v.StepSize, v.AllocationRatio} {
				b = lit(append(b, ", "...), x)
			}
			b = append(append(append(b, ", "...), ts...), ')')
		}
		b = append(b, ";\n"...)
	}
	b = strconv.AppendInt(append(b, "COMMIT;\nSELECT "...), int64(k), 10)
	return append(b, ";\n"...), ok
}
