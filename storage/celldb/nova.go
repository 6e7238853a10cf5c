package celldb

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"

	"github.com/jmoiron/sqlx"

	"github.com/rpctl/rpctl/internal/nova"
	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/internal/sqlutil"
)

// InsertCellRows writes rows into a cell database in one transaction, with
// their ids as given so that compute_nodes.service_id and the instances'
// hosts stay consistent.
//
// Rows of a release from Nova 28 (2023.2) on carry instances.compute_id and
// migrations.dest_compute_id (r.Shape): into an older schema they are
// refused with a sentence naming the column and what to do, not the
// driver's.
func InsertCellRows(ctx context.Context, db *storage.DB, r nova.CellRows) error {
	err := insertCellRows(ctx, db, r)
	if r.Shape.ComputeIDs && sqlutil.IsUnknownColumn(err) {
		return db.Errorf("the rows have instances.compute_id and migrations.dest_compute_id, which Nova 28 (2023.2) added, and this cell's schema has not: create it with the release's own nova-manage db sync (or rpctl init --release of that schema), or give --release the release this schema is of")
	}
	return err
}

func insertCellRows(ctx context.Context, db *storage.DB, r nova.CellRows) error {
	return db.Tx(ctx, func(tx *sqlx.Tx) error {
		if r.Replace {
			// Children first, so that the foreign keys hold.
			if err := sqlutil.ClearTables(ctx, db, tx, "instance_extra", "migrations", "instances", "compute_nodes", "services"); err != nil {
				return err
			}
		}
		if err := sqlutil.InsertAll(ctx, db, tx, "services", serviceCols, r.Services, func(s *nova.Service) []any {
			return []any{s.ID, db.TimeArg(s.CreatedAt), db.TimeArg(s.UpdatedAt), db.TimeArg(s.DeletedAt), s.Deleted, sqlutil.Ptr(s.UUID),
				sqlutil.Ptr(s.Host), sqlutil.Ptr(s.Binary), sqlutil.Ptr(s.Topic), s.ReportCount, s.Disabled, sqlutil.Ptr(s.DisabledReason),
				db.TimeArg(s.LastSeenUp), s.ForcedDown, s.Version}
		}); err != nil {
			return err
		}
		if err := sqlutil.InsertAll(ctx, db, tx, "compute_nodes", computeNodeCols, r.ComputeNodes, func(n *nova.ComputeNode) []any {
			return []any{n.ID, db.TimeArg(n.CreatedAt), db.TimeArg(n.UpdatedAt), db.TimeArg(n.DeletedAt), n.Deleted,
				sqlutil.Ptr(n.ServiceID), sqlutil.Ptr(n.Host), sqlutil.Ptr(n.HypervisorHostname), sqlutil.Ptr(n.UUID),
				n.VCPUs, n.MemoryMB, n.LocalGB, n.VCPUsUsed, n.MemoryMBUsed, n.LocalGBUsed,
				n.HypervisorType, n.HypervisorVersion, n.CPUInfo,
				sqlutil.Ptr(n.DiskAvailableLeast), sqlutil.Ptr(n.FreeRAMMB), sqlutil.Ptr(n.FreeDiskGB), sqlutil.Ptr(n.CurrentWorkload), sqlutil.Ptr(n.RunningVMs), sqlutil.Ptr(n.HostIP),
				sqlutil.Ptr(n.SupportedInstances), sqlutil.Ptr(n.PCIStats), sqlutil.Ptr(n.Metrics), sqlutil.Ptr(n.ExtraResources), sqlutil.Ptr(n.Stats), sqlutil.Ptr(n.NUMATopology),
				sqlutil.Ptr(n.RAMAllocationRatio), sqlutil.Ptr(n.CPUAllocationRatio), sqlutil.Ptr(n.DiskAllocationRatio), sqlutil.Ptr(n.Mapped)}
		}); err != nil {
			return err
		}
		// A release's columns beyond Zed's are written only where its
		// schema has them (a Zed database has no compute_id).
		instCols, migCols := instanceCols, migrationCols
		if r.Shape.ComputeIDs {
			instCols = append(slices.Clip(instCols), "compute_id")
			migCols = append(slices.Clip(migCols), "dest_compute_id")
		}
		if err := sqlutil.InsertAll(ctx, db, tx, "instances", instCols, r.Instances, func(in *nova.Instance) []any {
			args := []any{in.ID, in.UUID, db.TimeArg(in.CreatedAt), db.TimeArg(in.UpdatedAt), db.TimeArg(in.DeletedAt), in.Deleted,
				in.UserID, in.ProjectID, in.ImageRef, in.Hostname, in.DisplayName, sqlutil.Ptr(in.Host), sqlutil.Ptr(in.Node), sqlutil.Ptr(in.LaunchedOn),
				sqlutil.Ptr(in.AvailabilityZone), in.VMState, sqlutil.Ptr(in.TaskState), in.PowerState, db.TimeArg(in.LaunchedAt), in.InstanceTypeID,
				in.MemoryMB, in.VCPUs, in.RootGB, in.EphemeralGB,
				0, false, false, 0, false, false, fmt.Sprintf("r-%08x", uint32(in.ID))}
			if r.Shape.ComputeIDs {
				args = append(args, sqlutil.Ptr(in.ComputeID))
			}
			return args
		}); err != nil {
			return err
		}
		if err := sqlutil.InsertAll(ctx, db, tx, "instance_extra", instanceExtraCols, r.Instances, func(in *nova.Instance) []any {
			return []any{in.ID, db.TimeArg(in.CreatedAt), db.TimeArg(in.UpdatedAt), db.TimeArg(in.DeletedAt), in.Deleted, in.UUID,
				sqlutil.Ptr(in.Flavor), sqlutil.Ptr(in.ExtraNUMATopology), sqlutil.Ptr(in.PCIRequests)}
		}); err != nil {
			return err
		}
		return sqlutil.InsertAll(ctx, db, tx, "migrations", migCols, r.Migrations, func(m *nova.Migration) []any {
			args := []any{m.ID, m.UUID, db.TimeArg(m.CreatedAt), db.TimeArg(m.UpdatedAt), db.TimeArg(m.DeletedAt), m.Deleted,
				m.SourceCompute, m.DestCompute, sqlutil.Ptr(m.DestHost), m.SourceNode, m.DestNode, m.Status, m.InstanceUUID,
				m.OldInstanceTypeID, m.NewInstanceTypeID, m.MigrationType, m.Hidden, m.CrossCellMove, sqlutil.Ptr(m.UserID), sqlutil.Ptr(m.ProjectID)}
			if r.Shape.ComputeIDs {
				args = append(args, sqlutil.Ptr(m.DestComputeID))
			}
			return args
		})
	})
}

