package placementdb

import (
	"context"
	"database/sql"
	"errors"
	"maps"
	"slices"
	"strings"

	"github.com/jmoiron/sqlx"

	"github.com/rpctl/rpctl/candidates"
	"github.com/rpctl/rpctl/internal/lazyre"
	"github.com/rpctl/rpctl/inventory"
	"github.com/rpctl/rpctl/storage"
)

var customName = &lazyre.Regexp{Expr: `^CUSTOM_[A-Z0-9_]+$`}

// nameID reads the id of the row of table (resource_classes, traits) with
// name; a missing row is notFound, or id 0 when notFound is nil.
func (s *Store) nameID(ctx context.Context, tx *sqlx.Tx, table, name string, notFound error) (int64, error) {
	var id int64
	err := tx.GetContext(ctx, &id, s.db.Rebind(`SELECT id FROM `+table+` WHERE name = ?`), name)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, notFound
	}
	return id, err
}

// ListResourceClasses is GET /resource_classes.
func (s *Store) ListResourceClasses(ctx context.Context) ([]string, error) {
	var out []string
	if err := s.db.SelectContext(ctx, &out, `SELECT name FROM resource_classes ORDER BY id`); err != nil {
		return nil, s.fail("read resource_classes", err)
	}
	return out, nil
}

// CreateResourceClass is PUT /resource_classes/{name} (1.7+).
func (s *Store) CreateResourceClass(ctx context.Context, name string) (bool, error) {
	if !customName.Get().MatchString(name) || len(name) > 255 {
		return false, inventory.Errorf(inventory.ErrBadRequest, "", "JSON does not validate: '%s' does not match '^CUSTOM_[A-Z0-9_]+$'", name)
	}
	return s.createName(ctx, "resource class", "resource_classes", name, func(tx *sqlx.Tx) error {
		// ResourceClass._get_next_id: max(id)+1, at least 10000.
		var maxID sql.NullInt64
		if err := tx.GetContext(ctx, &maxID, `SELECT MAX(id) FROM resource_classes`); err != nil {
			return err
		}
		next := max(maxID.Int64+1, customClassMinID)
		_, err := tx.ExecContext(ctx, s.db.Rebind(`INSERT INTO resource_classes (id, name, created_at) VALUES (?, ?, ?)`), next, name, s.db.Now())
		return err
	})
}

// createName inserts the row of a custom class or trait (insert writes
// it) unless one with name exists; created says whether this call added
// it. A concurrent creator that inserted it first is no error: Placement
// answers 204 then too.
func (s *Store) createName(ctx context.Context, what, table, name string, insert func(*sqlx.Tx) error) (bool, error) {
	created := false
	err := s.writeTx(ctx, "create "+what, func(tx *sqlx.Tx) error {
		if id, err := s.nameID(ctx, tx, table, name, nil); err != nil || id != 0 {
			return err
		}
		if err := insert(tx); err != nil {
			if storage.IsDuplicate(err) {
				return nil
			}
			return err
		}
		created = true
		return nil
	})
	return created, err
}

// DeleteResourceClass is DELETE /resource_classes/{name}.
func (s *Store) DeleteResourceClass(ctx context.Context, name string) error {
	return s.writeTx(ctx, "delete resource class", func(tx *sqlx.Tx) error {
		id, err := s.nameID(ctx, tx, "resource_classes", name, inventory.Errorf(inventory.ErrNotFound, "", "No such resource class %s.", name))
		if err != nil {
			return err
		}
		if id < customClassMinID {
			return inventory.Errorf(inventory.ErrBadRequest, "", "Error in delete resource class: Cannot delete standard resource class %s.", name)
		}
		var n int
		if err := tx.GetContext(ctx, &n, s.db.Rebind(`SELECT COUNT(*) FROM inventories WHERE resource_class_id = ?`), id); err != nil {
			return err
		}
		if n > 0 {
			return inventory.Errorf(inventory.ErrInUse, "", "Error in delete resource class: Cannot delete resource class %s. Class is in use in inventory.", name)
		}
		_, err = tx.ExecContext(ctx, s.db.Rebind(`DELETE FROM resource_classes WHERE id = ?`), id)
		return err
	})
}

// ListTraits is GET /traits (objects/trait.py get_all).
func (s *Store) ListTraits(ctx context.Context, f inventory.TraitFilter) ([]string, error) {
	q, args := `SELECT t.name FROM traits t`, []any{}
	var where []string
	if f.Name != "" {
		op, value, ok := strings.Cut(f.Name, ":")
		if !ok {
			return nil, inventory.Errorf(inventory.ErrBadRequest, "",
				"Badly formatted name parameter. Expected name query string parameter in form: ?name=[in|startswith]:[name1,name2|prefix]. Got: \"%s\"", f.Name)
		}
		switch op {
		case "in":
			names := strings.Split(value, ",")
			where = append(where, "t.name IN (?"+strings.Repeat(", ?", len(names)-1)+")")
			for _, n := range names {
				args = append(args, n)
			}
		case "startswith":
			where, args = append(where, "t.name LIKE ?"), append(args, value+"%")
		}
	}
	if f.Associated != nil {
		if *f.Associated {
			q = `SELECT DISTINCT t.name FROM traits t JOIN resource_provider_traits rpt ON rpt.trait_id = t.id`
		} else {
			q = `SELECT t.name FROM traits t LEFT JOIN resource_provider_traits rpt ON rpt.trait_id = t.id`
			where = append(where, "rpt.trait_id IS NULL")
		}
	}
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	var out []string
	if err := s.db.SelectContext(ctx, &out, s.db.Rebind(q+" ORDER BY t.id"), args...); err != nil {
		return nil, s.fail("read traits", err)
	}
	return out, nil
}

