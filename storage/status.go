package storage

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// The queries of `rpctl status`. Each is one aggregate or one bulk read per
// database, never a query per node: the checks must finish on 100,000 nodes
// within seconds. Cell and Placement databases are separate servers in
// practice, so the checks join across them in Go.

// NodeRef names a compute node in messages.
type NodeRef struct {
	ID   int64
	Host string // host, or "" when NULL
	Node string // hypervisor_hostname, or "" when NULL
}

// liveNode selects the compute_nodes rows Nova itself sees as live: its
// model_query(read_deleted="no") filters on deleted = 0, so a row with a
// NULL deleted (which Nova never writes) is invisible to Nova and to rpctl
// alike — the status checks, the ratio migration (whose parity with Nova's
// depends on it) and the inventory migration must agree on this.
const liveNode = "deleted = 0"

// NodeCapacity is what the status checks look at: a compute node's uuid
// ("" when NULL), its legacy capacity columns and its allocation ratios
// (nil when NULL).
type NodeCapacity struct {
	NodeRef
	UUID                          string
	Deleted                       bool
	VCPUs                         int64
	MemoryMB                      int64
	LocalGB                       int64
	CPURatio, RAMRatio, DiskRatio *float64
}

// ListNodeCapacities returns every compute node of a cell in id order,
// soft-deleted ones included (they tell an orphaned provider's story), in
// one query of the few columns the checks need: one scan of compute_nodes
// serves every check of the cell's nodes.
func ListNodeCapacities(ctx context.Context, cell *DB) ([]NodeCapacity, error) {
	rows, err := cell.QueryContext(ctx, `SELECT id, host, hypervisor_hostname, uuid, COALESCE(deleted, 0), vcpus, memory_mb, local_gb,
		cpu_allocation_ratio, ram_allocation_ratio, disk_allocation_ratio
		FROM compute_nodes ORDER BY id`)
	if err != nil {
		return nil, cell.Errorf("read compute_nodes: %w", CleanError(err))
	}
	defer rows.Close()
	var out []NodeCapacity
	var host, node, uuid sql.NullString
	var deleted int64
	var cpu, ram, disk sql.NullFloat64
	for rows.Next() {
		var n NodeCapacity
		if err := rows.Scan(&n.ID, &host, &node, &uuid, &deleted, &n.VCPUs, &n.MemoryMB, &n.LocalGB, &cpu, &ram, &disk); err != nil {
			return nil, cell.Errorf("read compute_nodes: %w", CleanError(err))
		}
		n.Host, n.Node, n.UUID, n.Deleted = host.String, node.String, uuid.String, deleted != 0
		n.CPURatio, n.RAMRatio, n.DiskRatio = cell.floatPtr(cpu), cell.floatPtr(ram), cell.floatPtr(disk)
		out = append(out, n)
	}
	if err := rows.Err(); err != nil {
		return nil, cell.Errorf("read compute_nodes: %w", CleanError(err))
	}
	return out, nil
}

// ServiceVersions summarises the live services of one binary in a cell the
// way Nova's service_get_minimum_version sees them: not deleted, not forced
// down, and (as get_minimum_version_all_cells) only positive versions.
type ServiceVersions struct {
	Binary string
	Count  int
	Min    int64
	// Below counts the services older than the threshold asked for; First
	// are the oldest of them.
	Below int
	First []ServiceRef
}

// ServiceRef names a service in messages.
type ServiceRef struct {
	Host    string `db:"host"`
	Version int64  `db:"version"`
}

// ServiceVersionSummary reports, per binary present in the cell, how many
// services run it, their minimum version and those below threshold.
func ServiceVersionSummary(ctx context.Context, cell *DB, binaries []string, threshold int64, limit int) ([]ServiceVersions, error) {
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
		return nil, cell.Errorf("read services: %w", CleanError(err))
	}
	var out []ServiceVersions
	for rows.Next() {
		var s ServiceVersions
		if err := rows.Scan(&s.Binary, &s.Count, &s.Min, &s.Below); err != nil {
			rows.Close()
			return nil, cell.Errorf("read services: %w", CleanError(err))
		}
		out = append(out, s)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, cell.Errorf("read services: %w", CleanError(err))
	}
	for i := range out {
		s := &out[i]
		if s.Below == 0 || limit <= 0 {
			continue
		}
		q := cell.Rebind(fmt.Sprintf("SELECT COALESCE(host, '') AS host, version FROM services WHERE deleted = 0 AND forced_down = 0 AND version > 0 AND `binary` = ? AND version < ? ORDER BY version, id LIMIT %d", limit))
		if err := cell.SelectContext(ctx, &s.First, q, s.Binary, threshold); err != nil {
			return nil, cell.Errorf("read services: %w", CleanError(err))
		}
	}
	return out, nil
}