// InsertComputeNodes writes compute nodes in one transaction.
func InsertComputeNodes(ctx context.Context, db *storage.DB, nodes []nova.ComputeNode) error {
	return InsertCellRows(ctx, db, nova.CellRows{ComputeNodes: nodes})
}

// InsertServices writes services in one transaction.
func InsertServices(ctx context.Context, db *storage.DB, svcs []nova.Service) error {
	return InsertCellRows(ctx, db, nova.CellRows{Services: svcs})
}

var computeNodeCols = []string{
	"id", "created_at", "updated_at", "deleted_at", "deleted", "service_id", "host", "hypervisor_hostname", "uuid",
	"vcpus", "memory_mb", "local_gb", "vcpus_used", "memory_mb_used", "local_gb_used",
	"hypervisor_type", "hypervisor_version", "cpu_info",
	"disk_available_least", "free_ram_mb", "free_disk_gb", "current_workload", "running_vms", "host_ip",
	"supported_instances", "pci_stats", "metrics", "extra_resources", "stats", "numa_topology",
	"ram_allocation_ratio", "cpu_allocation_ratio", "disk_allocation_ratio", "mapped",
}

var serviceCols = []string{"id", "created_at", "updated_at", "deleted_at", "deleted", "uuid",
	"host", "binary", "topic", "report_count", "disabled", "disabled_reason", "last_seen_up", "forced_down", "version"}

var instanceCols = []string{"id", "uuid", "created_at", "updated_at", "deleted_at", "deleted",
	"user_id", "project_id", "image_ref", "hostname", "display_name", "host", "node", "launched_on",
	"availability_zone", "vm_state", "task_state", "power_state", "launched_at", "instance_type_id",
	"memory_mb", "vcpus", "root_gb", "ephemeral_gb",
	// Nova's create path sets these; API listings filter on them.
	"launch_index", "locked", "hidden", "cleaned", "shutdown_terminate", "disable_terminate", "reservation_id"}

var instanceExtraCols = []string{"id", "created_at", "updated_at", "deleted_at", "deleted", "instance_uuid",
	"flavor", "numa_topology", "pci_requests"}

var migrationCols = []string{"id", "uuid", "created_at", "updated_at", "deleted_at", "deleted",
	"source_compute", "dest_compute", "dest_host", "source_node", "dest_node", "status", "instance_uuid",
	"old_instance_type_id", "new_instance_type_id", "migration_type", "hidden", "cross_cell_move", "user_id", "project_id"}

