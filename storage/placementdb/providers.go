package placementdb

import (
	"context"
	"database/sql"
	"errors"
	"sort"
	"strconv"
	"strings"

	"github.com/google/uuid"
	"github.com/jmoiron/sqlx"

	"github.com/rpctl/rpctl/candidates"
	"github.com/rpctl/rpctl/inventory"
	"github.com/rpctl/rpctl/storage"
)

// ListProviders is GET /resource_providers (objects/resource_provider.py
// get_all_by_filters): the SQL narrows by name, uuid and tree; aggregates,
// traits and resources are then checked per provider as Placement's
// subqueries do.
func (s *Store) ListProviders(ctx context.Context, f inventory.ProviderFilter) ([]inventory.Provider, error) {
	if f.UUID != "" && !candidates.UUIDLike(f.UUID) {
		return nil, inventory.Errorf(inventory.ErrBadRequest, "", "Invalid query string parameters: '%s' is not a 'uuid'", f.UUID)
	}
	if f.InTree != "" && !candidates.UUIDLike(f.InTree) {
		return nil, inventory.Errorf(inventory.ErrBadRequest, "", "Invalid query string parameters: '%s' is not a 'uuid'", f.InTree)
	}
	var memberOf [][]string
	var forbiddenAggs []string
	for _, v := range f.MemberOf {
		req, forb, err := parseMemberOf(v)
		if err != nil {
			return nil, err
		}
		if len(req) > 0 {
			memberOf = append(memberOf, req)
		}
		forbiddenAggs = append(forbiddenAggs, forb...)
	}
	var requiredTraits [][]string
	var forbiddenTraits []string
	for _, v := range f.Required {
		req, forb, err := parseRequired(v)
		if err != nil {
			return nil, err
		}
		requiredTraits = append(requiredTraits, req...)
		forbiddenTraits = append(forbiddenTraits, forb...)
	}
	resources, err := parseResources(f.Resources)
	if err != nil {
		return nil, err
	}
	var out []inventory.Provider
	err = s.db.ReadTx(ctx, func(tx *sqlx.Tx) error {
		where, args := []string{"1 = 1"}, []any{}
		if f.Name != "" {
			where, args = append(where, "rp.name = ?"), append(args, f.Name)
		}
		if f.UUID != "" {
			where, args = append(where, "rp.uuid = ?"), append(args, f.UUID)
		}
		if f.InTree != "" {
			var root int64
			err := tx.GetContext(ctx, &root, s.db.Rebind(`SELECT root_provider_id FROM resource_providers WHERE uuid = ?`), f.InTree)
			if errors.Is(err, sql.ErrNoRows) {
				return nil
			}
			if err != nil {
				return err
			}
			where, args = append(where, "rp.root_provider_id = ?"), append(args, root)
		}
		rows, err := tx.QueryxContext(ctx, s.db.Rebind(providerSelect+" WHERE "+strings.Join(where, " AND ")+" ORDER BY rp.id"), args...)
		if err != nil {
			return err
		}
		var ps []provRow
		for rows.Next() {
			p, err := scanProvider(rows)
			if err != nil {
				rows.Close()
				return err
			}
			ps = append(ps, p)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		keep := func(provRow) bool { return true }
		if len(memberOf) > 0 || len(forbiddenAggs) > 0 {
			aggs, err := s.links(ctx, tx, `SELECT a.resource_provider_id, pa.uuid FROM resource_provider_aggregates a JOIN placement_aggregates pa ON pa.id = a.aggregate_id`)
			if err != nil {
				return err
			}
			prev := keep
			keep = func(p provRow) bool {
				return prev(p) && allAnyOf(aggs[p.ID], memberOf) && !hasAny(aggs[p.ID], forbiddenAggs)
			}
		}
		if len(requiredTraits) > 0 || len(forbiddenTraits) > 0 {
			ids, _, err := s.nameIDs(ctx, tx, `SELECT id, name FROM traits`)
			if err != nil {
				return err
			}
			var missing []string
			for _, set := range append(requiredTraits, forbiddenTraits) {
				for _, t := range set {
					if _, ok := ids[t]; !ok {
						missing = append(missing, t)
					}
				}
			}
			if len(missing) > 0 {
				return inventory.Errorf(inventory.ErrBadRequest, "", "Invalid trait(s) in \"required\" parameter: No such trait(s): %s.", strings.Join(missing, ", "))
			}
			traits, err := s.links(ctx, tx, `SELECT t.resource_provider_id, tr.name FROM resource_provider_traits t JOIN traits tr ON tr.id = t.trait_id`)
			if err != nil {
				return err
			}
			prev := keep
			keep = func(p provRow) bool {
				return prev(p) && allAnyOf(traits[p.ID], requiredTraits) && !hasAny(traits[p.ID], forbiddenTraits)
			}
		}
		if len(resources) > 0 {
			ids, _, err := s.classIDs(ctx, tx)
			if err != nil {
				return err
			}
			fits := map[int64]int{}
			for _, r := range resources {
				if _, ok := ids[r.class]; !ok {
					return inventory.Errorf(inventory.ErrBadRequest, "", "Invalid resource class in resources parameter: No such resource class %s.", r.class)
				}
				// _capacity_check_clause, as SQL so that the float
				// arithmetic is the server's, as in Placement.
				var got []int64
				err := tx.SelectContext(ctx, &got, s.db.Rebind(`SELECT i.resource_provider_id FROM inventories i
					LEFT JOIN (SELECT resource_provider_id, SUM(used) AS used FROM allocations WHERE resource_class_id = ? GROUP BY resource_provider_id) u
					ON u.resource_provider_id = i.resource_provider_id
					WHERE i.resource_class_id = ? AND COALESCE(u.used, 0) + ? <= (i.total - i.reserved) * i.allocation_ratio
					AND i.min_unit <= ? AND i.max_unit >= ? AND (? % i.step_size) = 0`),
					ids[r.class], ids[r.class], r.amount, r.amount, r.amount, r.amount)
				if err != nil {
					return err
				}
				for _, id := range got {
					fits[id]++
				}
			}
			prev := keep
			keep = func(p provRow) bool { return prev(p) && fits[p.ID] == len(resources) }
		}
		for _, p := range ps {
			if keep(p) {
				out = append(out, p.Provider)
			}
		}
		return nil
	})
	if err != nil {
		return nil, s.fail("list resource providers", err)
	}
	return out, nil
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

// parseMemberOf is util.normalize_member_of_qs_params for one value.
func parseMemberOf(v string) (required, forbidden []string, err error) {
	neg := strings.HasPrefix(v, "!")
	v = strings.TrimPrefix(v, "!")
	var uuids []string
	if rest, ok := strings.CutPrefix(v, "in:"); ok {
		uuids = strings.Split(rest, ",")
	} else {
		uuids = []string{v}
	}
	for _, u := range uuids {
		if !candidates.UUIDLike(u) {
			return nil, nil, inventory.Errorf(inventory.ErrBadRequest, "", "Invalid query string parameters: Expected 'member_of' parameter to contain valid UUID(s). Got: %s", u)
		}
	}
	if neg {
		return nil, uuids, nil
	}
	return uuids, nil, nil
}

// parseRequired is util.normalize_traits_qs_params for one value: a
// conjunction of plain traits, "!T" forbidden ones and "in:A,B" any-of sets.
func parseRequired(v string) (required [][]string, forbidden []string, err error) {
	if rest, ok := strings.CutPrefix(v, "in:"); ok {
		set := strings.Split(rest, ",")
		for _, t := range set {
			if t == "" || strings.HasPrefix(t, "!") {
				return nil, nil, inventory.Errorf(inventory.ErrBadRequest, "", "Invalid query string parameters: Expected 'required' parameter value of the form: in:HW_CPU_X86_VMX,CUSTOM_MAGIC. Got: %s", v)
			}
		}
		return [][]string{set}, nil, nil
	}
	for _, t := range strings.Split(v, ",") {
		if name, ok := strings.CutPrefix(t, "!"); ok && name != "" {
			forbidden = append(forbidden, name)
		} else if t != "" && !ok {
			required = append(required, []string{t})
		} else {
			return nil, nil, inventory.Errorf(inventory.ErrBadRequest, "", "Invalid query string parameters: Expected 'required' parameter value of the form: HW_CPU_X86_VMX,!CUSTOM_MAGIC. Got: %s", v)
		}
	}
	return required, forbidden, nil
}

type amount struct {
	class  string
	amount int64
}

// parseResources is util.normalize_resources_qs_param.
func parseResources(v string) ([]amount, error) {
	if v == "" {
		return nil, nil
	}
	var out []amount
	seen := map[string]bool{}
	for _, part := range strings.Split(v, ",") {
		rc, num, ok := strings.Cut(part, ":")
		n, err := strconv.ParseInt(num, 10, 64)
		if !ok || err != nil || n < 1 || rc == "" {
			return nil, inventory.Errorf(inventory.ErrBadRequest, "",
				"Badly formed resources parameter. Expected resources query string parameter in form: ?resources=VCPU:2,MEMORY_MB:1024. Got: %s.", v)
		}
		if !seen[rc] {
			out = append(out, amount{rc, n})
			seen[rc] = true
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].class < out[j].class })
	return out, nil
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
