package placementdb

import (
	"context"
	"database/sql"
	"errors"
	"math"
	"slices"
	"strings"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"github.com/rpctl/rpctl/candidates"
	"github.com/rpctl/rpctl/internal/pyjson"
	"github.com/rpctl/rpctl/inventory"
	"github.com/rpctl/rpctl/storage"
)

// ListProviders is GET /resource_providers at 1.39 (handlers
// list_resource_providers and objects get_all_by_filters): the parameters
// are checked in Placement's order with its 400 messages; then, as
// Placement's query does, an unknown in_tree provider, required traits no
// provider has or member_of aggregates no provider is in end the search
// with no providers (before unknown forbidden traits or resource classes
// are noticed); otherwise name, uuid and tree narrow the SQL and traits,
// aggregates and resources are checked per provider.
func (s *Store) ListProviders(ctx context.Context, f inventory.ProviderFilter) ([]inventory.Provider, error) {
	q, err := parseProviderFilter(f)
	if err != nil {
		return nil, err
	}
	var out []inventory.Provider
	err = s.db.ReadTx(ctx, func(tx *sqlx.Tx) error {
		out = nil
		where, args := []string{"1 = 1"}, []any{}
		if f.Name != "" {
			where, args = append(where, "rp.name = ?"), append(args, f.Name)
		}
		if f.UUID != "" {
			cond, a := uuidMatch("rp.uuid", f.UUID)
			where, args = append(where, cond), append(args, a...)
		}
		if f.InTree != "" {
			var root int64
			cond, a := uuidMatch("uuid", f.InTree)
			err := tx.GetContext(ctx, &root, s.db.Rebind(`SELECT root_provider_id FROM resource_providers WHERE `+cond), a...)
			if errors.Is(err, sql.ErrNoRows) {
				return nil
			}
			if err != nil {
				return err
			}
			where, args = append(where, "rp.root_provider_id = ?"), append(args, root)
		}
		keep := func(int64) bool { return true }
		if len(q.required) > 0 || len(q.forbidden) > 0 {
			ids, _, err := s.nameIDs(ctx, tx, `SELECT id, name FROM traits`)
			if err != nil {
				return err
			}
			traits, err := s.links(ctx, tx, `SELECT t.resource_provider_id, tr.name FROM resource_provider_traits t JOIN traits tr ON tr.id = t.trait_id`)
			if err != nil {
				return err
			}
			if len(q.required) > 0 {
				if err := traitsKnown(ids, slices.Concat(q.required...)); err != nil {
					return err
				}
				if !anyLinked(traits, q.required) {
					return nil
				}
			}
			if err := traitsKnown(ids, q.forbidden); err != nil {
				return err
			}
			prev := keep
			keep = func(id int64) bool {
				return prev(id) && allAnyOf(traits[id], q.required) && !hasAny(traits[id], q.forbidden)
			}
		}
		if len(q.memberOf) > 0 || len(q.forbiddenAggs) > 0 {
			aggs, err := s.links(ctx, tx, `SELECT a.resource_provider_id, pa.uuid FROM resource_provider_aggregates a JOIN placement_aggregates pa ON pa.id = a.aggregate_id`)
			if err != nil {
				return err
			}
			if len(q.memberOf) > 0 && !anyLinked(aggs, q.memberOf) {
				return nil
			}
			prev := keep
			keep = func(id int64) bool {
				return prev(id) && allAnyOf(aggs[id], q.memberOf) && !hasAny(aggs[id], q.forbiddenAggs)
			}
		}
		if len(q.classes) > 0 {
			ids, _, err := s.classIDs(ctx, tx)
			if err != nil {
				return err
			}
			fits := map[int64]int{}
			for _, rc := range q.classes {
				id, ok := ids[rc]
				if !ok {
					return inventory.Errorf(inventory.ErrBadRequest, "", "Invalid resource class in resources parameter: No such resource class %s.", rc)
				}
				n := q.amounts[rc]
				if n > math.MaxInt32 {
					continue // above any max_unit: no provider has room
				}
				// _capacity_check_clause, as SQL so that the float
				// arithmetic is the server's, as in Placement.
				var got []int64
				err := tx.SelectContext(ctx, &got, s.db.Rebind(`SELECT i.resource_provider_id FROM inventories i
					LEFT JOIN (SELECT resource_provider_id, SUM(used) AS used FROM allocations WHERE resource_class_id = ? GROUP BY resource_provider_id) u
					ON u.resource_provider_id = i.resource_provider_id
					WHERE i.resource_class_id = ? AND COALESCE(u.used, 0) + ? <= (i.total - i.reserved) * i.allocation_ratio
					AND i.min_unit <= ? AND i.max_unit >= ? AND (? % i.step_size) = 0`),
					id, id, n, n, n, n)
				if err != nil {
					return err
				}
				for _, p := range got {
					fits[p]++
				}
			}
			prev := keep
			keep = func(id int64) bool { return prev(id) && fits[id] == len(q.classes) }
		}
		rows, err := tx.QueryxContext(ctx, s.db.Rebind(providerSelect+" WHERE "+strings.Join(where, " AND ")+" ORDER BY rp.id"), args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			p, err := scanProvider(rows)
			if err != nil {
				return err
			}
			if keep(p.ID) {
				out = append(out, p.Provider)
			}
		}
		return rows.Err()
	})
	if err != nil {
		return nil, s.fail("list resource providers", err)
	}
	return out, nil
}

