package celldb

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/rpctl/rpctl/status"
	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/internal/sqlutil"
)

// liveNode selects the compute_nodes rows Nova itself sees as live: its
// model_query(read_deleted="no") filters on deleted = 0, so a row with a
// NULL deleted (which Nova never writes) is invisible to Nova and to rpctl
// alike — the status checks, the ratio migration (whose parity with Nova's
// depends on it) and the inventory migration must agree on this.
const liveNode = "deleted = 0"

// ListNodeCapacities returns every compute node of a cell in id order,
// soft-deleted ones included (they tell an orphaned provider's story), in
// one query of the few columns the checks need: one scan of compute_nodes
// serves every check of the cell's nodes.
func ListNodeCapacities(ctx context.Context, cell *storage.DB) ([]status.NodeCapacity, error) {
	rows, err := cell.QueryContext(ctx, `SELECT id, host, hypervisor_hostname, uuid, COALESCE(deleted, 0), vcpus, memory_mb, local_gb,
		cpu_allocation_ratio, ram_allocation_ratio, disk_allocation_ratio
		FROM compute_nodes ORDER BY id`)
	if err != nil {
		return nil, cell.Errorf("read compute_nodes: %w", storage.CleanError(err))
	}
	defer rows.Close()
	var out []status.NodeCapacity
	var host, node, uuid sql.NullString
	var deleted int64
	var cpu, ram, disk sql.NullFloat64
	for rows.Next() {
		var n status.NodeCapacity
		if err := rows.Scan(&n.ID, &host, &node, &uuid, &deleted, &n.VCPUs, &n.MemoryMB, &n.LocalGB, &cpu, &ram, &disk); err != nil {
			return nil, cell.Errorf("read compute_nodes: %w", storage.CleanError(err))
		}
		n.Host, n.Node, n.UUID, n.Deleted = host.String, node.String, sqlutil.FoldUUID(uuid.String), deleted != 0
		n.CPURatio, n.RAMRatio, n.DiskRatio = cell.FloatPtr(cpu), cell.FloatPtr(ram), cell.FloatPtr(disk)
		out = append(out, n)
	}
	if err := rows.Err(); err != nil {
		return nil, cell.Errorf("read compute_nodes: %w", storage.CleanError(err))
	}
	return out, nil
}

// ServiceVersionSummary reports, per binary present in the cell, how many
// services run it, their minimum version and those below threshold.
func ServiceVersionSummary(ctx context.Context, cell *storage.DB, binaries []string, threshold int64, limit int) ([]status.ServiceVersions, error) {
	if len(binaries) == 0 {
		return nil, nil
	}
	in := strings.TrimSuffix(strings.Repeat("?, ", len(binaries)), ", ")
	where := "deleted = 0 AND forced_down = 0 AND version > 0 AND `binary` IN (" + in + ")"
	args := make([]any, 0, len(binaries)+1)
	args = append(args, threshold)
	for _, b := range binaries {
		args = append(args, b)
	}
	rows, err := cell.QueryContext(ctx, cell.Rebind("SELECT `binary`, COUNT(*), MIN(version), SUM(CASE WHEN version < ? THEN 1 ELSE 0 END) FROM services WHERE "+where+" GROUP BY `binary` ORDER BY `binary`"), args...)
	if err != nil {
		return nil, cell.Errorf("read services: %w", storage.CleanError(err))
	}
	var out []status.ServiceVersions
	for rows.Next() {
		var s status.ServiceVersions
		if err := rows.Scan(&s.Binary, &s.Count, &s.Min, &s.Below); err != nil {
			rows.Close()
			return nil, cell.Errorf("read services: %w", storage.CleanError(err))
		}
		out = append(out, s)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, cell.Errorf("read services: %w", storage.CleanError(err))
	}
	for i := range out {
		s := &out[i]
		if s.Below == 0 || limit <= 0 {
			continue
		}
		q := cell.Rebind(fmt.Sprintf("SELECT COALESCE(host, '') AS host, version FROM services WHERE deleted = 0 AND forced_down = 0 AND version > 0 AND `binary` = ? AND version < ? ORDER BY version, id LIMIT %d", limit))
		if err := cell.SelectContext(ctx, &s.First, q, s.Binary, threshold); err != nil {
			return nil, cell.Errorf("read services: %w", storage.CleanError(err))
		}
	}
	return out, nil
}

// CountInstancesWithoutMachineType implements status.MachineTypes: the live
// instances, not building, without an image_hw_machine_type system
// metadata value (machine_type_utils._get_instances_without_mtype). A cell
// made by rpctl init has no instance_system_metadata table: its instances
// have no image properties at all.
func (c *Cell) CountInstancesWithoutMachineType(ctx context.Context) (int, error) {
	has, err := c.DB.TableExists(ctx, "instance_system_metadata")
	if err != nil {
		return 0, c.DB.Errorf("read instance_system_metadata: %w", storage.CleanError(err))
	}
	q := `SELECT COUNT(*) FROM instances i WHERE i.deleted = 0 AND (i.vm_state IS NULL OR i.vm_state <> 'building')`
	if has {
		q += ` AND NOT EXISTS (SELECT 1 FROM instance_system_metadata m WHERE m.instance_uuid = i.uuid AND m.deleted = 0 AND m.` + "`key`" + ` = 'image_hw_machine_type' AND m.value IS NOT NULL)`
	}
	var n int
	if err := c.DB.GetContext(ctx, &n, q); err != nil {
		return 0, c.DB.Errorf("count instances without hw_machine_type: %w", storage.CleanError(err))
	}
	return n, nil
}

// ServiceVersionRanges reads, per binary, the lowest and highest version of
// the services not deleted, not forced down and with a version (Nova writes
// 0 only before a service first reports), for status.DetectRelease.
func ServiceVersionRanges(ctx context.Context, cell *storage.DB, binaries []string) ([]status.ServiceVersionRange, error) {
	if len(binaries) == 0 {
		return nil, nil
	}
	in := strings.TrimSuffix(strings.Repeat("?, ", len(binaries)), ", ")
	args := make([]any, len(binaries))
	for i, b := range binaries {
		args[i] = b
	}
	rows, err := cell.QueryContext(ctx, cell.Rebind("SELECT `binary`, COUNT(*), MIN(version), MAX(version) FROM services WHERE deleted = 0 AND forced_down = 0 AND version > 0 AND `binary` IN ("+in+") GROUP BY `binary` ORDER BY `binary`"), args...)
	if err != nil {
		return nil, cell.Errorf("read services: %w", storage.CleanError(err))
	}
	defer rows.Close()
	var out []status.ServiceVersionRange
	for rows.Next() {
		var r status.ServiceVersionRange
		if err := rows.Scan(&r.Binary, &r.Count, &r.Min, &r.Max); err != nil {
			return nil, cell.Errorf("read services: %w", storage.CleanError(err))
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, cell.Errorf("read services: %w", storage.CleanError(err))
	}
	return out, nil
}
