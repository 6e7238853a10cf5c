// Package placementdb is the inventory domain's Store on the Placement
// database: every method reproduces what the same placement-api 8.0.0 call
// does to the database (placement/handlers and placement/objects) — the same
// checks in the same order, the same rows, generation increments and
// created_at/updated_at columns — so that the API, reading the database
// afterwards, cannot tell which of the two carried an edit.
package placementdb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/go-sql-driver/mysql"
	"github.com/jmoiron/sqlx"

	"github.com/rpctl/rpctl/inventory"
	"github.com/rpctl/rpctl/storage"
)

// Store carries inventory edits out on a Placement database.
type Store struct{ db *storage.DB }

// New returns the Store of db, which must hold Placement's schema.
func New(db *storage.DB) *Store { return &Store{db: db} }

var _ inventory.Store = (*Store)(nil)

// customClassMinID is where Placement numbers custom resource classes from.
const customClassMinID = CustomResourceClassMinID

func (s *Store) fail(what string, err error) error {
	var ie *inventory.Error
	if errors.As(err, &ie) {
		return err
	}
	return s.db.Errorf("%s: %w", what, storage.CleanError(err))
}

// isRetryable is a lock conflict with a concurrent writer, which Placement
// itself reports as a conflict to retry.
func isRetryable(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && (me.Number == 1213 || me.Number == 1205)
}

func concurrentUpdate(prefix string) *inventory.Error {
	return inventory.Errorf(inventory.ErrGeneration, inventory.CodeConcurrentUpdate,
		"%sAnother thread concurrently updated the resource provider data. Please retry your update", prefix)
}

// writeTx runs fn in a transaction; a deadlock or lock timeout with another
// writer comes back as a generation conflict (the caller re-reads).
func (s *Store) writeTx(ctx context.Context, what string, fn func(tx *sqlx.Tx) error) error {
	tx, err := s.db.BeginTxx(ctx, nil)
	if err != nil {
		return s.fail("begin transaction", err)
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		if isRetryable(err) {
			return concurrentUpdate("")
		}
		return s.fail(what, err)
	}
	if err := tx.Commit(); err != nil {
		if isRetryable(err) {
			return concurrentUpdate("")
		}
		return s.fail("commit", err)
	}
	return nil
}

// provRow is a provider with its internal ids.
type provRow struct {
	inventory.Provider
	ID     int64
	RootID int64
}

const providerSelect = `SELECT rp.id, rp.uuid, COALESCE(rp.name, ''), COALESCE(rp.generation, 0), root.id, root.uuid, COALESCE(parent.uuid, '')
	FROM resource_providers rp
	JOIN resource_providers root ON root.id = rp.root_provider_id
	LEFT JOIN resource_providers parent ON parent.id = rp.parent_provider_id`

func scanProvider(rows interface{ Scan(...any) error }) (provRow, error) {
	var p provRow
	err := rows.Scan(&p.ID, &p.UUID, &p.Name, &p.Generation, &p.RootID, &p.RootUUID, &p.ParentUUID)
	return p, err
}

// provider reads one provider; a missing one is an ErrNotFound with msg
// (Placement's handlers word it differently each), %s being the uuid.
func (s *Store) provider(ctx context.Context, q sqlx.QueryerContext, uuid, msg string) (provRow, error) {
	cond, args := uuidMatch("rp.uuid", uuid)
	p, err := scanProvider(q.QueryRowxContext(ctx, s.db.Rebind(providerSelect+` WHERE `+cond), args...))
	if errors.Is(err, sql.ErrNoRows) {
		return p, inventory.Errorf(inventory.ErrNotFound, "", msg, uuid)
	}
	if err != nil {
		return p, s.fail("read resource_providers", err)
	}
	return p, nil
}

const notFoundMsg = "No resource provider with uuid %s found"

// GetProvider is GET /resource_providers/{uuid}.
func (s *Store) GetProvider(ctx context.Context, uuid string) (inventory.Provider, error) {
	p, err := s.provider(ctx, s.db, uuid, notFoundMsg)
	return p.Provider, err
}

// bumpGeneration is ResourceProvider.increment_generation: the update that
// fails when another writer got there first. SQLAlchemy's onupdate stamps
// updated_at.
func (s *Store) bumpGeneration(ctx context.Context, tx *sqlx.Tx, p *provRow, prefix string) error {
	res, err := tx.ExecContext(ctx, s.db.Rebind(`UPDATE resource_providers SET generation = ?, updated_at = ? WHERE id = ? AND generation = ?`),
		p.Generation+1, s.db.Now(), p.ID, p.Generation)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil {
		return err
	} else if n != 1 {
		return concurrentUpdate(prefix)
	}
	p.Generation++
	return nil
}

