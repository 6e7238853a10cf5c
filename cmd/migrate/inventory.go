package migrate

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/rpctl/rpctl/cmd/internal/cmdutil"
	"github.com/rpctl/rpctl/cmd/internal/shared"
	"github.com/rpctl/rpctl/internal/config"
	"github.com/rpctl/rpctl/internal/output"
	"github.com/rpctl/rpctl/inventory"
	"github.com/rpctl/rpctl/migrate"
	"github.com/rpctl/rpctl/placementclient"
	"github.com/rpctl/rpctl/status"
	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/stores"
)

func inventoryMigration() migrationSpec {
	return migrationSpec{
		Name:  "inventory",
		Rows:  []string{migrate.InventoryName},
		Order: 10,
		Short: "Create a resource provider with inventories in Placement for every legacy compute node",
		Long: `Every live compute_nodes row of every cell (or --cell) becomes a Placement resource
provider (uuid = compute_nodes.uuid, generated and stored first when NULL; name =
hypervisor_hostname) with what Nova 26's nova-compute would report for the row and
nova.conf: VCPU, PCPU (cells whose pcpuset is disjoint from cpuset: cpu_dedicated_set;
VCPU reserved is then 0), MEMORY_MB, DISK_GB, CUSTOM_* from extra_resources, traits
COMPUTE_NODE and, for a disabled nova-compute service, COMPUTE_STATUS_DISABLED; with
[pci] report_in_placement = True, one child provider per PCI device from pci_devices
(<hypervisor_hostname>_<PCI ADDRESS>, classes and traits from [pci] device_spec).
--newton-classes also writes the Newton spec's NUMA_* and pci_stats pool classes, which
Nova never reports and nova-compute removes when it starts.
Each node is written in one Placement transaction; re-running changes only what differs.
Without Placement's database (nova.conf's [placement] credentials alone, or --os-*), the
same rows are written through the Placement API, as nova-compute's report client writes
them: POST /resource_providers for a new provider (uuid = compute_nodes.uuid, name =
hypervisor_hostname; children after their parent), then PUT of its inventories, traits and
aggregates with the provider generation, so the generations are the database path's. A 409
generation conflict (a nova-compute or an operator wrote meanwhile) re-reads the node and
re-plans, up to 4 times, then skips it, named (exit 2). A node whose write fails has the
providers this write created deleted again; a PUT already applied to an existing provider
stays (the message says which) and a re-run completes it. Moving allocations in a layout
switch needs the database: through the API such a node keeps its layout, named.

nova-compute reads [pci] report_in_placement and device_spec, reserved_host_* and the
allocation ratio options from its own host's nova.conf: --compute-config-dir DIR names a
directory of those files, DIR/<host>.conf (the host column of compute_nodes), each read
over --config-file for the nodes of that host (ratio flags still win); other hosts use
--config-file. A file that does not parse is refused, naming it; a file whose host has no
compute node is a warning.

Allocation ratios: a set cpu/ram/disk_allocation_ratio wins; else the value already in
Placement is kept; else the row's value unless 0.0/NULL; else initial_*_allocation_ratio.

--layout nested makes each NUMA cell a child provider (HW_NUMA_ROOT) with its VCPU,
MEMORY_MB, PCPU (cpu_dedicated_set hosts only: no CPU is counted twice) and, with
--newton-classes, PCI pools. Only the flat layout survives a running nova-compute: Nova 26's
libvirt driver rewrites its root provider's VCPU, MEMORY_MB and DISK_GB at every update, so
a nested tree gets them back on its root, counted twice (rpctl status fails). Nested and
shared layouts are for clouds and tools that report that way, and for offline what-if
questions; --layout nested warns when a cell's nova-compute services are up (updated in the
last 60 s, not disabled). --shared-storage ceph=compute-*,nfs=gpu-* moves the DISK_GB of the
matching hosts to one sharing provider per pool (MISC_SHARES_VIA_AGGREGATE).

Switching layouts on migrated nodes (--layout flat|nested, adding or removing
--shared-storage) moves the inventories and the allocations on them to where the new layout
puts them, in the node's one transaction: a consumer's allocation goes to the provider of
the new tree that already holds another of its classes, else to the first with room (root,
then NUMA cells by id, then the pool's sharing provider); a node leaving a pool leaves its
aggregate, and a pool no node uses any more loses its DISK_GB. A switch that cannot be made
safely (no room, a class the new layout does not have, such as PCPU in the flat layout) is
refused: the node is named with the reason (exit code 2) and keeps its old layout. A re-run
with the same layout writes nothing. --dry-run lists every allocation a switch would move
(consumer, class, amount, from and to) and every switch it would refuse.

DISK_GB max_unit is local_gb, as Nova's resource tracker writes it (and rewrites it at
every update of a running nova-compute). --disk-max-unit available-least uses
disk_available_least instead (the Newton spec's suggestion): the scheduler then offers no
host a server larger than its free disk, but every instance already larger than it can no
longer be healed ("migrate allocations" skips it, exit code 2).

Before anything is written, every live nova-conductor and nova-osapi_compute service of
every cell must be at least service version 37 (Stein), which reads the providers
and ratios this writes; older ones are named and the migration refuses (exit code 2)
unless --force.

Never fighting a running compute: a provider whose root holds one of the virt driver's
capability traits (COMPUTE_NET_ATTACH_INTERFACE, COMPUTE_DEVICE_TAGGING, COMPUTE_IMAGE_TYPE_*,
...: nova/virt/driver.py CAPABILITY_TRAITS_MAP) has been reported by a nova-compute, which
rewrites it at every periodic update; rpctl never writes those traits. Such a node is left
alone: nothing of its providers is changed, and the run says so per node where its plan
differs ("owned by nova-compute (...): left alone"). --force overwrites it, printing what it
changes first.`,
		Need:     storage.NeedCells | storage.NeedPlacement,
		AddFlags: addInventoryFlags,
		Build:    buildInventory,
		DryRun:   dryRunInventory,
	}
}