// CountComputeNodes counts a cell's compute nodes.
func CountComputeNodes(ctx context.Context, cell *storage.DB, includeDeleted bool) (int, error) {
	q := `SELECT COUNT(*) FROM compute_nodes`
	if !includeDeleted {
		q += ` WHERE ` + liveNode
	}
	var n int
	if err := cell.GetContext(ctx, &n, q); err != nil {
		return 0, cell.Errorf("count compute_nodes: %w", storage.CleanError(err))
	}
	return n, nil
}

// ListComputeNodes returns a cell's compute nodes ordered by id, soft-deleted
// ones only when includeDeleted. It runs one query and scans positionally:
// migrations and status checks read 100,000 rows with it.
func ListComputeNodes(ctx context.Context, cell *storage.DB, includeDeleted bool) ([]nova.ComputeNode, error) {
	// No bound parameters: go-sql-driver then uses the text protocol, where
	// FLOAT columns arrive as the decimal MySQL prints, not as float32 bits.
	q := "SELECT `" + strings.Join(computeNodeCols, "`, `") + "` FROM compute_nodes"
	if !includeDeleted {
		q += " WHERE " + liveNode
	}
	q += " ORDER BY id"
	rows, err := cell.QueryContext(ctx, q)
	if err != nil {
		return nil, cell.Errorf("read compute_nodes: %w", storage.CleanError(err))
	}
	defer rows.Close()
	var out []nova.ComputeNode
	if !includeDeleted {
		out = make([]nova.ComputeNode, 0, 64)
	}
	var (
		created, updated, deletedAt                            sql.NullTime
		deleted, serviceID, dal, freeRAM, freeDisk, work, vms  sql.NullInt64
		mapped                                                 sql.NullInt64
		host, hhn, uuid, hostIP, supp, pci, metrics, extra, st sql.NullString
		numa                                                   sql.NullString
		ramRatio, cpuRatio, diskRatio                          sql.NullFloat64
	)
	for rows.Next() {
		var n nova.ComputeNode
		if err := rows.Scan(&n.ID, &created, &updated, &deletedAt, &deleted, &serviceID, &host, &hhn, &uuid,
			&n.VCPUs, &n.MemoryMB, &n.LocalGB, &n.VCPUsUsed, &n.MemoryMBUsed, &n.LocalGBUsed,
			&n.HypervisorType, &n.HypervisorVersion, &n.CPUInfo,
			&dal, &freeRAM, &freeDisk, &work, &vms, &hostIP,
			&supp, &pci, &metrics, &extra, &st, &numa,
			&ramRatio, &cpuRatio, &diskRatio, &mapped); err != nil {
			return nil, cell.Errorf("read compute_nodes: %w", storage.CleanError(err))
		}
		n.CreatedAt, n.UpdatedAt, n.DeletedAt = sqlutil.TimePtr(created), sqlutil.TimePtr(updated), sqlutil.TimePtr(deletedAt)
		n.Deleted = deleted.Int64
		n.ServiceID, n.DiskAvailableLeast, n.FreeRAMMB = sqlutil.IntPtr(serviceID), sqlutil.IntPtr(dal), sqlutil.IntPtr(freeRAM)
		n.FreeDiskGB, n.CurrentWorkload, n.RunningVMs, n.Mapped = sqlutil.IntPtr(freeDisk), sqlutil.IntPtr(work), sqlutil.IntPtr(vms), sqlutil.IntPtr(mapped)
		// Folded: an upper-case uuid is the provider placement-api would
		// store lower case (sqlutil.FoldUUID).
		n.Host, n.HypervisorHostname, n.UUID, n.HostIP = sqlutil.StrPtr(host), sqlutil.StrPtr(hhn), sqlutil.FoldUUIDPtr(sqlutil.StrPtr(uuid)), sqlutil.StrPtr(hostIP)
		n.SupportedInstances, n.PCIStats, n.Metrics = sqlutil.StrPtr(supp), sqlutil.StrPtr(pci), sqlutil.StrPtr(metrics)
		n.ExtraResources, n.Stats, n.NUMATopology = sqlutil.StrPtr(extra), sqlutil.StrPtr(st), sqlutil.StrPtr(numa)
		n.RAMAllocationRatio = cell.FloatPtr(ramRatio)
		n.CPUAllocationRatio = cell.FloatPtr(cpuRatio)
		n.DiskAllocationRatio = cell.FloatPtr(diskRatio)
		out = append(out, n)
	}
	if err := rows.Err(); err != nil {
		return nil, cell.Errorf("read compute_nodes: %w", storage.CleanError(err))
	}
	return out, nil
}
