package celldb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/rpctl/rpctl/claims"
	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/internal/sqlutil"
)

// Cell is one Nova cell database: what the claims commands (claims.Cell,
// claims.CellView), the migrations (migrate.Cell) and the upgrade checks
// (status.Cell) read and write there.
type Cell struct {
	DB *storage.DB
	// hasBDM is nil until block_device_mapping's presence was checked: the
	// schema rpctl creates has no such table (every instance then counts
	// as booted from volume exactly when it has no image_ref, Nova's rule
	// for instances without a root block device).
	hasBDM *bool
}

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
func (c *Cell) Instances(ctx context.Context, after *claims.Page, limit int, uuid string) ([]claims.Instance, error) {
	db := c.DB
	var where []string
	var args []any
	where = append(where, healInstanceFilter)
	if uuid != "" {
		where = append(where, "i.uuid = ?")
		args = append(args, uuid)
	}
	if after != nil {
		if after.CreatedAt == nil {
			where = append(where, "(i.created_at IS NOT NULL OR i.id > ?)")
			args = append(args, after.ID)
		} else {
			t := db.TimeArg(after.CreatedAt)
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
		return nil, db.Errorf("read instances: %w", storage.CleanError(err))
	}
	out := make([]claims.Instance, len(rows))
	uuids := make([]string, len(rows))
	for i, r := range rows {
		out[i] = claims.Instance{ID: r.ID, UUID: r.UUID, CreatedAt: sqlutil.TimePtr(r.CreatedAt), ProjectID: r.ProjectID, UserID: r.UserID,
			ImageRef: r.ImageRef, Host: sqlutil.StrPtr(r.Host), Node: sqlutil.StrPtr(r.Node), TaskState: sqlutil.StrPtr(r.TaskState), FlavorJSON: sqlutil.StrPtr(r.Flavor)}
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
func (c *Cell) rootIsVolume(ctx context.Context, uuids []string) (map[string]bool, error) {
	db := c.DB
	if c.hasBDM == nil {
		ok, err := db.TableExists(ctx, "block_device_mapping")
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
WHERE deleted = 0 AND boot_index = 0 AND instance_uuid IN (`+sqlutil.InList(len(uuids))+`) ORDER BY id`), args...)
	if err != nil {
		return nil, db.Errorf("read block_device_mapping: %w", storage.CleanError(err))
	}
	defer rows.Close()
	for rows.Next() {
		var u, dest string
		if err := rows.Scan(&u, &dest); err != nil {
			return nil, db.Errorf("read block_device_mapping: %w", storage.CleanError(err))
		}
		if _, seen := out[u]; !seen {
			out[u] = dest == "volume"
		}
	}
	return out, rows.Err()
}

// CountInstances implements claims.InstanceCounter: the rows Instances
// walks, counted as it filters them.
func (c *Cell) CountInstances(ctx context.Context) (int, error) {
	var n int
	if err := c.DB.GetContext(ctx, &n, `SELECT COUNT(*) FROM instances i WHERE `+healInstanceFilter); err != nil {
		return 0, c.DB.Errorf("count instances: %w", storage.CleanError(err))
	}
	return n, nil
}

// healInstanceFilter is what Instances and CountInstances read: live rows
// that are not soft-deleted.
const healInstanceFilter = "i.deleted = 0 AND (i.vm_state IS NULL OR i.vm_state <> 'soft-delete')"

// ComputeNodeUUID is ComputeNode.get_by_host_and_nodename(host, node).uuid.
func (c *Cell) ComputeNodeUUID(ctx context.Context, host, node string) (string, error) {
	db := c.DB
	var u sql.NullString
	err := db.GetContext(ctx, &u, db.Rebind(`SELECT uuid FROM compute_nodes WHERE host = ? AND hypervisor_hostname = ? AND deleted = 0 ORDER BY id LIMIT 1`), host, node)
	if errors.Is(err, sql.ErrNoRows) {
		return "", claims.ErrComputeHostNotFound
	}
	if err != nil {
		return "", db.Errorf("read compute_nodes: %w", storage.CleanError(err))
	}
	return sqlutil.FoldUUID(u.String), nil
}

var (
	_ claims.NodeBatcher     = (*Cell)(nil)
	_ claims.InstanceCounter = (*Cell)(nil)
)

// nodesPerRead bounds the lookups of one ComputeNodeUUIDs statement (SQLite
// takes at most 500 SELECTs in one compound statement).
const nodesPerRead = 200

// ComputeNodeUUIDs implements claims.NodeBatcher: ComputeNodeUUID's query
// for each key, as scalar subqueries of one statement, so that each key is
// compared exactly as it alone would be (the databases' collation, the
// oldest live row first).
func (c *Cell) ComputeNodeUUIDs(ctx context.Context, keys []claims.HostNode) (map[claims.HostNode]string, error) {
	db := c.DB
	out := make(map[claims.HostNode]string, len(keys))
	for start := 0; start < len(keys); start += nodesPerRead {
		chunk := keys[start:min(start+nodesPerRead, len(keys))]
		var q strings.Builder
		args := make([]any, 0, 2*len(chunk))
		for i, k := range chunk {
			if i > 0 {
				q.WriteString(" UNION ALL ")
			}
			// COALESCE: a NULL uuid is "", NULL is no such node.
			fmt.Fprintf(&q, "SELECT %d, (SELECT COALESCE(uuid, '') FROM compute_nodes WHERE host = ? AND hypervisor_hostname = ? AND deleted = 0 ORDER BY id LIMIT 1)", i)
			args = append(args, k.Host, k.Node)
		}
		rows, err := db.QueryContext(ctx, db.Rebind(q.String()), args...)
		if err != nil {
			return nil, db.Errorf("read compute_nodes: %w", storage.CleanError(err))
		}
		for rows.Next() {
			var i int
			var u sql.NullString
			if err := rows.Scan(&i, &u); err != nil {
				rows.Close()
				return nil, db.Errorf("read compute_nodes: %w", storage.CleanError(err))
			}
			if u.Valid && i >= 0 && i < len(chunk) {
				out[chunk[i]] = u.String
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, db.Errorf("read compute_nodes: %w", storage.CleanError(err))
		}
	}
	return out, nil
}

// ComputeNodes lists the cell's live compute nodes that have a uuid.
func (v *Cell) ComputeNodes(ctx context.Context) ([]claims.NodeRef, error) {
	nodes, err := ListComputeNodes(ctx, v.DB, false)
	if err != nil {
		return nil, err
	}
	out := make([]claims.NodeRef, 0, len(nodes))
	for _, n := range nodes {
		if n.UUID != nil {
			out = append(out, claims.NodeRef{UUID: *n.UUID, Host: storage.NullString(sqlutil.SQLStr(n.Host)), Node: storage.NullString(sqlutil.SQLStr(n.HypervisorHostname))})
		}
	}
	return out, nil
}

// InstanceStates reads every instance of the cell, deleted ones included
// (claims list says "deleted" for them).
func (v *Cell) InstanceStates(ctx context.Context) ([]claims.InstanceState, error) {
	cell := v.DB
	rows, err := cell.QueryContext(ctx, `SELECT uuid, COALESCE(host, ''), COALESCE(node, ''), COALESCE(vm_state, ''), COALESCE(task_state, ''),
		COALESCE(deleted, 0) <> 0 FROM instances ORDER BY id`)
	if err != nil {
		return nil, cell.Errorf("read instances: %w", storage.CleanError(err))
	}
	defer rows.Close()
	var out []claims.InstanceState
	for rows.Next() {
		var i claims.InstanceState
		if err := rows.Scan(&i.UUID, &i.Host, &i.Node, &i.VMState, &i.TaskState, &i.Deleted); err != nil {
			return nil, cell.Errorf("read instances: %w", storage.CleanError(err))
		}
		out = append(out, i)
	}
	if err := rows.Err(); err != nil {
		return nil, cell.Errorf("read instances: %w", storage.CleanError(err))
	}
	return out, nil
}

// MigrationStates reads the cell's non-deleted migrations with a uuid.
func (v *Cell) MigrationStates(ctx context.Context) ([]claims.MigrationState, error) {
	cell := v.DB
	rows, err := cell.QueryContext(ctx, `SELECT uuid, COALESCE(instance_uuid, ''), COALESCE(source_compute, ''), COALESCE(source_node, ''),
		COALESCE(dest_compute, ''), COALESCE(dest_node, ''), COALESCE(status, ''), COALESCE(migration_type, '')
		FROM migrations WHERE uuid IS NOT NULL AND COALESCE(deleted, 0) = 0 ORDER BY id`)
	if err != nil {
		return nil, cell.Errorf("read migrations: %w", storage.CleanError(err))
	}
	defer rows.Close()
	var out []claims.MigrationState
	for rows.Next() {
		var m claims.MigrationState
		if err := rows.Scan(&m.UUID, &m.InstanceUUID, &m.SourceCompute, &m.SourceNode, &m.DestCompute, &m.DestNode, &m.Status, &m.Type); err != nil {
			return nil, cell.Errorf("read migrations: %w", storage.CleanError(err))
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, cell.Errorf("read migrations: %w", storage.CleanError(err))
	}
	return out, nil
}