// inventoryFlags are the flags of `migrate inventory`, also on `migrate all`.
type inventoryFlags struct {
	layout     string
	pciMaxUnit []string
	shared     []string
	parallel   int
	force      bool
	diskMax    string
	newton     bool
	// hostConfDir is --compute-config-dir: DIR/<host>.conf is that
	// compute host's own nova.conf.
	hostConfDir string
}

func addInventoryFlags(fs *pflag.FlagSet, mf *migrationFlags) {
	addRatioFlags(fs, mf)
	inventoryFlags := &mf.inventory
	fs.StringVar(&inventoryFlags.layout, "layout", migrate.LayoutFlat, "provider tree: flat (everything on the compute node's provider) or nested (a child provider per NUMA cell)")
	fs.StringArrayVar(&inventoryFlags.pciMaxUnit, "pci-max-unit", nil, "max_unit of a --newton-classes PCI pool class, CLASS=N (repeatable; default: the class's total)")
	fs.BoolVar(&inventoryFlags.newton, "newton-classes", false, "also write the Newton spec's classes Nova 26 never reports: NUMA_CORE, NUMA_THREAD, NUMA_SOCKET, NUMA_MEMORY_MB and pci_stats' pools (PCI_DEVICE, SRIOV_NET_VF, ...); nova-compute removes them when it starts")
	fs.StringArrayVar(&inventoryFlags.shared, "shared-storage", nil, "POOL=HOST_GLOB[,POOL=HOST_GLOB...]: matching hosts share the pool's DISK_GB through one sharing provider (repeatable)")
	fs.StringVar(&inventoryFlags.diskMax, "disk-max-unit", migrate.DiskMaxUnitTotal, "DISK_GB max_unit: total (local_gb, what Nova's resource tracker writes) or available-least (disk_available_least: no server larger than the free disk is scheduled, but heal then refuses every instance already larger)")
	addComputeConfigDirFlag(fs, mf)
	fs.IntVar(&inventoryFlags.parallel, "parallel", migrate.DefaultParallel, "concurrent Placement writers (MySQL or the Placement API; SQLite has one writer)")
	fs.BoolVar(&inventoryFlags.force, "force", false, fmt.Sprintf("migrate even when a nova-conductor or nova-osapi_compute service is older than version %d, and overwrite the providers a nova-compute already owns (its virt driver's capability traits are on the root), printing each change first", status.DefaultMinServiceVersion))
}