// providerQuery is GET /resource_providers' member_of, required and
// resources parameters as Placement reads them.
type providerQuery struct {
	memberOf      [][]string // each an any-of set; all must hold
	forbiddenAggs []string
	required      [][]string // each an any-of set; all must hold
	forbidden     []string
	amounts       map[string]int64
	classes       []string // amounts' classes in the order given
}

// parseProviderFilter checks the parameters as list_resource_providers
// does: the JSON schema (uuid, then in_tree), then member_of, required and
// resources, each failure a 400 with Placement's message as the API client
// shows it.
func parseProviderFilter(f inventory.ProviderFilter) (providerQuery, error) {
	var q providerQuery
	bad := func(err error) error {
		return inventory.Errorf(inventory.ErrBadRequest, "", "%s", strings.TrimSpace(err.Error()))
	}
	for _, v := range []string{f.UUID, f.InTree} {
		if v != "" && !candidates.UUIDLike(v) {
			return q, inventory.Errorf(inventory.ErrBadRequest, "", "Invalid query string parameters: %s is not a 'uuid'", pyjson.Repr(v))
		}
	}
	for _, v := range f.MemberOf {
		req, forb, err := candidates.ParseMemberOfParam(v)
		if err != nil {
			return q, bad(err)
		}
		if len(req) > 0 {
			q.memberOf = append(q.memberOf, req)
		}
		q.forbiddenAggs = append(q.forbiddenAggs, forb...)
	}
	for _, v := range f.Required {
		req, forb, err := candidates.ParseRequiredParam(v)
		if err != nil {
			return q, bad(err)
		}
		q.required = append(q.required, req...)
		q.forbidden = append(q.forbidden, forb...)
	}
	if f.Resources != "" {
		var err error
		if q.amounts, q.classes, err = candidates.ParseResourcesParam(f.Resources); err != nil {
			return q, bad(err)
		}
	}
	return q, nil
}

// traitsKnown is the trait cache's lookup: the first unknown name is
// Placement's 400.
func traitsKnown(ids map[string]int64, names []string) error {
	for _, t := range names {
		if _, ok := ids[t]; !ok {
			return inventory.Errorf(inventory.ErrBadRequest, "", "Invalid trait(s) in \"required\" parameter: No such trait(s): %s.", t)
		}
	}
	return nil
}

// anyLinked says whether some provider satisfies every any-of set.
func anyLinked(links map[int64]map[string]bool, sets [][]string) bool {
	for _, have := range links {
		if allAnyOf(have, sets) {
			return true
		}
	}
	return false
}

