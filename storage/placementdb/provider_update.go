package placementdb

import (
	"context"
	"database/sql"
	"errors"

	"github.com/jmoiron/sqlx"

	"github.com/rpctl/rpctl/claims"
	"github.com/rpctl/rpctl/inventory"
	"github.com/rpctl/rpctl/storage"
)

// UpdateProvider is PUT /resource_providers/{uuid} at 1.37, as Placement's
// ResourceProvider._update_in_db: the name; a new parent must exist and
// not be in the provider's subtree; "" un-parents; every provider of the
// subtree takes the new root. The generation does not move (an update is
// no change of inventory, traits or aggregates).
func (s *Store) UpdateProvider(ctx context.Context, uuid string, u inventory.ProviderUpdate) (inventory.Provider, error) {
	if u.Name == "" || len([]rune(u.Name)) > 200 {
		return inventory.Provider{}, inventory.Errorf(inventory.ErrBadRequest, "", "JSON does not validate: name must be 1 to 200 characters, got %q", u.Name)
	}
	var out inventory.Provider
	err := s.writeTx(ctx, "update resource provider", func(tx *sqlx.Tx) error {
		me, err := s.provider(ctx, tx, uuid, notFoundMsg)
		if err != nil {
			return err
		}
		bad := func(reason string) error {
			return inventory.Errorf(inventory.ErrBadRequest, "", "Unable to save resource provider %s: Object action update failed because: %s", me.UUID, reason)
		}
		parentID, rootID := sqlNull(0), me.RootID
		if me.ParentUUID != "" {
			pr, err := s.provider(ctx, tx, me.ParentUUID, notFoundMsg)
			if err != nil {
				return err
			}
			parentID = sqlNull(pr.ID)
		}
		var subtree []int64
		if u.ParentUUID != nil && *u.ParentUUID != me.ParentUUID {
			if subtree, err = s.subtree(ctx, tx, me.ID, me.RootID); err != nil {
				return err
			}
			if *u.ParentUUID == "" {
				parentID, rootID = sqlNull(0), me.ID
				me.RootUUID = me.UUID
			} else {
				pr, err := s.provider(ctx, tx, *u.ParentUUID, notFoundMsg)
				if errors.Is(err, inventory.ErrNotFound) {
					return bad("parent provider UUID does not exist.")
				}
				if err != nil {
					return err
				}
				for _, id := range subtree {
					if id == pr.ID {
						return bad("creating loop in the provider tree is not allowed.")
					}
				}
				parentID, rootID = sqlNull(pr.ID), pr.RootID
				me.RootUUID = pr.RootUUID
			}
			me.ParentUUID = *u.ParentUUID
		}
		now := s.db.Now()
		if _, err := tx.ExecContext(ctx, s.db.Rebind(`UPDATE resource_providers SET name = ?, parent_provider_id = ?, root_provider_id = ?, updated_at = ? WHERE id = ?`),
			u.Name, parentID, rootID, now, me.ID); err != nil {
			if storage.IsDuplicate(err) {
				return inventory.Errorf(inventory.ErrConflict, inventory.CodeDuplicateName, "Conflicting resource provider name: %s already exists.", u.Name)
			}
			return err
		}
		for _, id := range subtree {
			if id == me.ID {
				continue
			}
			if _, err := tx.ExecContext(ctx, s.db.Rebind(`UPDATE resource_providers SET root_provider_id = ?, updated_at = ? WHERE id = ?`), rootID, now, id); err != nil {
				return err
			}
		}
		me.Name = u.Name
		out = me.Provider
		return nil
	})
	return out, err
}

// subtree lists the ids of provider id and its descendants, from the tree's
// parent links.
func (s *Store) subtree(ctx context.Context, tx *sqlx.Tx, id, rootID int64) ([]int64, error) {
	var links []struct {
		ID     int64  `db:"id"`
		Parent *int64 `db:"parent_provider_id"`
	}
	if err := tx.SelectContext(ctx, &links, s.db.Rebind(`SELECT id, parent_provider_id FROM resource_providers WHERE root_provider_id = ?`), rootID); err != nil {
		return nil, err
	}
	out := []int64{id}
	for i := 0; i < len(out); i++ {
		for _, l := range links {
			if l.Parent != nil && *l.Parent == out[i] {
				out = append(out, l.ID)
			}
		}
	}
	return out, nil
}

// sqlNull is a provider id column value; 0 is NULL (no parent).
func sqlNull(id int64) sql.NullInt64 { return sql.NullInt64{Int64: id, Valid: id != 0} }

// ProjectUsages is GET /usages at 1.38+, as Placement's
// usage.get_by_consumer_type: the project's (and user's) allocations summed
// by class and consumer type, with each type's count of consumers. The
// rows come in the order MariaDB's GROUP BY sorts them (class id, then
// type id, no type first) and each type's group in the order its first
// class came.
func (s *Store) ProjectUsages(ctx context.Context, project, user string) ([]inventory.UsageGroup, error) {
	q := `SELECT rc.name, SUM(a.used), ct.name
		FROM allocations a
		JOIN consumers c ON c.uuid = a.consumer_id
		LEFT JOIN consumer_types ct ON ct.id = c.consumer_type_id
		JOIN projects pr ON pr.id = c.project_id
		JOIN resource_classes rc ON rc.id = a.resource_class_id`
	cq := `SELECT ct.name, COUNT(DISTINCT a.consumer_id)
		FROM allocations a
		JOIN consumers c ON c.uuid = a.consumer_id
		LEFT JOIN consumer_types ct ON ct.id = c.consumer_type_id
		JOIN projects pr ON pr.id = c.project_id`
	where := ` WHERE pr.external_id = ?`
	args := []any{project}
	if user != "" {
		where = ` JOIN users u ON u.id = c.user_id WHERE pr.external_id = ? AND u.external_id = ?`
		args = append(args, user)
	}
	q += where + ` GROUP BY a.resource_class_id, c.consumer_type_id, rc.name, ct.name ORDER BY a.resource_class_id, c.consumer_type_id`
	cq += where + ` GROUP BY ct.name`
	var out []inventory.UsageGroup
	err := s.db.ReadTx(ctx, func(tx *sqlx.Tx) error {
		out = nil
		counts := map[string]int64{}
		crows, err := tx.QueryxContext(ctx, s.db.Rebind(cq), args...)
		if err != nil {
			return err
		}
		defer crows.Close()
		for crows.Next() {
			var ct sql.NullString
			var n int64
			if err := crows.Scan(&ct, &n); err != nil {
				return err
			}
			counts[consumerTypeName(ct)] = n
		}
		if err := crows.Err(); err != nil {
			return err
		}
		rows, err := tx.QueryxContext(ctx, s.db.Rebind(q), args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		at := map[string]int{}
		for rows.Next() {
			var rc string
			var n int64
			var ct sql.NullString
			if err := rows.Scan(&rc, &n, &ct); err != nil {
				return err
			}
			name := consumerTypeName(ct)
			k, ok := at[name]
			if !ok {
				k = len(out)
				at[name] = k
				out = append(out, inventory.UsageGroup{ConsumerType: name, Consumers: counts[name]})
			}
			out[k].Usages = append(out[k].Usages, inventory.ClassAmount{Class: rc, Amount: n})
		}
		return rows.Err()
	})
	if err != nil {
		return nil, s.fail("read allocations", err)
	}
	return out, nil
}

// consumerTypeName is Placement's name for a consumer's type:
// claims.UnknownConsumerType for none.
func consumerTypeName(ct sql.NullString) string {
	if !ct.Valid {
		return claims.UnknownConsumerType
	}
	return ct.String
}
