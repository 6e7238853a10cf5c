package celldb

import (
	"context"
	"database/sql"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/rpctl/rpctl/migrate"
	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/internal/sqlutil"
)

var _ migrate.VIFCell = (*Cell)(nil)

// hasVIFTables: rpctl's own schema (the embedded file, rpctl init) has no
// virtual_interfaces or instance_info_caches: such a cell has nothing for
// fill_virtual_interface_list.
func (c *Cell) hasVIFTables(ctx context.Context) (bool, error) {
	for _, t := range []string{"virtual_interfaces", "instance_info_caches"} {
		if ok, err := c.DB.TableExists(ctx, t); err != nil || !ok {
			return false, err
		}
	}
	return true, nil
}

// VIFMarker implements migrate.VIFCell (_get_marker_for_migrate_instances:
// the first row of the fake instance, deleted or not).
func (c *Cell) VIFMarker(ctx context.Context) (*string, error) {
	if ok, err := c.hasVIFTables(ctx); err != nil || !ok {
		return nil, err
	}
	var tag []sql.NullString
	if err := c.DB.SelectContext(ctx, &tag, c.DB.Rebind(`SELECT tag FROM virtual_interfaces WHERE instance_uuid = ? LIMIT 1`), migrate.FakeInstanceUUID); err != nil {
		return nil, c.DB.Errorf("read fill_virtual_interface_list's marker: %w", storage.CleanError(err))
	}
	if len(tag) == 0 || !tag[0].Valid {
		return nil, nil
	}
	return &tag[0].String, nil
}

// VIFInstances implements migrate.VIFCell: instance_get_all_by_filters_sort's
// query for {'deleted': False} (deleted = 0, vm_state not 'soft-delete' or
// NULL, hidden false or NULL), ORDER BY created_at, id, with oslo.db's
// paginate_query marker criteria: (created_at > m.created_at OR
// (created_at = m.created_at AND id > m.id)), or id > m.id alone when the
// marker's created_at is NULL. The info cache is the live one
// (instance_info_cache_get; instance_uuid is unique there).
func (c *Cell) VIFInstances(ctx context.Context, marker *string, limit int) ([]migrate.VIFInstance, error) {
	if ok, err := c.hasVIFTables(ctx); err != nil || !ok {
		return nil, err
	}
	where, args := "", []any{}
	if marker != nil {
		var m []struct {
			CreatedAt sql.NullTime `db:"created_at"`
			ID        int64        `db:"id"`
		}
		if err := c.DB.SelectContext(ctx, &m, c.DB.Rebind(`SELECT created_at, id FROM instances WHERE uuid = ? LIMIT 1`), *marker); err != nil {
			return nil, c.DB.Errorf("read fill_virtual_interface_list's marker instance: %w", storage.CleanError(err))
		}
		if len(m) == 0 {
			return nil, c.DB.Errorf("marker %s: %w", *marker, migrate.ErrVIFMarkerNotFound)
		}
		if m[0].CreatedAt.Valid {
			where = ` AND (i.created_at > ? OR (i.created_at = ? AND i.id > ?))`
			t := m[0].CreatedAt.Time
			args = append(args, c.DB.TimeArg(&t), c.DB.TimeArg(&t), m[0].ID)
		} else {
			where = ` AND i.id > ?`
			args = append(args, m[0].ID)
		}
	}
	rows, err := c.DB.QueryContext(ctx, c.DB.Rebind(`SELECT i.uuid, ic.network_info FROM instances i
		LEFT JOIN instance_info_caches ic ON ic.instance_uuid = i.uuid AND ic.deleted = 0
		WHERE i.deleted = 0 AND (i.vm_state != 'soft-delete' OR i.vm_state IS NULL) AND (i.hidden = 0 OR i.hidden IS NULL)`+where+`
		ORDER BY i.created_at ASC, i.id ASC LIMIT ?`), append(args, limit)...)
	if err != nil {
		return nil, c.DB.Errorf("read instances: %w", storage.CleanError(err))
	}
	defer rows.Close()
	var out []migrate.VIFInstance
	for rows.Next() {
		var in migrate.VIFInstance
		var nw sql.NullString
		if err := rows.Scan(&in.UUID, &nw); err != nil {
			return nil, c.DB.Errorf("read instances: %w", storage.CleanError(err))
		}
		in.NetworkInfo = sqlutil.StrPtr(nw)
		out = append(out, in)
	}
	if err := rows.Err(); err != nil {
		return nil, c.DB.Errorf("read instances: %w", storage.CleanError(err))
	}
	return out, nil
}