// checkGeneration is the handlers' early comparison of the body's
// generation with the provider's.
func checkGeneration(p provRow, generation int64, msg string) error {
	if p.Generation != generation {
		return inventory.Errorf(inventory.ErrGeneration, inventory.CodeConcurrentUpdate, "%s", msg)
	}
	return nil
}

// classIDs maps resource class names to ids.
func (s *Store) classIDs(ctx context.Context, q sqlx.QueryerContext) (map[string]int64, map[int64]string, error) {
	return s.nameIDs(ctx, q, `SELECT id, name FROM resource_classes`)
}

func (s *Store) nameIDs(ctx context.Context, q sqlx.QueryerContext, query string, args ...any) (map[string]int64, map[int64]string, error) {
	rows, err := q.QueryxContext(ctx, s.db.Rebind(query), args...)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	byName, byID := map[string]int64{}, map[int64]string{}
	for rows.Next() {
		var id int64
		var name string
		if err := rows.Scan(&id, &name); err != nil {
			return nil, nil, err
		}
		byName[name], byID[id] = id, name
	}
	return byName, byID, rows.Err()
}

// placementInventoryRead is Placement's own read of one provider's
// inventories (placement/objects/inventory.py
// _get_inventory_by_provider_id, the same in Placement 8.0.0 and 13.0.0),
// as SQLAlchemy renders it for MySQL: the same columns, alias and WHERE,
// and no ORDER BY. MariaDB returns its rows in the order of the plan it
// picks, so rpctl sends this very statement (PyMySQL and rpctl's driver
// both send the provider id as a literal: interpolateParams) and lists the
// classes as they come back: on Zed's schema the provider's index gives
// the order they were written; on Placement 13's schema, which dropped
// inventories_resource_provider_id_idx (a082b8bb98d0), the unique
// (resource_provider_id, resource_class_id) key gives class id order, and
// a table of a few rows is scanned in written order (measured on MariaDB
// 10.11: a provider's 3 rows alone in the table are scanned, with one
// other provider's rows beside them read through the key, issue 33). A
// JOIN or an ORDER BY here would change the plan, and with it the order.
const placementInventoryRead = "SELECT i.resource_class_id, i.total, i.reserved, i.min_unit, i.max_unit, i.step_size, i.allocation_ratio, i.updated_at, i.created_at \nFROM inventories AS i \nWHERE i.resource_provider_id = "

// sqliteInventoryOrder is what SQLite adds to placementInventoryRead: an
// explicit order, the written one. Placement runs on MySQL in every cloud
// rpctl reads, so on SQLite (tests, demos, sample clouds) there is no
// Placement answer to follow, and SQLite's unordered answer would be its
// planner's choice of index (class id order through the unique key's
// autoindex on both releases' schemas, measured): written order is the
// one Zed's MariaDB gives and the one the SQLite-backed tests and the
// comparisons between backends were proven with.
const sqliteInventoryOrder = " ORDER BY i.id"

// inventoryRead is placementInventoryRead for db, its placeholder
// rebound (SQLite gets its order, above).
func inventoryRead(db *storage.DB) string {
	if db.IsMySQL() {
		return placementInventoryRead + "?"
	}
	return db.Rebind(placementInventoryRead + "?" + sqliteInventoryOrder)
}

// scanInventory reads one row of placementInventoryRead; the timestamps
// Placement reads too are not part of an answer.
func (s *Store) scanInventory(r interface{ Scan(...any) error }, names map[int64]string) (inventory.ClassInventory, error) {
	var v inventory.ClassInventory
	var class int64
	var ratio sql.NullFloat64
	var updated, created any
	if err := r.Scan(&class, &v.Total, &v.Reserved, &v.MinUnit, &v.MaxUnit, &v.StepSize, &ratio, &updated, &created); err != nil {
		return v, err
	}
	name, ok := names[class]
	if !ok {
		return v, fmt.Errorf("inventory of resource class id %d, which has no resource_classes row", class)
	}
	v.Class, v.AllocationRatio = name, s.db.Float(ratio)
	return v, nil
}

// inventoryList reads a provider's inventory records in the order
// Placement's own read returns them (placementInventoryRead), the class
// names looked up as Placement's resource class cache does.
func (s *Store) inventoryList(ctx context.Context, q sqlx.QueryerContext, id int64) ([]inventory.ClassInventory, error) {
	_, names, err := s.classIDs(ctx, q)
	if err != nil {
		return nil, err
	}
	return s.inventoryListNamed(ctx, q, id, names)
}