// CreateTrait is PUT /traits/{name}.
func (s *Store) CreateTrait(ctx context.Context, name string) (bool, error) {
	if !customName.Get().MatchString(name) || len(name) > 255 {
		return false, inventory.Errorf(inventory.ErrBadRequest, "",
			"The trait is invalid. A valid trait must be no longer than 255 characters, start with the prefix \"CUSTOM_\" and use following characters: \"A\"-\"Z\", \"0\"-\"9\" and \"_\"")
	}
	return s.createName(ctx, "trait", "traits", name, func(tx *sqlx.Tx) error {
		_, err := tx.ExecContext(ctx, s.db.Rebind(`INSERT INTO traits (name, created_at) VALUES (?, ?)`), name, s.db.Now())
		return err
	})
}

// DeleteTrait is DELETE /traits/{name}.
func (s *Store) DeleteTrait(ctx context.Context, name string) error {
	return s.writeTx(ctx, "delete trait", func(tx *sqlx.Tx) error {
		id, err := s.nameID(ctx, tx, "traits", name, inventory.Errorf(inventory.ErrNotFound, "", "No such trait(s): %s.", name))
		if err != nil {
			return err
		}
		if !strings.HasPrefix(name, "CUSTOM_") {
			return inventory.Errorf(inventory.ErrBadRequest, "", "Cannot delete standard trait %s.", name)
		}
		var n int
		if err := tx.GetContext(ctx, &n, s.db.Rebind(`SELECT COUNT(*) FROM resource_provider_traits WHERE trait_id = ?`), id); err != nil {
			return err
		}
		if n > 0 {
			return inventory.Errorf(inventory.ErrInUse, "", "The trait %s is in use by a resource provider.", name)
		}
		_, err = tx.ExecContext(ctx, s.db.Rebind(`DELETE FROM traits WHERE id = ?`), id)
		return err
	})
}

// ProviderTraits is GET /resource_providers/{uuid}/traits.
func (s *Store) ProviderTraits(ctx context.Context, uuid string) (int64, []string, error) {
	return s.providerNames(ctx, uuid, "No resource provider with uuid %s found: "+notFoundMsg,
		`SELECT tr.name FROM resource_provider_traits t JOIN traits tr ON tr.id = t.trait_id WHERE t.resource_provider_id = ? ORDER BY tr.id`)
}

// ProviderAggregates is GET /resource_providers/{uuid}/aggregates.
func (s *Store) ProviderAggregates(ctx context.Context, uuid string) (int64, []string, error) {
	return s.providerNames(ctx, uuid, notFoundMsg,
		`SELECT pa.uuid FROM resource_provider_aggregates a JOIN placement_aggregates pa ON pa.id = a.aggregate_id WHERE a.resource_provider_id = ? ORDER BY pa.id`)
}

func (s *Store) providerNames(ctx context.Context, uuid, notFound, q string) (int64, []string, error) {
	var gen int64
	var out []string
	err := s.db.ReadTx(ctx, func(tx *sqlx.Tx) error {
		p, err := s.provider(ctx, tx, uuid, strings.ReplaceAll(notFound, notFoundMsg, strings.Replace(notFoundMsg, "%s", uuid, 1)))
		if err != nil {
			return err
		}
		gen = p.Generation
		return tx.SelectContext(ctx, &out, s.db.Rebind(q), p.ID)
	})
	if err != nil {
		return 0, nil, s.fail("read provider", err)
	}
	return gen, out, nil
}