// InstanceVIFs implements migrate.VIFCell (virtual_interface_get_by_instance).
func (c *Cell) InstanceVIFs(ctx context.Context, instanceUUID string) ([]migrate.VIFRow, error) {
	rows, err := c.DB.QueryContext(ctx, c.DB.Rebind(`SELECT id, uuid, tag FROM virtual_interfaces
		WHERE instance_uuid = ? AND deleted = 0 ORDER BY created_at ASC, id ASC`), instanceUUID)
	if err != nil {
		return nil, c.DB.Errorf("read virtual_interfaces: %w", storage.CleanError(err))
	}
	defer rows.Close()
	var out []migrate.VIFRow
	for rows.Next() {
		var v migrate.VIFRow
		var u, tag sql.NullString
		if err := rows.Scan(&v.ID, &u, &tag); err != nil {
			return nil, c.DB.Errorf("read virtual_interfaces: %w", storage.CleanError(err))
		}
		v.UUID = u.String
		v.Tag = sqlutil.StrPtr(tag)
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, c.DB.Errorf("read virtual_interfaces: %w", storage.CleanError(err))
	}
	return out, nil
}

// ReplaceVIFs implements migrate.VIFCell: the rows
// _regenerate_vif_list_base_on_cache writes (VirtualInterface.destroy, an
// oslo.db soft delete; VirtualInterface.create, network_id NULL), in one
// transaction where Nova commits each row alone.
func (c *Cell) ReplaceVIFs(ctx context.Context, instanceUUID string, old []int64, vifs []migrate.NewVIF, now time.Time) error {
	db := c.DB
	return db.Tx(ctx, func(tx *sqlx.Tx) error {
		for _, id := range old {
			if _, err := tx.ExecContext(ctx, db.Rebind(`UPDATE virtual_interfaces SET deleted = id, deleted_at = ?, updated_at = updated_at WHERE id = ? AND deleted = 0`), db.TimeArg(&now), id); err != nil {
				return db.Errorf("soft-delete virtual_interfaces: %w", storage.CleanError(err))
			}
		}
		for _, v := range vifs {
			if _, err := tx.ExecContext(ctx, db.Rebind(`INSERT INTO virtual_interfaces (created_at, deleted, address, instance_uuid, uuid, tag) VALUES (?, 0, ?, ?, ?, ?)`),
				db.TimeArg(&now), v.Address, instanceUUID, v.UUID, v.Tag); err != nil {
				return db.Errorf("create virtual interface %s: %w", v.UUID, storage.CleanError(err))
			}
		}
		return nil
	})
}

// fakeInstanceRelated are the tables instance_destroy soft-deletes an
// instance's rows of, by instance_uuid (nova/db/main/api.py
// models_to_delete).
var fakeInstanceRelated = [...]string{"security_group_instance_association", "instance_info_caches", "instance_metadata",
	"instance_faults", "instance_extra", "instance_system_metadata", "block_device_mapping", "migrations", "virtual_interfaces"}

