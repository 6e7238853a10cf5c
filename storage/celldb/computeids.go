package celldb

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/rpctl/rpctl/migrate"
	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/internal/sqlutil"
)

var _ migrate.ComputeIDCell = (*Cell)(nil)

// InstancesWithoutComputeID implements migrate.ComputeIDCell with
// populate_instance_compute_id's query (nova/objects/instance.py: no
// deleted filter, no ORDER BY, as Nova's: the same plan gives the same
// order).
func (c *Cell) InstancesWithoutComputeID(ctx context.Context, limit int) ([]migrate.InstanceNode, error) {
	rows, err := c.DB.QueryContext(ctx, c.DB.Rebind(`SELECT id, uuid, host, node FROM instances WHERE compute_id IS NULL LIMIT ?`), limit)
	if sqlutil.IsUnknownColumn(err) {
		return nil, c.DB.Errorf("instances has no compute_id column: this cell's schema is older than Nova 28 (2023.2), which added it with populate_instance_compute_id; run the release's own nova-manage db sync first, or give --release the release this schema is of")
	}
	if err != nil {
		return nil, c.DB.Errorf("read instances: %w", storage.CleanError(err))
	}
	defer rows.Close()
	var out []migrate.InstanceNode
	for rows.Next() {
		var in migrate.InstanceNode
		var host, node sql.NullString
		if err := rows.Scan(&in.ID, &in.UUID, &host, &node); err != nil {
			return nil, c.DB.Errorf("read instances: %w", storage.CleanError(err))
		}
		in.Host, in.Node = sqlutil.StrPtr(host), sqlutil.StrPtr(node)
		out = append(out, in)
	}
	if err := rows.Err(); err != nil {
		return nil, c.DB.Errorf("read instances: %w", storage.CleanError(err))
	}
	return out, nil
}

// ComputeNodeByHostAndNode implements migrate.ComputeIDCell as
// compute_node_get_by_host_and_nodename reads it with read_deleted='yes'
// (nova/db/main/api.py _compute_node_select: host and hypervisor_hostname
// compared in SQL, ordered by id, the first row taken); a nil value is
// IS NULL, as SQLAlchemy writes a comparison with None.
func (c *Cell) ComputeNodeByHostAndNode(ctx context.Context, host, node *string) (migrate.NodeRef, bool, error) {
	q := `SELECT id, uuid FROM compute_nodes WHERE `
	var args []any
	if host == nil {
		q += `host IS NULL`
	} else {
		q += `host = ?`
		args = append(args, *host)
	}
	if node == nil {
		q += ` AND hypervisor_hostname IS NULL`
	} else {
		q += ` AND hypervisor_hostname = ?`
		args = append(args, *node)
	}
	q += ` ORDER BY id LIMIT 1`
	var ref migrate.NodeRef
	var uuid sql.NullString
	err := c.DB.QueryRowContext(ctx, c.DB.Rebind(q), args...).Scan(&ref.ID, &uuid)
	if errors.Is(err, sql.ErrNoRows) {
		return migrate.NodeRef{}, false, nil
	}
	if err != nil {
		return migrate.NodeRef{}, false, c.DB.Errorf("read compute_nodes: %w", storage.CleanError(err))
	}
	ref.UUID = sqlutil.StrPtr(uuid)
	return ref, true, nil
}

// SetInstanceComputeIDs implements migrate.ComputeIDCell: one transaction,
// one UPDATE per instance, updated_at stamped as the model's save does.
func (c *Cell) SetInstanceComputeIDs(ctx context.Context, ids map[int64]int64, now time.Time) (int, error) {
	return storage.UpdateEach(ctx, c.DB, `UPDATE instances SET compute_id = ?, updated_at = ? WHERE id = ? AND compute_id IS NULL`,
		"update instances compute_id", ids, now)
}