// addComputeConfigDirFlag adds --compute-config-dir, which the inventory
// and the allocations migrations both read (computeConfig): once, since
// migrate all offers both migrations' flags.
func addComputeConfigDirFlag(fs *pflag.FlagSet, mf *migrationFlags) {
	if fs.Lookup("compute-config-dir") != nil {
		return
	}
	fs.StringVar(&mf.inventory.hostConfDir, "compute-config-dir", "", shared.ComputeConfigDirUsage)
	cmdutil.MarkPathFlags(fs, "input", "compute-config-dir")
}

func inventoryConfig(f *cmdutil.Factory, mf *migrationFlags) (migrate.InventoryConfig, error) {
	var c migrate.InventoryConfig
	inventoryFlags := &mf.inventory
	switch inventoryFlags.layout {
	case migrate.LayoutFlat, migrate.LayoutNested:
		c.Layout = inventoryFlags.layout
	default:
		return c, fmt.Errorf("--layout %q: expected flat or nested", inventoryFlags.layout)
	}
	if inventoryFlags.parallel < 1 {
		return c, fmt.Errorf("--parallel %d: expected 1 or more", inventoryFlags.parallel)
	}
	var err error
	if c.DiskMaxUnit, err = migrate.ParseDiskMaxUnit(inventoryFlags.diskMax); err != nil {
		return c, err
	}
	if c.PCIMaxUnit, err = migrate.ParsePCIMaxUnit(inventoryFlags.pciMaxUnit); err != nil {
		return c, err
	}
	if c.SharedStorage, err = migrate.ParseSharedStorage(inventoryFlags.shared); err != nil {
		return c, err
	}
	nc, err := computeConfig(f, mf)
	if err != nil {
		return c, err
	}
	c.Ratios, c.Reserved, c.PCI, c.Hosts = nc.Ratios, nc.Reserved, nc.PCI, nc.Hosts
	c.NewtonClasses = inventoryFlags.newton
	c.OverwriteOwned = inventoryFlags.force
	return c, nil
}

// computeConfig is what the compute nodes' nova-compute reads from
// nova.conf, the one reading of it both the inventory and the allocations
// migration use (and rpctl status, through shared.ComputeConfig): ratios
// (the ratio flags winning), reserved_host_*, [pci], and every
// --compute-config-dir host's own file.
func computeConfig(f *cmdutil.Factory, mf *migrationFlags) (*migrate.InventoryConfig, error) {
	rel, err := shared.ParseRelease(mf.ratios.release)
	if err != nil {
		return nil, &cmdutil.ExitError{Code: cmdutil.ExitBadMaxCount, Err: err}
	}
	c, err := shared.ComputeConfig(f, rel, func(r config.Ratios) (config.Ratios, error) { return withRatioFlags(r, &mf.ratios) }, mf.inventory.hostConfDir)
	if err != nil {
		return nil, err
	}
	return &c, nil
}

// inventoryPlacement is the Placement the inventory step writes: its
// database when one is given (one transaction per node), else, with a
// controller's nova.conf alone ([placement] credentials) or --os-*, the
// Placement API, as nova-compute's report client writes it (issue 34).
func inventoryPlacement(ctx context.Context, f *cmdutil.Factory, dbs *storage.Databases) (migrate.Placement, error) {
	if dbs.Placement != nil {
		return stores.MigratePlacement(dbs.Placement), nil
	}
	if !f.UsePlacementAPI() {
		return nil, fmt.Errorf("%w for Placement: give --placement-db URL (or --db FILE), placement.conf with [placement_database] connection, or nova.conf's [placement] credentials (or --os-cloud/--os-endpoint) for the Placement API", storage.ErrNoDatabase)
	}
	c, err := f.PlacementClient(ctx)
	if err != nil {
		return nil, err
	}
	return &placementclient.MigratePlacement{C: c}, nil
}