// inventoryListNamed is inventoryList with the class names already read.
func (s *Store) inventoryListNamed(ctx context.Context, q sqlx.QueryerContext, id int64, names map[int64]string) ([]inventory.ClassInventory, error) {
	rows, err := q.QueryContext(ctx, inventoryRead(s.db), id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []inventory.ClassInventory
	for rows.Next() {
		v, err := s.scanInventory(rows, names)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// Inventories is GET /resource_providers/{uuid}/inventories, keyed by class.
func (s *Store) Inventories(ctx context.Context, uuid string) (int64, map[string]inventory.Inventory, error) {
	gen, list, err := s.ListInventories(ctx, uuid)
	if err != nil {
		return 0, nil, err
	}
	out := make(map[string]inventory.Inventory, len(list))
	for _, v := range list {
		out[v.Class] = v.Inventory
	}
	return gen, out, nil
}

// ListInventories is GET /resource_providers/{uuid}/inventories in
// Placement's order.
func (s *Store) ListInventories(ctx context.Context, uuid string) (int64, []inventory.ClassInventory, error) {
	var gen int64
	var inv []inventory.ClassInventory
	err := s.db.ReadTx(ctx, func(tx *sqlx.Tx) error {
		p, err := s.provider(ctx, tx, uuid, "No resource provider with uuid %s found : "+fmt.Sprintf(notFoundMsg, uuid))
		if err != nil {
			return err
		}
		gen = p.Generation
		inv, err = s.inventoryList(ctx, tx, p.ID)
		return err
	})
	if err != nil {
		return 0, nil, s.fail("read inventories", err)
	}
	return gen, inv, nil
}

// ReplaceInventories is PUT /resource_providers/{uuid}/inventories
// (handlers/inventory.py set_inventories, objects _set_inventory).
func (s *Store) ReplaceInventories(ctx context.Context, uuid string, generation int64, inv map[string]inventory.Inventory) (int64, error) {
	p, err := s.provider(ctx, s.db, uuid, notFoundMsg)
	if err != nil {
		return 0, err
	}
	for _, rc := range slices.Sorted(maps.Keys(inv)) {
		if err := inventory.CheckSchema(rc, inv[rc]); err != nil {
			return 0, inventory.Errorf(inventory.ErrBadRequest, "", "JSON does not validate: %v", err)
		}
	}
	if err := checkGeneration(p, generation, "resource provider generation conflict"); err != nil {
		return 0, err
	}
	for _, rc := range slices.Sorted(maps.Keys(inv)) {
		if inv[rc].Capacity() < 0 {
			return 0, inventory.Errorf(inventory.ErrBadRequest, "",
				"Unable to update inventory for resource provider %s: Invalid inventory for '%s' on resource provider '%s'. The reserved value is greater than total.",
				p.UUID, rc, p.UUID)
		}
	}
	err = s.writeTx(ctx, "write inventories", func(tx *sqlx.Tx) error {
		ids, names, err := s.classIDs(ctx, tx)
		if err != nil {
			return err
		}
		want := map[int64]inventory.Inventory{}
		for _, rc := range slices.Sorted(maps.Keys(inv)) {
			id, ok := ids[rc]
			if !ok {
				return inventory.Errorf(inventory.ErrBadRequest, "",
					"Unknown resource class in inventory for resource provider %s: No such resource class %s.", p.UUID, rc)
			}
			want[id] = inv[rc]
		}
		var have []int64
		if err := tx.SelectContext(ctx, &have, s.db.Rebind(`SELECT resource_class_id FROM inventories WHERE resource_provider_id = ?`), p.ID); err != nil {
			return err
		}
		var del []int64
		for _, id := range have {
			if _, ok := want[id]; !ok {
				del = append(del, id)
			}
		}
		if len(del) > 0 {
			if err := s.deleteInventories(ctx, tx, p, del, names); err != nil {
				return err
			}
		}
		now := s.db.Now()
		for _, id := range slices.Sorted(maps.Keys(want)) {
			v := want[id]
			if slices.Contains(have, id) {
				_, err = tx.ExecContext(ctx, s.db.Rebind(`UPDATE inventories SET total = ?, reserved = ?, min_unit = ?, max_unit = ?, step_size = ?, allocation_ratio = ?, updated_at = ?
					WHERE resource_provider_id = ? AND resource_class_id = ?`),
					v.Total, v.Reserved, v.MinUnit, v.MaxUnit, v.StepSize, v.AllocationRatio, now, p.ID, id)
			} else {
				_, err = tx.ExecContext(ctx, s.db.Rebind(`INSERT INTO inventories (resource_provider_id, resource_class_id, total, reserved, min_unit, max_unit, step_size, allocation_ratio, created_at)
					VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`),
					p.ID, id, v.Total, v.Reserved, v.MinUnit, v.MaxUnit, v.StepSize, v.AllocationRatio, now)
			}
			if err != nil {
				if storage.IsDuplicate(err) {
					return inventory.Errorf(inventory.ErrGeneration, inventory.CodeConcurrentUpdate, "update conflict: %s", storage.CleanError(err))
				}
				return err
			}
		}
		return s.bumpGeneration(ctx, tx, &p, "update conflict: ")
	})
	if err != nil {
		return 0, err
	}
	return p.Generation, nil
}

// deleteInventories is _delete_inventory_from_provider: refused while any
// of the classes has allocations.
func (s *Store) deleteInventories(ctx context.Context, tx *sqlx.Tx, p provRow, classIDs []int64, names map[int64]string) error {
	q, args, err := sqlx.In(`SELECT DISTINCT resource_class_id FROM allocations WHERE resource_provider_id = ? AND resource_class_id IN (?)`, p.ID, classIDs)
	if err != nil {
		return err
	}
	var used []int64
	if err := tx.SelectContext(ctx, &used, s.db.Rebind(q), args...); err != nil {
		return err
	}
	if len(used) > 0 {
		var rcs []string
		for _, id := range used {
			rcs = append(rcs, names[id])
		}
		sort.Strings(rcs)
		return inventory.Errorf(inventory.ErrInUse, inventory.CodeInventoryInUse,
			"update conflict: Inventory for '%s' on resource provider '%s' in use.", strings.Join(rcs, ", "), p.UUID)
	}
	q, args, err = sqlx.In(`DELETE FROM inventories WHERE resource_provider_id = ? AND resource_class_id IN (?)`, p.ID, classIDs)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, s.db.Rebind(q), args...)
	return err
}

// Usages is GET /resource_providers/{uuid}/usages.
func (s *Store) Usages(ctx context.Context, uuid string) (int64, map[string]int64, error) {
	var gen int64
	out := map[string]int64{}
	err := s.db.ReadTx(ctx, func(tx *sqlx.Tx) error {
		clear(out)
		p, err := s.provider(ctx, tx, uuid, "No resource provider with uuid %s found: "+fmt.Sprintf(notFoundMsg, uuid))
		if err != nil {
			return err
		}
		gen = p.Generation
		rows, err := tx.QueryxContext(ctx, s.db.Rebind(`SELECT rc.name, COALESCE(SUM(a.used), 0)
			FROM inventories i JOIN resource_classes rc ON rc.id = i.resource_class_id
			LEFT JOIN allocations a ON a.resource_provider_id = i.resource_provider_id AND a.resource_class_id = i.resource_class_id
			WHERE i.resource_provider_id = ? GROUP BY rc.name`), p.ID)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var rc string
			var n int64
			if err := rows.Scan(&rc, &n); err != nil {
				return err
			}
			out[rc] = n
		}
		return rows.Err()
	})
	if err != nil {
		return 0, nil, s.fail("read usages", err)
	}
	return gen, out, nil
}

// ProviderAllocations is GET /resource_providers/{uuid}/allocations
// (1.28+, with the consumers' generations). Placement's query has no ORDER
// BY; MariaDB reads the provider's few allocations in the order they were
// written (by id), and the answer keeps the first consumer seen first.
func (s *Store) ProviderAllocations(ctx context.Context, uuid string) (int64, []inventory.ConsumerAllocations, error) {
	var gen int64
	var out []inventory.ConsumerAllocations
	err := s.db.ReadTx(ctx, func(tx *sqlx.Tx) error {
		out = nil
		p, err := s.provider(ctx, tx, uuid, "Resource provider '%s' not found: "+fmt.Sprintf(notFoundMsg, uuid))
		if err != nil {
			return err
		}
		gen = p.Generation
		rows, err := tx.QueryxContext(ctx, s.db.Rebind(`SELECT a.consumer_id, c.generation, rc.name, a.used
			FROM allocations a JOIN consumers c ON c.uuid = a.consumer_id
			JOIN resource_classes rc ON rc.id = a.resource_class_id
			WHERE a.resource_provider_id = ? ORDER BY a.id`), p.ID)
		if err != nil {
			return err
		}
		defer rows.Close()
		at := map[string]int{}
		for rows.Next() {
			var c, rc string
			var g, n int64
			if err := rows.Scan(&c, &g, &rc, &n); err != nil {
				return err
			}
			k, ok := at[c]
			if !ok {
				k = len(out)
				at[c] = k
				out = append(out, inventory.ConsumerAllocations{Consumer: c, Generation: &g})
			}
			out[k].Resources = append(out[k].Resources, inventory.ClassAmount{Class: rc, Amount: n})
		}
		return rows.Err()
	})
	if err != nil {
		return 0, nil, s.fail("read allocations", err)
	}
	return gen, out, nil
}