// links reads provider id -> names (traits or aggregate uuids).
func (s *Store) links(ctx context.Context, tx *sqlx.Tx, q string) (map[int64]map[string]bool, error) {
	rows, err := tx.QueryxContext(ctx, q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[int64]map[string]bool{}
	for rows.Next() {
		var id int64
		var name string
		if err := rows.Scan(&id, &name); err != nil {
			return nil, err
		}
		if out[id] == nil {
			out[id] = map[string]bool{}
		}
		out[id][name] = true
	}
	return out, rows.Err()
}

func allAnyOf(have map[string]bool, sets [][]string) bool {
	for _, set := range sets {
		if !hasAny(have, set) {
			return false
		}
	}
	return true
}

func hasAny(have map[string]bool, names []string) bool {
	for _, n := range names {
		if have[n] {
			return true
		}
	}
	return false
}

// CreateProvider is POST /resource_providers (1.20+), ResourceProvider.create.
func (s *Store) CreateProvider(ctx context.Context, spec inventory.ProviderSpec) (inventory.Provider, error) {
	if spec.Name == "" || len([]rune(spec.Name)) > 200 {
		return inventory.Provider{}, inventory.Errorf(inventory.ErrBadRequest, "", "JSON does not validate: name must be 1 to 200 characters, got %q", spec.Name)
	}
	for _, u := range []string{spec.UUID, spec.ParentUUID} {
		if u != "" && !candidates.UUIDLike(u) {
			return inventory.Provider{}, inventory.Errorf(inventory.ErrBadRequest, "", "JSON does not validate: '%s' is not a 'uuid'", u)
		}
	}
	p := inventory.Provider{Name: spec.Name, UUID: uuid.NewString()}
	if spec.UUID != "" {
		p.UUID = canonicalUUID(spec.UUID)
	}
	bad := func(reason string) error {
		return inventory.Errorf(inventory.ErrBadRequest, "", "Unable to create resource provider \"%s\", %s: Object action create failed because: %s", p.Name, p.UUID, reason)
	}
	err := s.writeTx(ctx, "create resource provider", func(tx *sqlx.Tx) error {
		var parentID, rootID sql.NullInt64
		if spec.ParentUUID != "" {
			parent := canonicalUUID(spec.ParentUUID)
			if parent == p.UUID {
				return bad("parent provider UUID cannot be same as UUID. Please set parent provider UUID to None if there is no parent.")
			}
			pr, err := s.provider(ctx, tx, spec.ParentUUID, notFoundMsg)
			if errors.Is(err, inventory.ErrNotFound) {
				return bad("parent provider UUID does not exist.")
			}
			if err != nil {
				return err
			}
			parentID, rootID = sql.NullInt64{Int64: pr.ID, Valid: true}, sql.NullInt64{Int64: pr.RootID, Valid: true}
			p.ParentUUID, p.RootUUID = pr.UUID, pr.RootUUID
		}
		// MySQL's unique key refuses another spelling of a stored uuid;
		// SQLite's compares exactly, so the same uuid is looked for first.
		var same int
		cond, args := uuidMatch("uuid", p.UUID)
		if err := tx.GetContext(ctx, &same, s.db.Rebind(`SELECT COUNT(*) FROM resource_providers WHERE `+cond), args...); err != nil {
			return err
		}
		if same > 0 {
			return inventory.Errorf(inventory.ErrConflict, inventory.CodeDuplicateName, "Conflicting resource provider uuid: %s already exists.", p.UUID)
		}
		now := s.db.Now()
		res, err := tx.ExecContext(ctx, s.db.Rebind(`INSERT INTO resource_providers (uuid, name, generation, parent_provider_id, root_provider_id, created_at) VALUES (?, ?, 0, ?, ?, ?)`),
			p.UUID, p.Name, parentID, rootID, now)
		if err != nil {
			if storage.IsDuplicate(err) {
				return s.duplicateProvider(ctx, tx, p)
			}
			return err
		}
		if !rootID.Valid {
			// A root is its own root: SQLAlchemy flushes that as an UPDATE,
			// which stamps updated_at.
			id, err := res.LastInsertId()
			if err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, s.db.Rebind(`UPDATE resource_providers SET root_provider_id = ?, updated_at = ? WHERE id = ?`), id, now, id); err != nil {
				return err
			}
			p.RootUUID = p.UUID
		}
		return nil
	})
	if err != nil {
		return inventory.Provider{}, err
	}
	return p, nil
}

