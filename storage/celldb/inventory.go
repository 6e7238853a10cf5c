package celldb

import (
	"context"
	"database/sql"

	"github.com/rpctl/rpctl/internal/nova"
	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/internal/sqlutil"
)

// ScanNodesForInventory streams a cell's live compute nodes in id order to
// fn, with only the columns the inventory migration plans from (the
// others, cpu_info and stats among them, are left zero). Streaming lets
// the caller parse the NUMA and PCI blobs of 100,000 nodes while the rest
// still arrive, without holding all of them in memory at once.
func ScanNodesForInventory(ctx context.Context, cell *storage.DB, fn func(nova.ComputeNode)) error {
	// No bound parameters: the text protocol gives FLOAT ratios as the
	// decimal MySQL prints, as ListComputeNodes reads them.
	rows, err := cell.QueryContext(ctx, "SELECT id, host, hypervisor_hostname, uuid, vcpus, memory_mb, local_gb, disk_available_least, "+
		"pci_stats, extra_resources, numa_topology, ram_allocation_ratio, cpu_allocation_ratio, disk_allocation_ratio "+
		"FROM compute_nodes WHERE "+liveNode+" ORDER BY id")
	if err != nil {
		return cell.Errorf("read compute_nodes: %w", storage.CleanError(err))
	}
	defer rows.Close()
	var (
		dal                           sql.NullInt64
		host, hhn, uuid, pci, extra   sql.NullString
		numa                          sql.NullString
		ramRatio, cpuRatio, diskRatio sql.NullFloat64
	)
	for rows.Next() {
		var n nova.ComputeNode
		if err := rows.Scan(&n.ID, &host, &hhn, &uuid, &n.VCPUs, &n.MemoryMB, &n.LocalGB, &dal,
			&pci, &extra, &numa, &ramRatio, &cpuRatio, &diskRatio); err != nil {
			return cell.Errorf("read compute_nodes: %w", storage.CleanError(err))
		}
		n.DiskAvailableLeast = sqlutil.IntPtr(dal)
		n.Host, n.HypervisorHostname, n.UUID = sqlutil.StrPtr(host), sqlutil.StrPtr(hhn), sqlutil.FoldUUIDPtr(sqlutil.StrPtr(uuid)) // as ListComputeNodes
		n.PCIStats, n.ExtraResources, n.NUMATopology = sqlutil.StrPtr(pci), sqlutil.StrPtr(extra), sqlutil.StrPtr(numa)
		n.RAMAllocationRatio = cell.FloatPtr(ramRatio)
		n.CPUAllocationRatio = cell.FloatPtr(cpuRatio)
		n.DiskAllocationRatio = cell.FloatPtr(diskRatio)
		fn(n)
	}
	if err := rows.Err(); err != nil {
		return cell.Errorf("read compute_nodes: %w", storage.CleanError(err))
	}
	return nil
}