// SetProviderTraits is PUT /resource_providers/{uuid}/traits
// (handlers/trait.py, objects _set_traits).
func (s *Store) SetProviderTraits(ctx context.Context, uuid string, generation int64, traits []string) (int64, error) {
	p, err := s.provider(ctx, s.db, uuid, notFoundMsg)
	if err != nil {
		return 0, err
	}
	for _, t := range traits {
		if t == "" || len(t) > 255 {
			return 0, inventory.Errorf(inventory.ErrBadRequest, "", "JSON does not validate: '%s' is not a valid trait name", t)
		}
	}
	if err := checkGeneration(p, generation, "Resource provider's generation already changed. Please update the generation and try again."); err != nil {
		return 0, err
	}
	err = s.writeTx(ctx, "write provider traits", func(tx *sqlx.Tx) error {
		ids, _, err := s.nameIDs(ctx, tx, `SELECT id, name FROM traits`)
		if err != nil {
			return err
		}
		want := map[int64]bool{}
		var missing []string
		for _, t := range traits {
			if id, ok := ids[t]; ok {
				want[id] = true
			} else if !slices.Contains(missing, t) {
				missing = append(missing, t)
			}
		}
		if len(missing) > 0 {
			slices.Sort(missing)
			return inventory.Errorf(inventory.ErrBadRequest, "", "No such trait %s", strings.Join(missing, ", "))
		}
		var have []int64
		if err := tx.SelectContext(ctx, &have, s.db.Rebind(`SELECT trait_id FROM resource_provider_traits WHERE resource_provider_id = ?`), p.ID); err != nil {
			return err
		}
		var del []int64
		for _, id := range have {
			if !want[id] {
				del = append(del, id)
			}
		}
		var add []int64
		for _, id := range slices.Sorted(maps.Keys(want)) {
			if !slices.Contains(have, id) {
				add = append(add, id)
			}
		}
		if len(add) == 0 && len(del) == 0 {
			// _set_traits returns without touching the generation.
			return nil
		}
		if len(del) > 0 {
			q, args, err := sqlx.In(`DELETE FROM resource_provider_traits WHERE resource_provider_id = ? AND trait_id IN (?)`, p.ID, del)
			if err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, s.db.Rebind(q), args...); err != nil {
				return err
			}
		}
		now := s.db.Now()
		for _, id := range add {
			if _, err := tx.ExecContext(ctx, s.db.Rebind(`INSERT INTO resource_provider_traits (resource_provider_id, trait_id, created_at) VALUES (?, ?, ?)`), p.ID, id, now); err != nil && !storage.IsDuplicate(err) {
				return err
			}
		}
		return s.bumpGeneration(ctx, tx, &p, "")
	})
	if err != nil {
		return 0, err
	}
	return p.Generation, nil
}

// SetProviderAggregates is PUT /resource_providers/{uuid}/aggregates
// (1.19+; objects _set_aggregates with increment_generation).
func (s *Store) SetProviderAggregates(ctx context.Context, uuid string, generation int64, aggregates []string) (int64, error) {
	p, err := s.provider(ctx, s.db, uuid, notFoundMsg)
	if err != nil {
		return 0, err
	}
	seen := map[string]bool{}
	for _, a := range aggregates {
		if !candidates.UUIDLike(a) {
			return 0, inventory.Errorf(inventory.ErrBadRequest, "", "JSON does not validate: '%s' is not a 'uuid'", a)
		}
		if seen[a] {
			return 0, inventory.Errorf(inventory.ErrBadRequest, "", "JSON does not validate: %q has non-unique elements", aggregates)
		}
		seen[a] = true
	}
	// Aggregate uuids are written lower case, whatever the spelling (one
	// aggregate per uuid on SQLite, which compares exactly, as on MySQL);
	// two spellings of one uuid are that one aggregate.
	canon := make([]string, 0, len(aggregates))
	for _, a := range aggregates {
		if a = canonicalUUID(a); !slices.Contains(canon, a) {
			canon = append(canon, a)
		}
	}
	aggregates = canon
	if err := checkGeneration(p, generation, "Resource provider's generation already changed. Please update the generation and try again."); err != nil {
		return 0, err
	}
	err = s.writeTx(ctx, "write provider aggregates", func(tx *sqlx.Tx) error {
		have, _, err := s.nameIDs(ctx, tx, `SELECT pa.id, pa.uuid FROM resource_provider_aggregates a JOIN placement_aggregates pa ON pa.id = a.aggregate_id WHERE a.resource_provider_id = ?`, p.ID)
		if err != nil {
			return err
		}
		now := s.db.Now()
		for _, a := range aggregates {
			if _, ok := have[a]; ok {
				continue
			}
			// _ensure_aggregate: the aggregate row is created on first use
			// (and never removed).
			var id int64
			err := tx.GetContext(ctx, &id, s.db.Rebind(`SELECT id FROM placement_aggregates WHERE uuid = ?`), a)
			if errors.Is(err, sql.ErrNoRows) {
				res, err := tx.ExecContext(ctx, s.db.Rebind(`INSERT INTO placement_aggregates (uuid, created_at) VALUES (?, ?)`), a, now)
				if err != nil {
					if storage.IsDuplicate(err) {
						return concurrentUpdate("Update conflict: ")
					}
					return err
				}
				if id, err = res.LastInsertId(); err != nil {
					return err
				}
			} else if err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, s.db.Rebind(`INSERT INTO resource_provider_aggregates (resource_provider_id, aggregate_id, created_at) VALUES (?, ?, ?)`), p.ID, id, now); err != nil && !storage.IsDuplicate(err) {
				return err
			}
		}
		for _, u := range slices.Sorted(maps.Keys(have)) {
			if !seen[u] {
				if _, err := tx.ExecContext(ctx, s.db.Rebind(`DELETE FROM resource_provider_aggregates WHERE resource_provider_id = ? AND aggregate_id = ?`), p.ID, have[u]); err != nil {
					return err
				}
			}
		}
		return s.bumpGeneration(ctx, tx, &p, "Update conflict: ")
	})
	if err != nil {
		return 0, err
	}
	return p.Generation, nil
}
