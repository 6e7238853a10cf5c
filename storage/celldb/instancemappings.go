package celldb

import (
	"context"
	"database/sql"

	"github.com/jmoiron/sqlx"
	"github.com/rpctl/rpctl/migrate"
	"github.com/rpctl/rpctl/storage/internal/sqlutil"
)

var _ migrate.InstanceCell = (*Cell)(nil)

// DeletedInstances implements migrate.InstanceCell: the instances among
// uuids that instance_get_all_by_filters_sort returns for deleted=True,
// soft_deleted=True (deleted = id, or vm_state 'soft-delete').
func (c *Cell) DeletedInstances(ctx context.Context, uuids []string) (map[string]bool, error) {
	out := map[string]bool{}
	err := c.DB.ReadTx(ctx, func(tx *sqlx.Tx) error {
		return sqlutil.SelectIn(ctx, c.DB, tx, `SELECT uuid FROM instances
			WHERE (deleted = id OR vm_state = 'soft-delete') AND uuid IN (%s)`, uuids, func(r *sql.Rows) error {
			var u string
			if err := r.Scan(&u); err != nil {
				return err
			}
			out[u] = true
			return nil
		})
	})
	return out, err
}

// InstanceUserIDs implements migrate.InstanceCell: every instance among
// uuids, deleted ones included (populate_user_id's query has no deleted
// filter).
func (c *Cell) InstanceUserIDs(ctx context.Context, uuids []string) (map[string]*string, error) {
	out := map[string]*string{}
	err := c.DB.ReadTx(ctx, func(tx *sqlx.Tx) error {
		return sqlutil.SelectIn(ctx, c.DB, tx, `SELECT uuid, user_id FROM instances WHERE uuid IN (%s)`, uuids, func(r *sql.Rows) error {
			var u string
			var uid sql.NullString
			if err := r.Scan(&u, &uid); err != nil {
				return err
			}
			if uid.Valid {
				s := uid.String
				out[u] = &s
			} else {
				out[u] = nil
			}
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