func (s *Store) duplicateProvider(ctx context.Context, tx *sqlx.Tx, p inventory.Provider) error {
	// A failed statement leaves the transaction usable on both databases.
	var n int
	what := "name: " + p.Name
	if tx.GetContext(ctx, &n, s.db.Rebind(`SELECT COUNT(*) FROM resource_providers WHERE uuid = ?`), p.UUID) == nil && n > 0 {
		what = "uuid: " + p.UUID
	}
	return inventory.Errorf(inventory.ErrConflict, inventory.CodeDuplicateName, "Conflicting resource provider %s already exists.", what)
}

// uuidMatch is the condition "col names uuid u" as MySQL's
// case-insensitive collation reads it, for SQLite too (whose = is
// case-sensitive): u as given, its canonical lower-case form and its upper
// case, so the column's index serves it. An upper-case compute node uuid
// migrated to SQLite used to be found only spelled upper case (issue 37
// row 14); a mixed-case spelling stored by another writer still needs its
// own spelling on SQLite.
func uuidMatch(col, u string) (string, []any) {
	c := canonicalUUID(u)
	var args []any
	for _, v := range []string{u, c, strings.ToUpper(c)} {
		if !slices.Contains(args, any(v)) {
			args = append(args, v)
		}
	}
	return col + " IN (?" + strings.Repeat(", ?", len(args)-1) + ")", args
}

// canonicalUUID is str(uuid.UUID(s)): lower case with hyphens.
func canonicalUUID(s string) string {
	u, err := uuid.Parse(strings.Trim(strings.TrimPrefix(strings.TrimPrefix(s, "urn:"), "uuid:"), "{}"))
	if err != nil {
		return s
	}
	return u.String()
}

// DeleteProvider is DELETE /resource_providers/{uuid}, ResourceProvider._delete.
func (s *Store) DeleteProvider(ctx context.Context, uuid string) error {
	p, err := s.provider(ctx, s.db, uuid, "No resource provider with uuid %s found for delete")
	if err != nil {
		return err
	}
	return s.writeTx(ctx, "delete resource provider", func(tx *sqlx.Tx) error {
		var n int
		if err := tx.GetContext(ctx, &n, s.db.Rebind(`SELECT COUNT(*) FROM resource_providers WHERE parent_provider_id = ?`), p.ID); err != nil {
			return err
		}
		if n > 0 {
			return inventory.Errorf(inventory.ErrInUse, inventory.CodeCannotDeleteParent,
				"Unable to delete parent resource provider %s: It has child resource providers.", uuid)
		}
		if err := tx.GetContext(ctx, &n, s.db.Rebind(`SELECT COUNT(*) FROM allocations WHERE resource_provider_id = ?`), p.ID); err != nil {
			return err
		}
		if n > 0 {
			return inventory.Errorf(inventory.ErrInUse, inventory.CodeProviderInUse,
				"Unable to delete resource provider %s: Resource provider has allocations.", uuid)
		}
		for _, q := range []string{
			`DELETE FROM inventories WHERE resource_provider_id = ?`,
			`DELETE FROM resource_provider_aggregates WHERE resource_provider_id = ?`,
			`DELETE FROM resource_provider_traits WHERE resource_provider_id = ?`,
		} {
			if _, err := tx.ExecContext(ctx, s.db.Rebind(q), p.ID); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, s.db.Rebind(`UPDATE resource_providers SET root_provider_id = NULL, updated_at = ? WHERE id = ? AND root_provider_id = ?`), s.db.Now(), p.ID, p.ID); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, s.db.Rebind(`DELETE FROM resource_providers WHERE id = ?`), p.ID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return inventory.Errorf(inventory.ErrNotFound, "", "No resource provider with uuid %s found for delete", uuid)
		}
		return nil
	})
}