func buildInventory(ctx context.Context, f *cmdutil.Factory, dbs *storage.Databases, o *MigrateOptions) ([]migrate.Migration, error) {
	c, err := inventoryConfig(f, &o.flags)
	if err != nil {
		return nil, err
	}
	placement, err := inventoryPlacement(ctx, f, dbs)
	if err != nil {
		return nil, err
	}
	if err := checkControlServices(ctx, f, dbs, o.flags.inventory.force); err != nil {
		return nil, err
	}
	cells := stores.MigrateCells(dbs.Cells)
	warn, err := migrate.RunningComputesWarning(ctx, cells, c.Layout, time.Now())
	if err != nil {
		return nil, err
	}
	if warn != "" {
		fmt.Fprintln(f.IO.ErrOut, warn)
	}
	m := &migrate.Inventory{Cells: cells, Placement: placement, Config: c, Parallel: o.flags.inventory.parallel, Skipped: o.skipLog}
	p := o.bar(f, "inventory", "nodes")
	// The layout switch phase has a bar of its own, over the nodes that
	// switch (issue 35); on a terminal, the inventory bar gives it the
	// line while it runs (both are called from one goroutine at a time).
	sp := o.bar(f, "layout switch", "nodes")
	tty, switching := f.IO.IsStderrTTY(), false
	m.Progress = func(done, total int) {
		if !tty || !switching {
			p.Update(done, total)
		}
	}
	m.SwitchProgress = func(done, total int) {
		switching = total < 0 || done < total
		sp.UpdateDone(done, total)
	}
	m.AfterRun = func() { p.Clear(); sp.Clear() }
	m.Warn = func(msg string) { p.Clear(); sp.Clear(); fmt.Fprintln(f.IO.ErrOut, msg) }
	m.Notice = func(line string) { fmt.Fprintln(f.IO.ErrOut, line) }
	return []migrate.Migration{m}, nil
}

func fmtInv(v *inventory.Inventory) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("total=%d reserved=%d min=%d max=%d step=%d ratio=%s", v.Total, v.Reserved, v.MinUnit, v.MaxUnit, v.StepSize, migrate.FormatRatio(&v.AllocationRatio))
}

