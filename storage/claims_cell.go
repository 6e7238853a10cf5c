package storage

import (
	"context"
	"database/sql"
	"errors"
	"strings"

	"github.com/rpctl/rpctl/claims"
)

// ClaimsCell reads what the claims commands need from one cell database:
// healing (claims.Cell) and list, audit and snapshot (claims.CellView).
type ClaimsCell struct {
	DB *DB
	// hasBDM is nil until block_device_mapping's presence was checked: the
	// schema rpctl creates has no such table (every instance then counts
	// as booted from volume exactly when it has no image_ref, Nova's rule
	// for instances without a root block device).
	hasBDM *bool
}

var (
	_ claims.Cell     = (*ClaimsCell)(nil)
	_ claims.CellView = (*ClaimsCell)(nil)
)

// Name is the cell's name.
func (c *ClaimsCell) Name() string { return c.DB.Name }

type healInstanceRow struct {
	ID        int64          `db:"id"`
	UUID      string         `db:"uuid"`
	CreatedAt sql.NullTime   `db:"created_at"`
	ProjectID string         `db:"project_id"`
	UserID    string         `db:"user_id"`
	ImageRef  string         `db:"image_ref"`
	Host      sql.NullString `db:"host"`
	Node      sql.NullString `db:"node"`
	TaskState sql.NullString `db:"task_state"`
	Flavor    sql.NullString `db:"flavor"`
}

// Instances is InstanceList.get_by_filters({'deleted': False[, 'uuid']},
// sort_key='created_at', sort_dir='asc', marker, limit): live rows that are
// not soft-deleted, ordered by created_at then id (NULL first, as MySQL
// sorts them).
func (c *ClaimsCell) Instances(ctx context.Context, after *claims.Page, limit int, uuid string) ([]claims.Instance, error) {
	db := c.DB
	var where []string
	var args []any
	where = append(where, "i.deleted = 0", "(i.vm_state IS NULL OR i.vm_state <> 'soft-delete')")
	if uuid != "" {
		where = append(where, "i.uuid = ?")
		args = append(args, uuid)
	}
	if after != nil {
		if after.CreatedAt == nil {
			where = append(where, "(i.created_at IS NOT NULL OR i.id > ?)")
			args = append(args, after.ID)
		} else {
			t := db.timeArg(after.CreatedAt)
			where = append(where, "(i.created_at > ? OR (i.created_at = ? AND i.id > ?))")
			args = append(args, t, t, after.ID)
		}
	}
	q := `SELECT i.id, i.uuid, i.created_at, COALESCE(i.project_id, '') AS project_id, COALESCE(i.user_id, '') AS user_id,
	COALESCE(i.image_ref, '') AS image_ref, i.host, i.node, i.task_state, e.flavor
FROM instances i LEFT JOIN instance_extra e ON e.instance_uuid = i.uuid AND e.deleted = 0
WHERE ` + strings.Join(where, " AND ") + `
ORDER BY i.created_at, i.id LIMIT ?`
	args = append(args, limit)
	var rows []healInstanceRow
	if err := db.SelectContext(ctx, &rows, db.Rebind(q), args...); err != nil {
		return nil, db.Errorf("read instances: %w", CleanError(err))
	}
	out := make([]claims.Instance, len(rows))
	uuids := make([]string, len(rows))
	for i, r := range rows {
		out[i] = claims.Instance{ID: r.ID, UUID: r.UUID, CreatedAt: timePtr(r.CreatedAt), ProjectID: r.ProjectID, UserID: r.UserID,
			ImageRef: r.ImageRef, Host: strPtr(r.Host), Node: strPtr(r.Node), TaskState: strPtr(r.TaskState), FlavorJSON: strPtr(r.Flavor)}
		uuids[i] = r.UUID
	}
	roots, err := c.rootIsVolume(ctx, uuids)
	if err != nil {
		return nil, err
	}
	for i := range out {
		if v, ok := roots[out[i].UUID]; ok {
			out[i].RootIsVolume = &v
		}
	}
	return out, nil
}

// rootIsVolume is compute_utils.get_root_bdm(...).is_volume for each
// instance that has a root block device mapping (boot_index 0).
func (c *ClaimsCell) rootIsVolume(ctx context.Context, uuids []string) (map[string]bool, error) {
	db := c.DB
	if c.hasBDM == nil {
		ok, err := db.tableExists(ctx, "block_device_mapping")
		if err != nil {
			return nil, err
		}
		c.hasBDM = &ok
	}
	out := map[string]bool{}
	if !*c.hasBDM || len(uuids) == 0 {
		return out, nil
	}
	args := make([]any, len(uuids))
	for i, u := range uuids {
		args[i] = u
	}
	rows, err := db.QueryContext(ctx, db.Rebind(`SELECT instance_uuid, COALESCE(destination_type, '') FROM block_device_mapping
WHERE deleted = 0 AND boot_index = 0 AND instance_uuid IN (`+inList(len(uuids))+`) ORDER BY id`), args...)
	if err != nil {
		return nil, db.Errorf("read block_device_mapping: %w", CleanError(err))
	}
	defer rows.Close()
	for rows.Next() {
		var u, dest string
		if err := rows.Scan(&u, &dest); err != nil {
			return nil, db.Errorf("read block_device_mapping: %w", CleanError(err))
		}
		if _, seen := out[u]; !seen {
			out[u] = dest == "volume"
		}
	}
	return out, rows.Err()
}

// ComputeNodeUUID is ComputeNode.get_by_host_and_nodename(host, node).uuid.
func (c *ClaimsCell) ComputeNodeUUID(ctx context.Context, host, node string) (string, error) {
	db := c.DB
	var u sql.NullString
	err := db.GetContext(ctx, &u, db.Rebind(`SELECT uuid FROM compute_nodes WHERE host = ? AND hypervisor_hostname = ? AND deleted = 0 ORDER BY id LIMIT 1`), host, node)
	if errors.Is(err, sql.ErrNoRows) {
		return "", claims.ErrComputeHostNotFound
	}
	if err != nil {
		return "", db.Errorf("read compute_nodes: %w", CleanError(err))
	}
	return u.String, nil
}

// InstanceCell is the API database's instance mapping of an instance: the
// cell's name and uuid, found false when there is no mapping. A mapping
// without a cell (the instance was never scheduled) has cellUUID "".
func InstanceCell(ctx context.Context, api *DB, instance string) (cellName, cellUUID string, found bool, err error) {
	var r struct {
		Name sql.NullString `db:"name"`
		UUID sql.NullString `db:"uuid"`
	}
	err = api.GetContext(ctx, &r, api.Rebind(`SELECT c.name, c.uuid FROM instance_mappings m LEFT JOIN cell_mappings c ON c.id = m.cell_id WHERE m.instance_uuid = ?`), instance)
	if errors.Is(err, sql.ErrNoRows) {
		return "", "", false, nil
	}
	if err != nil {
		return "", "", false, api.Errorf("read instance_mappings: %w", CleanError(err))
	}
	return r.Name.String, r.UUID.String, true, nil
}
