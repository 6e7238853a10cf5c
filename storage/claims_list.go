package storage

import (
	"context"
	"database/sql"

	"github.com/jmoiron/sqlx"

	"github.com/rpctl/rpctl/claims"
)

// ClaimsLedger is the Placement database side of claims list, audit and
// snapshot. It implements claims.Ledger.
type ClaimsLedger struct{ DB *DB }

// AllocationRows reads every allocation, ordered by consumer, provider id
// and class.
func (l ClaimsLedger) AllocationRows(ctx context.Context) ([]claims.AllocationRow, error) {
	p := l.DB
	if err := placementTablesPresent(ctx, p); err != nil {
		return nil, err
	}
	var out []claims.AllocationRow
	err := p.placementReadTx(ctx, func(tx *sqlx.Tx) error {
		return scanPlacementRows(ctx, p, tx, "allocations", `SELECT a.consumer_id, rp.id, rp.uuid, rp.name, COALESCE(root.uuid, rp.uuid), rc.name, a.used,
			c.id IS NOT NULL, COALESCE(pr.external_id, ''), COALESCE(us.external_id, ''), COALESCE(c.generation, 0),
			c.created_at, a.created_at
			FROM allocations a
			JOIN resource_providers rp ON rp.id = a.resource_provider_id
			LEFT JOIN resource_providers root ON root.id = rp.root_provider_id
			JOIN resource_classes rc ON rc.id = a.resource_class_id
			LEFT JOIN consumers c ON c.uuid = a.consumer_id
			LEFT JOIN projects pr ON pr.id = c.project_id
			LEFT JOIN users us ON us.id = c.user_id
			ORDER BY a.consumer_id, rp.id, rc.name`, func(rows *sql.Rows) error {
			var r claims.AllocationRow
			var name sql.NullString
			var created, allocCreated sql.NullTime
			if err := rows.Scan(&r.Consumer, &r.ProviderID, &r.ProviderUUID, &name, &r.RootUUID, &r.Class, &r.Used,
				&r.HasConsumer, &r.Project, &r.User, &r.Generation, &created, &allocCreated); err != nil {
				return err
			}
			r.ProviderName = name.String
			if !created.Valid {
				created = allocCreated
			}
			if created.Valid {
				r.CreatedAt = created.Time.UTC()
			}
			out = append(out, r)
			return nil
		})
	})
	return out, err
}

// ComputeNodes lists the cell's live compute nodes that have a uuid.
func (v *ClaimsCell) ComputeNodes(ctx context.Context) ([]claims.NodeRef, error) {
	nodes, err := ListComputeNodes(ctx, v.DB, false)
	if err != nil {
		return nil, err
	}
	out := make([]claims.NodeRef, 0, len(nodes))
	for _, n := range nodes {
		if n.UUID != nil {
			out = append(out, claims.NodeRef{UUID: *n.UUID, Host: nullString(sqlStr(n.Host)), Node: nullString(sqlStr(n.HypervisorHostname))})
		}
	}
	return out, nil
}

func sqlStr(s *string) sql.NullString {
	if s == nil {
		return sql.NullString{}
	}
	return sql.NullString{String: *s, Valid: true}
}

// InstanceStates reads every instance of the cell, deleted ones included
// (claims list says "deleted" for them).
func (v *ClaimsCell) InstanceStates(ctx context.Context) ([]claims.InstanceState, error) {
	cell := v.DB
	rows, err := cell.QueryContext(ctx, `SELECT uuid, COALESCE(host, ''), COALESCE(node, ''), COALESCE(vm_state, ''), COALESCE(task_state, ''),
		COALESCE(deleted, 0) <> 0 FROM instances ORDER BY id`)
	if err != nil {
		return nil, cell.Errorf("read instances: %w", CleanError(err))
	}
	defer rows.Close()
	var out []claims.InstanceState
	for rows.Next() {
		var i claims.InstanceState
		if err := rows.Scan(&i.UUID, &i.Host, &i.Node, &i.VMState, &i.TaskState, &i.Deleted); err != nil {
			return nil, cell.Errorf("read instances: %w", CleanError(err))
		}
		out = append(out, i)
	}
	if err := rows.Err(); err != nil {
		return nil, cell.Errorf("read instances: %w", CleanError(err))
	}
	return out, nil
}

// MigrationStates reads the cell's non-deleted migrations with a uuid.
func (v *ClaimsCell) MigrationStates(ctx context.Context) ([]claims.MigrationState, error) {
	cell := v.DB
	rows, err := cell.QueryContext(ctx, `SELECT uuid, COALESCE(instance_uuid, ''), COALESCE(source_compute, ''), COALESCE(source_node, ''),
		COALESCE(dest_compute, ''), COALESCE(dest_node, ''), COALESCE(status, ''), COALESCE(migration_type, '')
		FROM migrations WHERE uuid IS NOT NULL AND COALESCE(deleted, 0) = 0 ORDER BY id`)
	if err != nil {
		return nil, cell.Errorf("read migrations: %w", CleanError(err))
	}
	defer rows.Close()
	var out []claims.MigrationState
	for rows.Next() {
		var m claims.MigrationState
		if err := rows.Scan(&m.UUID, &m.InstanceUUID, &m.SourceCompute, &m.SourceNode, &m.DestCompute, &m.DestNode, &m.Status, &m.Type); err != nil {
			return nil, cell.Errorf("read migrations: %w", CleanError(err))
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, cell.Errorf("read migrations: %w", CleanError(err))
	}
	return out, nil
}