func dryRunInventory(ctx context.Context, f *cmdutil.Factory, dbs *storage.Databases, o *MigrateOptions) (int, error) {
	c, err := inventoryConfig(f, &o.flags)
	if err != nil {
		return 0, err
	}
	placement, err := inventoryPlacement(ctx, f, dbs)
	if err != nil {
		return 0, err
	}
	plan, err := migrate.PlanInventory(ctx, stores.MigrateCells(dbs.Cells), placement, &c)
	if err != nil {
		return 0, err
	}
	// Before the rows: a switch that would be refused makes its node a
	// skipped row.
	moves, err := plan.PlanMoves(ctx, placement, &c)
	if err != nil {
		return 0, err
	}
	exit, generated := 0, 0
	// One row per change, every column filled, so that -c, --sort-column
	// and csv see whole rows.
	rows := output.Rows{Headers: []string{"cell", "id", "provider", "uuid", "action", "resource_class", "before", "after"}}
	none := output.Cell{} // shown empty, null in json
	add := func(pn *migrate.PlannedNode) {
		var id any = none
		if pn.NodeID != 0 {
			id = pn.NodeID
		}
		if re := pn.RowError(); re != nil {
			exit = 2
			action := "skip (bad row)"
			if re.Unfit {
				action = "skip (layout switch refused)"
			}
			rows.Add(pn.Cell, id, pn.Host, pn.UUID, action, none, none, none)
			fmt.Fprintf(f.IO.ErrOut, "would skip %v\n", re)
			return
		}
		for _, ch := range pn.Changes {
			u := ch.UUID
			if u == "" {
				u = "(generated)"
				generated++
			}
			action := ch.Action
			if pn.Owner != "" {
				action += " (owned by nova-compute, --force)"
			}
			if len(ch.AddTraits) > 0 {
				action += " +traits " + strings.Join(ch.AddTraits, ",")
			}
			if len(ch.AddAggs) > 0 {
				action += " +aggregates " + strings.Join(ch.AddAggs, ",")
			}
			if len(ch.Inventories) == 0 {
				rows.Add(pn.Cell, id, ch.Name, u, action, none, none, none)
			}
			for _, ic := range ch.Inventories {
				rows.Add(pn.Cell, id, ch.Name, u, action, ic.ResourceClass, fmtInv(ic.Before), fmtInv(ic.After))
			}
		}
	}
	for _, pn := range plan.Shared {
		add(pn)
	}
	for _, pn := range plan.Nodes {
		add(pn)
	}
	// Nodes a nova-compute owns: nothing is written there without --force.
	for _, pn := range plan.LeftAlone {
		fmt.Fprintf(f.IO.ErrOut, "would leave %s\n", strings.TrimPrefix(pn.LeftAloneNote(), migrate.InventoryName+": "))
		action := "left alone (owned by nova-compute)"
		if len(pn.Changes) == 0 {
			rows.Add(pn.Cell, pn.NodeID, pn.Host, pn.UUID, action, none, none, none)
		}
		for _, ch := range pn.Changes {
			for _, ic := range ch.Inventories {
				rows.Add(pn.Cell, pn.NodeID, ch.Name, ch.UUID, action, ic.ResourceClass, fmtInv(ic.Before), fmtInv(ic.After))
			}
			if len(ch.Inventories) == 0 {
				rows.Add(pn.Cell, pn.NodeID, ch.Name, ch.UUID, action, none, none, none)
			}
		}
	}
	// A layout switch's allocation moves, one row each: the provider the
	// allocation leaves, and where it goes.
	for _, mv := range moves {
		var id any = none
		if mv.NodeID != 0 {
			id = mv.NodeID
		}
		to := mv.ToName
		if to == "" {
			to = mv.To
		}
		from := mv.FromName
		if from == "" {
			from = mv.From
		}
		rows.Add(mv.Cell, id, from, mv.From, "move allocation", mv.Class,
			fmt.Sprintf("consumer %s used=%d", mv.Consumer, mv.Used), fmt.Sprintf("consumer %s used=%d on %s", mv.Consumer, mv.Used, to))
	}
	if err := f.Write(rows, nil); err != nil {
		return 0, err
	}
	if msg := c.UnusedHostsWarning(plan.UnusedHostConfigs); msg != "" {
		fmt.Fprintln(f.IO.ErrOut, msg)
	}
	for _, msg := range plan.CappedReserved.Warnings() {
		fmt.Fprintln(f.IO.ErrOut, msg)
	}
	fmt.Fprintf(f.IO.ErrOut, "%s: %d compute nodes to migrate or skip, %d unchanged, %d left alone (owned by nova-compute), %d sharing providers, %d allocations to move; nothing written (--dry-run)\n",
		migrate.InventoryName, len(plan.Nodes), plan.Unchanged, len(plan.LeftAlone), len(plan.Shared), len(moves))
	if generated > 0 {
		fmt.Fprintf(f.IO.ErrOut, "%s: %d compute nodes have no uuid yet: each gets a new one (written to compute_nodes.uuid), which its provider, shown as \"(generated)\", takes\n", migrate.InventoryName, generated)
	}
	return exit, nil
}

// checkControlServices refuses the inventory migration while a control
// service is older than the minimum version, unless --force.
func checkControlServices(ctx context.Context, f *cmdutil.Factory, dbs *storage.Databases, force bool) error {
	old, n, err := status.OldControlServices(ctx, stores.StatusCells(dbs.Cells), status.DefaultMinServiceVersion, 5)
	if err != nil || n == 0 {
		return err
	}
	msg := fmt.Sprintf("%d nova-conductor/nova-osapi_compute %s older than service version %d: %s",
		n, map[bool]string{true: "service is", false: "services are"}[n == 1], status.DefaultMinServiceVersion, strings.Join(old, ", "))
	if more := n - len(old); more > 0 {
		msg += fmt.Sprintf(" and %d more", more)
	}
	if force {
		fmt.Fprintf(f.IO.ErrOut, "Warning: %s; migrating anyway (--force).\n", msg)
		return nil
	}
	return &cmdutil.ExitError{Code: 2, Err: fmt.Errorf("refusing to migrate the inventory: %s. Upgrade them first (they do not read what this migration writes), or pass --force", msg)}
}