// SetVIFMarker implements migrate.VIFCell, as
// _set_or_delete_marker_for_migrate_instances: the marker rows deleted;
// when the cell has no fake instance (deleted or not), the rows
// objects.Instance.create writes for one with only uuid, project_id and
// user_id set (by instance_create: the default security group of the
// admin context's NULL project unless there is one, the instance with the
// model's defaults, its info cache, its instance_extra, its EC2 id
// mapping) and instance_destroy's soft deletes; then the new marker row.
// One transaction (Nova makes the security group in one of its own), run
// again when a concurrent run created the fake instance first.
func (c *Cell) SetVIFMarker(ctx context.Context, marker string, now time.Time) error {
	db := c.DB
	fake := migrate.FakeInstanceUUID
	at := db.TimeArg(&now)
	return db.EnsureTx(ctx, func(tx *sqlx.Tx) error {
		exec := func(q string, args ...any) error {
			if _, err := tx.ExecContext(ctx, db.Rebind(q), args...); err != nil {
				return db.Errorf("fill_virtual_interface_list marker: %w", storage.CleanError(err))
			}
			return nil
		}
		if err := exec(`DELETE FROM virtual_interfaces WHERE instance_uuid = ?`, fake); err != nil {
			return err
		}
		var n int
		if err := tx.GetContext(ctx, &n, db.Rebind(`SELECT COUNT(*) FROM instances WHERE uuid = ?`), fake); err != nil {
			return db.Errorf("read instances: %w", storage.CleanError(err))
		}
		if n == 0 {
			var groups int
			if err := tx.GetContext(ctx, &groups, `SELECT COUNT(*) FROM security_groups WHERE deleted = 0 AND project_id IS NULL AND name = 'default'`); err != nil {
				return db.Errorf("read security_groups: %w", storage.CleanError(err))
			}
			steps := []struct {
				q    string
				args []any
			}{
				{`INSERT INTO instances (created_at, deleted, uuid, project_id, user_id, shutdown_terminate, disable_terminate, cleaned, hidden) VALUES (?, 0, ?, ?, ?, 0, 0, 0, 0)`, []any{at, fake, fake, fake}},
				{`INSERT INTO instance_info_caches (created_at, deleted, instance_uuid) VALUES (?, 0, ?)`, []any{at, fake}},
				{`INSERT INTO instance_extra (created_at, deleted, instance_uuid) VALUES (?, 0, ?)`, []any{at, fake}},
				{`INSERT INTO instance_id_mappings (created_at, deleted, uuid) VALUES (?, 0, ?)`, []any{at, fake}},
				// instance_destroy, with Instance.destroy's constraint
				// (host IS NULL).
				{`UPDATE instances SET deleted = id, deleted_at = ?, updated_at = updated_at WHERE uuid = ? AND deleted = 0 AND host IS NULL`, []any{at, fake}},
			}
			if groups == 0 {
				steps = append([]struct {
					q    string
					args []any
				}{{`INSERT INTO security_groups (created_at, deleted, name, description) VALUES (?, 0, 'default', 'default')`, []any{at}}}, steps...)
			}
			for _, s := range steps {
				if err := exec(s.q, s.args...); err != nil {
					return err
				}
			}
			for _, t := range fakeInstanceRelated {
				if err := exec(`UPDATE `+t+` SET deleted = id, deleted_at = ?, updated_at = updated_at WHERE instance_uuid = ? AND deleted = 0`, at, fake); err != nil {
					return err
				}
			}
			// InstanceIdMapping is filtered by its uuid column.
			if err := exec(`UPDATE instance_id_mappings SET deleted = id, deleted_at = ?, updated_at = updated_at WHERE uuid = ? AND deleted = 0`, at, fake); err != nil {
				return err
			}
			if err := exec(`DELETE FROM tags WHERE resource_id = ?`, fake); err != nil {
				return err
			}
			if err := exec(`DELETE FROM console_auth_tokens WHERE instance_uuid = ?`, fake); err != nil {
				return err
			}
		}
		return exec(`INSERT INTO virtual_interfaces (created_at, deleted, address, instance_uuid, uuid, tag) VALUES (?, 0, ?, ?, ?, ?)`,
			at, "ff:ff:ff:ff:ff:ff/"+fake, fake, fake, marker)
	})
}