// ProviderTotals is a resource provider with its VCPU, MEMORY_MB and DISK_GB
// inventory totals (nil when it has no inventory of that class).
type ProviderTotals struct {
	UUID    string
	Name    string
	Root    bool // no parent provider
	Sharing bool // has MISC_SHARES_VIA_AGGREGATE
	VCPU    *int64
	Memory  *int64
	Disk    *int64
}

// ListProviderTotals reads every resource provider with its standard
// compute-node inventory totals: one scan of resource_providers and one of
// the VCPU/MEMORY_MB/DISK_GB inventories, joined here by id (a GROUP BY over
// 100,000 providers costs MariaDB seconds).
func ListProviderTotals(ctx context.Context, p *DB) ([]ProviderTotals, error) {
	rows, err := p.QueryContext(ctx, `SELECT id, uuid, COALESCE(name, ''), CASE WHEN parent_provider_id IS NULL THEN 1 ELSE 0 END FROM resource_providers`)
	if err != nil {
		return nil, p.Errorf("read resource_providers: %w", CleanError(err))
	}
	var out []ProviderTotals
	index := map[int64]int{}
	for rows.Next() {
		var t ProviderTotals
		var id int64
		var root int
		if err := rows.Scan(&id, &t.UUID, &t.Name, &root); err != nil {
			rows.Close()
			return nil, p.Errorf("read resource_providers: %w", CleanError(err))
		}
		t.Root = root == 1
		index[id] = len(out)
		out = append(out, t)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, p.Errorf("read resource_providers: %w", CleanError(err))
	}
	// Class ids first, so that the 300,000 inventory rows come back as
	// three integers each, without a join or a class name per row.
	var classes []struct {
		ID   int64  `db:"id"`
		Name string `db:"name"`
	}
	if err := p.SelectContext(ctx, &classes, `SELECT id, name FROM resource_classes WHERE name IN ('VCPU', 'MEMORY_MB', 'DISK_GB')`); err != nil {
		return nil, p.Errorf("read resource_classes: %w", CleanError(err))
	}
	if len(classes) > 0 {
		slot := map[int64]int{}
		var idl []int64
		for _, c := range classes {
			slot[c.ID] = map[string]int{"VCPU": 0, "MEMORY_MB": 1, "DISK_GB": 2}[c.Name]
			idl = append(idl, c.ID)
		}
		rows, err = p.QueryContext(ctx, `SELECT resource_provider_id, resource_class_id, total FROM inventories WHERE resource_class_id IN (`+sqlInts(idl)+`)`)
		if err != nil {
			return nil, p.Errorf("read inventories: %w", CleanError(err))
		}
		for rows.Next() {
			var id, class, total int64
			if err := rows.Scan(&id, &class, &total); err != nil {
				rows.Close()
				return nil, p.Errorf("read inventories: %w", CleanError(err))
			}
			i, ok := index[id]
			if !ok {
				continue
			}
			v := total
			switch slot[class] {
			case 0:
				out[i].VCPU = &v
			case 1:
				out[i].Memory = &v
			case 2:
				out[i].Disk = &v
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, p.Errorf("read inventories: %w", CleanError(err))
		}
	}
	var sharing []string
	if err := p.SelectContext(ctx, &sharing, `SELECT rp.uuid FROM resource_provider_traits rpt
		JOIN traits t ON t.id = rpt.trait_id JOIN resource_providers rp ON rp.id = rpt.resource_provider_id
		WHERE t.name = 'MISC_SHARES_VIA_AGGREGATE'`); err != nil {
		return nil, p.Errorf("read resource_provider_traits: %w", CleanError(err))
	}
	if len(sharing) > 0 {
		set := make(map[string]bool, len(sharing))
		for _, u := range sharing {
			set[u] = true
		}
		for i := range out {
			out[i].Sharing = set[out[i].UUID]
		}
	}
	return out, nil
}

// Overuse is an inventory whose allocations exceed its capacity.
type Overuse struct {
	UUID            string
	Name            string
	Class           string
	Total, Reserved int64
	AllocationRatio float64
	Used            int64
	// Unclaimed is the part of Used that instances without allocations
	// use, which Placement does not count.
	Unclaimed int64
}

// Capacity is Placement's (total - reserved) * allocation_ratio.
func (o Overuse) Capacity() float64 {
	return float64(o.Total-o.Reserved) * o.AllocationRatio
}

// ListOverusedInventories returns the inventories whose summed allocations
// exceed Placement's capacity, worst first. SQL narrows the candidates with
// a little slack, since MySQL's FLOAT ratio is single precision; Go decides
// with the ratio as written.
func ListOverusedInventories(ctx context.Context, p *DB) ([]Overuse, error) {
	// The inner query walks allocations' (provider, class, used) index in
	// group order and looks each group's inventory up by its unique key;
	// only the few over-used groups meet the outer joins.
	rows, err := p.QueryContext(ctx, `SELECT rp.uuid, COALESCE(rp.name, ''), COALESCE(rc.name, ''), o.total, o.reserved, o.allocation_ratio, o.used
		FROM (SELECT a.resource_provider_id AS rp_id, a.resource_class_id AS rc_id, SUM(a.used) AS used,
		             i.total AS total, i.reserved AS reserved, i.allocation_ratio AS allocation_ratio
		      FROM allocations a
		      JOIN inventories i ON i.resource_provider_id = a.resource_provider_id AND i.resource_class_id = a.resource_class_id
		      GROUP BY a.resource_provider_id, a.resource_class_id, i.total, i.reserved, i.allocation_ratio
		      HAVING SUM(a.used) > (i.total - i.reserved) * i.allocation_ratio * 0.999) o
		JOIN resource_providers rp ON rp.id = o.rp_id
		LEFT JOIN resource_classes rc ON rc.id = o.rc_id
		ORDER BY rp.name, rp.uuid, rc.name`)
	if err != nil {
		return nil, p.Errorf("read allocations and inventories: %w", CleanError(err))
	}
	defer rows.Close()
	var out []Overuse
	for rows.Next() {
		var o Overuse
		var ratio sql.NullFloat64
		if err := rows.Scan(&o.UUID, &o.Name, &o.Class, &o.Total, &o.Reserved, &ratio, &o.Used); err != nil {
			return nil, p.Errorf("read allocations and inventories: %w", CleanError(err))
		}
		o.AllocationRatio = *p.floatPtr(ratio)
		if float64(o.Used) > o.Capacity() {
			out = append(out, o)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, p.Errorf("read allocations and inventories: %w", CleanError(err))
	}
	return out, nil
}

// MissingRootProviderIDs reports whether any resource provider lacks its
// root_provider_id, what placement-status's first check looks for.
func MissingRootProviderIDs(ctx context.Context, p *DB) (bool, error) {
	var n int
	if err := p.GetContext(ctx, &n, `SELECT CASE WHEN EXISTS (SELECT 1 FROM resource_providers WHERE root_provider_id IS NULL) THEN 1 ELSE 0 END`); err != nil {
		return false, p.Errorf("read resource_providers: %w", CleanError(err))
	}
	return n == 1, nil
}

// IncompleteConsumers counts the distinct consumers of allocations that have
// no consumers row, what placement-status's second check counts.
func IncompleteConsumers(ctx context.Context, p *DB) (int, error) {
	var n int
	if err := p.GetContext(ctx, &n, `SELECT COUNT(DISTINCT a.consumer_id) FROM allocations a
		LEFT OUTER JOIN consumers c ON a.consumer_id = c.uuid WHERE c.id IS NULL`); err != nil {
		return 0, p.Errorf("read allocations and consumers: %w", CleanError(err))
	}
	return n, nil
}
