package migrate

import (
	"crypto/sha1"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/rpctl/rpctl/internal/config"
	"github.com/rpctl/rpctl/internal/lazyre"
	"github.com/rpctl/rpctl/internal/nova"
	"github.com/rpctl/rpctl/internal/novaformats"
	"github.com/rpctl/rpctl/internal/sanitize"
	"github.com/rpctl/rpctl/internal/standards"
	"github.com/rpctl/rpctl/inventory"
)

// Layouts of the provider tree a compute node becomes.
const (
	LayoutFlat   = "flat"   // the spec's: everything on the compute node's provider
	LayoutNested = "nested" // one child provider per NUMA cell
)

// PFResourceClass is the class of type-PF PCI pools: os-resource-classes
// has SRIOV_NET_VF but nothing for physical functions.
const PFResourceClass = "CUSTOM_SRIOV_NET_PF"

// Traits the layouts put on providers.
const (
	TraitComputeNode = "COMPUTE_NODE" // Nova's resource tracker puts it on every compute root
	// TraitComputeStatusDisabled is on the root of a node whose nova-compute
	// service is disabled, and only there (statusTraits).
	TraitComputeStatusDisabled = "COMPUTE_STATUS_DISABLED"
	TraitNUMARoot              = "HW_NUMA_ROOT"
	TraitShares                = "MISC_SHARES_VIA_AGGREGATE"
)

// SharedPool is a --shared-storage pool: the hosts matching Globs keep their
// DISK_GB on one sharing provider.
type SharedPool struct {
	Name  string
	Globs []string
}

// InventoryConfig is what the inventory migration needs besides the rows.
type InventoryConfig struct {
	Layout        string
	PCIMaxUnit    map[string]int64 // --pci-max-unit CLASS=N
	SharedStorage []SharedPool
	Ratios        config.Ratios
	Reserved      config.Reserved
	// DiskMaxUnit is DiskMaxUnitTotal (the default, Nova's) or
	// DiskMaxUnitAvailableLeast.
	DiskMaxUnit string
	// NewtonClasses adds what the Newton spec proposed and Nova 26 never
	// reports: NUMA_CORE, NUMA_THREAD, NUMA_SOCKET and NUMA_MEMORY_MB on a
	// flat root, and pci_stats' pools (PCI_DEVICE, SRIOV_NET_VF,
	// CUSTOM_SRIOV_NET_PF, CUSTOM_PCI_*) on the root or, nested, on their
	// NUMA cell. A nova-compute that starts on the provider deletes them
	// (its update_provider_tree reports only its own classes); off by
	// default.
	NewtonClasses bool
	// PCI is nova.conf's [pci]: with report_in_placement on, one child
	// provider per PCI device (pci.go).
	PCI PCIConfig
	// OverwriteOwned (--force) writes the nodes whose root provider a
	// nova-compute already owns (owned.go); without it they are left alone.
	OverwriteOwned bool
	// Hosts are the compute hosts' own nova.conf (--compute-config-dir),
	// by the host column of compute_nodes: for a node of such a host the
	// options its nova-compute reads from its own config come from there
	// (ForHost); a host not listed uses Ratios, Reserved and PCI above.
	Hosts map[string]HostConfig
}

// HostConfig is what one nova-compute reads from its own nova.conf and
// reports to Placement: [DEFAULT] *_allocation_ratio and
// initial_*_allocation_ratio (ResourceTracker._copy_resources and
// update_provider_tree), reserved_host_cpus/memory_mb/disk_mb
// (_get_reserved_host_*), [pci] report_in_placement and device_spec
// (pci_placement_translator, Whitelist). They are the global options
// with the host's file read over them, ratio flags winning over both.
type HostConfig struct {
	Source   string // the host's file, for messages
	Ratios   config.Ratios
	Reserved config.Reserved
	PCI      PCIConfig
}

// ForHost returns the effective config of a compute host (a
// compute_nodes.host; nil for a row without one): c itself, or with the
// host's own Ratios, Reserved and PCI when Hosts has it. It is the one
// place a node's host config is chosen: PlanRow plans every row with it.
func (c *InventoryConfig) ForHost(host *string) *InventoryConfig {
	if host == nil {
		return c
	}
	h, ok := c.Hosts[*host]
	if !ok {
		return c
	}
	hc := *c
	hc.Ratios, hc.Reserved, hc.PCI = h.Ratios, h.Reserved, h.PCI
	hc.Hosts = nil
	return &hc
}

// CappedReserved counts, by reserved_host_* option, the nodes whose total
// it exceeds (NodePlan.Capped), with the first such host.
type CappedReserved map[string]*CappedNodes

// CappedNodes are the nodes one option is capped on.
type CappedNodes struct {
	Nodes int    `json:"nodes"`
	First string `json:"first_host"`
}

func (c CappedReserved) add(p *NodePlan) {
	for _, opt := range p.Capped {
		if c[opt] == nil {
			c[opt] = &CappedNodes{First: p.Host()}
		}
		c[opt].Nodes++
	}
}

// CappedWarnings are the warnings for CappedReserved, one line per option
// (issue 37 row 7: reserved_host_cpus = 99999999999 used to give reserved
// = total on 199 of 200 VCPU inventories without a word).
func (c CappedReserved) Warnings() []string {
	var out []string
	for _, opt := range sortedKeys(c) {
		n := c[opt]
		class := map[string]string{"reserved_host_cpus": "VCPU", "reserved_host_memory_mb": "MEMORY_MB", "reserved_host_disk_mb": "DISK_GB"}[opt]
		nodes := fmt.Sprintf("%d compute nodes", n.Nodes)
		if n.Nodes == 1 {
			nodes = "1 compute node"
		}
		out = append(out, fmt.Sprintf("Warning: [DEFAULT] %s is above the %s total of %s (%s first): their %s reserved is set to the total, leaving no capacity (Nova 26 would send the option's value and Placement refuse it, reserved > total)",
			opt, class, nodes, sanitize.String(n.First), class))
	}
	return out
}

// UnusedHostsWarning names unused hosts (UnusedHosts) and their files; ""
// when there are none.
func (c *InventoryConfig) UnusedHostsWarning(unused []string) string {
	if len(unused) == 0 {
		return ""
	}
	files := make([]string, len(unused))
	for i, h := range unused {
		files[i] = c.Hosts[h].Source
	}
	return fmt.Sprintf("Warning: no live compute node has host %s: %s not used (%s)",
		strings.Join(unused, ", "), map[bool]string{true: "its config is", false: "their configs are"}[len(unused) == 1], strings.Join(files, ", "))
}

// reportsPCI says whether any host's config reports PCI devices in
// Placement: only then are the cells' pci_devices read.
func (c *InventoryConfig) reportsPCI() bool {
	if c.PCI.ReportInPlacement {
		return true
	}
	for _, h := range c.Hosts {
		if h.PCI.ReportInPlacement {
			return true
		}
	}
	return false
}

// UnusedHosts are the hosts of Hosts that are not in seen, sorted: a
// file for a host that has no compute node in the cells migrated.
func (c *InventoryConfig) UnusedHosts(seen map[string]bool) []string {
	var out []string
	for _, h := range sortedKeys(c.Hosts) {
		if !seen[h] {
			out = append(out, h)
		}
	}
	return out
}

// DISK_GB max_unit rules (--disk-max-unit).
const (
	// DiskMaxUnitTotal is what Nova's resource tracker writes (max_unit =
	// local_gb) and rewrites at every periodic update of a running
	// nova-compute.
	DiskMaxUnitTotal = "total"
	// DiskMaxUnitAvailableLeast is the Newton spec's suggestion
	// (disk_available_least): no new server larger than the disk still free
	// is scheduled, but heal then refuses every instance already larger.
	DiskMaxUnitAvailableLeast = "available-least"
)

// ParseDiskMaxUnit reads --disk-max-unit.
func ParseDiskMaxUnit(v string) (string, error) {
	switch v {
	case "", DiskMaxUnitTotal:
		return DiskMaxUnitTotal, nil
	case DiskMaxUnitAvailableLeast:
		return v, nil
	}
	return "", fmt.Errorf("--disk-max-unit %q: expected %s or %s", v, DiskMaxUnitTotal, DiskMaxUnitAvailableLeast)
}

// diskMaxUnit is the node's DISK_GB max_unit under the configured rule.
func (c *InventoryConfig) diskMaxUnit(total int64, dal *int64) int64 {
	if c.DiskMaxUnit == DiskMaxUnitAvailableLeast {
		return DiskMaxUnit(total, dal)
	}
	return total
}

// ParseSharedStorage reads --shared-storage values: comma-separated
// POOL=HOST_GLOB pairs; a pool named several times collects all its globs.
func ParseSharedStorage(vals []string) ([]SharedPool, error) {
	var out []SharedPool
	idx := map[string]int{}
	for _, v := range vals {
		for _, pair := range strings.Split(v, ",") {
			pair = strings.TrimSpace(pair)
			if pair == "" {
				continue
			}
			name, glob, ok := strings.Cut(pair, "=")
			name, glob = strings.TrimSpace(name), strings.TrimSpace(glob)
			if !ok || name == "" || glob == "" {
				return nil, fmt.Errorf("--shared-storage %q: expected POOL=HOST_GLOB", pair)
			}
			if _, err := path.Match(glob, ""); err != nil {
				return nil, fmt.Errorf("--shared-storage %q: bad glob: %v", pair, err)
			}
			i, seen := idx[name]
			if !seen {
				i = len(out)
				idx[name] = i
				out = append(out, SharedPool{Name: name})
			}
			out[i].Globs = append(out[i].Globs, glob)
		}
	}
	return out, nil
}

// ParsePCIMaxUnit reads --pci-max-unit values: CLASS=N.
func ParsePCIMaxUnit(vals []string) (map[string]int64, error) {
	out := map[string]int64{}
	for _, v := range vals {
		for _, pair := range strings.Split(v, ",") {
			if strings.TrimSpace(pair) == "" {
				continue
			}
			k, n, ok := strings.Cut(pair, "=")
			var x int64
			if _, err := fmt.Sscan(strings.TrimSpace(n), &x); !ok || err != nil || x < 1 {
				return nil, fmt.Errorf("--pci-max-unit %q: expected RESOURCE_CLASS=N with N >= 1", pair)
			}
			out[NormalizeClass(strings.TrimSpace(k))] = x
		}
	}
	return out, nil
}

var invalidClassChars = &lazyre.Regexp{Expr: `[^A-Z0-9_]`}

// NormalizeClass turns a name into a resource class Placement accepts: a
// standard class stays; anything else is upper-cased, characters outside
// [A-Z0-9_] become "_", and it gets the CUSTOM_ prefix unless it has it.
func NormalizeClass(name string) string {
	up := strings.ToUpper(name)
	if standards.IsResourceClass(up) {
		return up
	}
	up = invalidClassChars.Get().ReplaceAllString(up, "_")
	if !strings.HasPrefix(up, "CUSTOM_") {
		up = "CUSTOM_" + up
	}
	return up
}

// pciClass is the resource class of a PCI pool: its resource_class tag,
// else by dev_type (type-PCI and pools without dev_type, which predate the
// tag: PCI_DEVICE; type-VF: SRIOV_NET_VF; type-PF: PFResourceClass; any
// other type, such as type-VDPA: CUSTOM_PCI_<TYPE>).
func pciClass(p novaformats.PCIPool) string {
	if rc := strings.TrimSpace(p.Tags["resource_class"]); rc != "" {
		return NormalizeClass(rc)
	}
	switch t := p.DevType(); t {
	case "", "type-PCI":
		return "PCI_DEVICE"
	case "type-VF":
		return "SRIOV_NET_VF"
	case "type-PF":
		return PFResourceClass
	default:
		return NormalizeClass("PCI_" + strings.TrimPrefix(t, "type-"))
	}
}

// ratioFixed marks an inventory whose ratio is not one of Nova's three:
// 1.0 unless Placement holds a value.
const ratioFixed RatioKind = -1

// ratioPCPU is PCPU's: always 1.0, as LibvirtDriver.update_provider_tree
// writes it ('allocation_ratio': 1) at every update.
const ratioPCPU RatioKind = -2

// DesiredInventory is an inventory before its allocation ratio is resolved
// against what Placement holds.
type DesiredInventory struct {
	inventory.Inventory
	kind RatioKind
	row  *float64 // the compute node row's ratio column
	// ratios are the ratio options of the config the inventory was
	// planned with (its host's: ForHost), so that every later diff of the
	// plan resolves the ratio as its own nova-compute would.
	ratios *config.Ratios
	// src and val name the column the inventory comes from and its
	// value, for the message of a bad row. The value is quoted only for
	// that message: quoting numa_topology for every inventory of every
	// node was 18% of `migrate inventory`'s CPU over 100,000 nodes.
	src   string
	val   *string
	num   int64
	isNum bool
}

// from records where an inventory comes from: a text column.
func (d DesiredInventory) from(src string, val *string) DesiredInventory {
	d.src, d.val = src, val
	return d
}

// fromInt records where an inventory comes from: an integer column.
func (d DesiredInventory) fromInt(src string, v int64) DesiredInventory {
	d.src, d.num, d.isNum = src, v, true
	return d
}

// DesiredProvider is one provider of a node's tree.
type DesiredProvider struct {
	UUID        string
	Name        string
	ParentUUID  string
	Inventories map[string]DesiredInventory
	Traits      []string
	// NotTraits are traits the provider must not have: a re-run removes
	// them (statusTraits).
	NotTraits  []string
	Aggregates []string
	// child names a child provider within its tree ("numa-0"); its uuid is
	// derived from the root's and this.
	child string
}

// NodePlan is the desired provider tree of one compute node.
type NodePlan struct {
	Cell string
	Node nova.ComputeNode
	// Providers, root first, then children; UUIDs of a node without a uuid
	// are filled in by Bind.
	Providers []DesiredProvider
	pool      int // index into the shared pools, -1 for none
	// Capped names the reserved_host_* options above this node's total:
	// the reserved written is the total (no capacity left), where Nova
	// would send the option's value and Placement refuse it.
	Capped []string
}

// Host is the node's hypervisor_hostname (the provider name).
func (p *NodePlan) Host() string {
	if p.Node.HypervisorHostname != nil {
		return *p.Node.HypervisorHostname
	}
	return ""
}

func (c *InventoryConfig) ratio(d DesiredInventory, existing *inventory.Inventory) float64 {
	if d.kind == ratioPCPU {
		return 1
	}
	var cur *float64
	if existing != nil {
		cur = &existing.AllocationRatio
	}
	// The Stein initial-allocation-ratios rule, shared with `migrate ratios`.
	override, initial := (*float64)(nil), 1.0
	if d.kind != ratioFixed {
		r := &c.Ratios
		if d.ratios != nil {
			r = d.ratios
		}
		override, initial = d.kind.Conf(*r)
	}
	v, _ := PlacementRatio(override, cur, d.row, initial)
	return v
}

// childUUID derives a stable uuid (RFC 4122 version 5) for a child
// provider, so that a re-run after a crash finds the child it created.
func childUUID(parent, what string) string { return uuid5(parent, what) }

func uuid5(ns, name string) string {
	h := sha1.Sum([]byte("rpctl:" + ns + ":" + name))
	h[6] = (h[6] & 0x0f) | 0x50
	h[8] = (h[8] & 0x3f) | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", h[0:4], h[4:6], h[6:8], h[8:10], h[10:16])
}

// SharedProviderUUID and SharedAggregateUUID name a pool's sharing provider
// and aggregate; they are derived from the pool name so every run agrees.
func SharedProviderUUID(pool string) string  { return uuid5("shared-storage-provider", pool) }
func SharedAggregateUUID(pool string) string { return uuid5("shared-storage-aggregate", pool) }

// SharedProviderName is the sharing provider's name.
func SharedProviderName(pool string) string { return "shared-storage-" + pool }

func inv(total, reserved, maxUnit int64, kind RatioKind, row *float64) DesiredInventory {
	reserved = min(max(reserved, 0), total)
	maxUnit = min(max(maxUnit, 1), total)
	return DesiredInventory{Inventory: inventory.Inventory{Total: total, Reserved: reserved, MinUnit: 1, MaxUnit: maxUnit, StepSize: 1}, kind: kind, row: row}
}

func put(m map[string]DesiredInventory, rc string, d DesiredInventory) {
	if d.Total > 0 {
		m[rc] = d
	}
}

// DiskMaxUnit is DISK_GB's max_unit under --disk-max-unit available-least:
// disk_available_least when it is
// between 1 and the total (the largest disk that still fits); otherwise the
// total. NULL means the driver never reported it; zero or negative is what
// libvirt reports when sparse images overcommit the disk, and more than the
// total is not a real value: in those cases, like Nova's resource tracker
// (which ignores disk_available_least), a single server may take all of it.
func DiskMaxUnit(total int64, dal *int64) int64 {
	if dal != nil && *dal >= 1 && *dal <= total {
		return *dal
	}
	return total
}

// ReservedDiskGB rounds reserved_host_disk_mb up to whole GiB, as Nova's
// resource tracker does.
func ReservedDiskGB(mb int64) int64 { return (mb + 1023) / 1024 }

// PlanNode turns a compute node row into its desired provider tree. An
// error means the row is bad and is skipped.
func (c *InventoryConfig) PlanNode(cell string, n nova.ComputeNode) (*NodePlan, error) {
	return c.PlanRow(cell, NodeRow{Node: n})
}

// PlanRow turns a compute node row, with what its cell says beside it,
// into its desired provider tree: the row is validated once
// (validate.go), then planned; an error means the row is bad and is
// skipped.
//
// The row is planned with its host's config (ForHost).
func (c *InventoryConfig) PlanRow(cell string, r NodeRow) (*NodePlan, error) {
	hc := c.ForHost(r.Node.Host)
	v, err := hc.validate(r)
	if err != nil {
		return nil, err
	}
	p := hc.plan(cell, v)
	hc.bindRatios(p.Providers)
	return p, nil
}

// bindRatios records c's ratio options on every inventory of providers.
func (c *InventoryConfig) bindRatios(providers []DesiredProvider) {
	r := &c.Ratios
	for _, d := range providers {
		for rc, di := range d.Inventories {
			di.ratios = r
			d.Inventories[rc] = di
		}
	}
}

// plan builds the provider tree of a validated row; it cannot fail.
func (c *InventoryConfig) plan(cell string, v *validRow) *NodePlan {
	n := v.row.Node
	p := &NodePlan{Cell: cell, Node: n, pool: -1}
	host := p.Host()
	for i := range c.SharedStorage {
		if c.inPool(i, n) {
			p.pool = i
			break
		}
	}
	uuid := ""
	if n.UUID != nil {
		uuid = *n.UUID
	}
	root := DesiredProvider{UUID: uuid, Name: host, Inventories: map[string]DesiredInventory{}, Traits: []string{TraitComputeNode}}
	for _, st := range statusTraits {
		if st.has(v.row) {
			root.Traits = append(root.Traits, st.trait)
		} else {
			root.NotTraits = append(root.NotTraits, st.trait)
		}
	}
	rs := c.Reserved
	if p.pool < 0 && n.LocalGB > 0 && ReservedDiskGB(rs.DiskMB) > n.LocalGB {
		p.Capped = append(p.Capped, "reserved_host_disk_mb")
	}
	if p.pool < 0 {
		put(root.Inventories, "DISK_GB", inv(n.LocalGB, ReservedDiskGB(rs.DiskMB), c.diskMaxUnit(n.LocalGB, n.DiskAvailableLeast), RatioDisk, n.DiskAllocationRatio).fromInt("local_gb", n.LocalGB))
	} else {
		root.Aggregates = []string{SharedAggregateUUID(c.SharedStorage[p.pool].Name)}
	}
	for _, rc := range sortedKeys(v.extra) {
		total := v.extra[rc]
		put(root.Inventories, rc, inv(total, 0, total, ratioFixed, nil).from("extra_resources", n.ExtraResources))
	}
	// VCPU reserved: CONF.reserved_host_cpus, 0 on a CPU-set host (cpu.go).
	resCPU := rs.CPUs
	if cpuModes[v.cpu].zeroReserved {
		resCPU = 0
	}
	if n.VCPUs > 0 && resCPU > n.VCPUs {
		p.Capped = append(p.Capped, "reserved_host_cpus")
	}
	if n.MemoryMB > 0 && rs.MemoryMB > n.MemoryMB {
		p.Capped = append(p.Capped, "reserved_host_memory_mb")
	}
	nested := c.Layout == LayoutNested && len(v.cells) > 0
	// pciInv adds the Newton spec's PCI pool classes (NewtonClasses only).
	pciInv := func(where int64, m map[string]DesiredInventory) {
		if !c.NewtonClasses {
			return
		}
		for _, k := range v.pciKeys {
			if k.cell != where {
				continue
			}
			if _, clash := m[k.rc]; clash {
				continue // extra_resources already named it; the row's own list wins
			}
			total := v.pci[k]
			maxUnit := total
			if mu, ok := c.PCIMaxUnit[k.rc]; ok {
				maxUnit = mu
			}
			put(m, k.rc, inv(total, 0, maxUnit, ratioFixed, nil).from("pci_stats", n.PCIStats))
		}
	}
	pciInv(-1, root.Inventories)
	p.Providers = []DesiredProvider{root}
	p.Providers = append(p.Providers, v.pciChildren(uuid)...)
	if !nested {
		put(root.Inventories, "VCPU", inv(n.VCPUs, resCPU, n.VCPUs, RatioCPU, n.CPUAllocationRatio).fromInt("vcpus", n.VCPUs))
		if cpuModes[v.cpu].pcpu {
			put(root.Inventories, "PCPU", inv(v.pcpus, 0, v.pcpus, ratioPCPU, nil).from("numa_topology", n.NUMATopology))
		}
		put(root.Inventories, "MEMORY_MB", inv(n.MemoryMB, rs.MemoryMB, n.MemoryMB, RatioRAM, n.RAMAllocationRatio).fromInt("memory_mb", n.MemoryMB))
		if c.NewtonClasses && len(v.cells) > 0 {
			c.newtonNUMA(root.Inventories, v.cells, n.NUMATopology)
		}
		p.Providers[0] = root
		return p
	}
	p.Providers[0] = root
	// Host reservations fill the cells in id order: Nova reserves host CPUs
	// and memory per host, not per cell.
	resMem := rs.MemoryMB
	for _, cl := range v.cells {
		child := DesiredProvider{
			Name:        numaChildName(host, cl.ID),
			ParentUUID:  uuid,
			Inventories: map[string]DesiredInventory{},
			Traits:      []string{TraitNUMARoot},
			child:       fmt.Sprint("numa-", cl.ID),
		}
		if uuid != "" {
			child.UUID = childUUID(uuid, child.child)
		}
		// A CPU is PCPU only on a cpu_dedicated_set host; elsewhere pcpuset
		// repeats cpuset (cpu.go) and counting it again would count every
		// thread twice.
		if cpuModes[v.cpu].pcpu {
			put(child.Inventories, "PCPU", inv(int64(len(cl.PCPUs)), 0, int64(len(cl.PCPUs)), ratioPCPU, nil).from("numa_topology", n.NUMATopology))
		}
		shared := int64(len(cl.CPUs))
		r := min(resCPU, shared)
		resCPU -= r
		put(child.Inventories, "VCPU", inv(shared, r, shared, RatioCPU, n.CPUAllocationRatio).from("numa_topology", n.NUMATopology))
		r = min(resMem, cl.MemoryMB)
		resMem -= r
		put(child.Inventories, "MEMORY_MB", inv(cl.MemoryMB, r, cl.MemoryMB, RatioRAM, n.RAMAllocationRatio).from("numa_topology", n.NUMATopology))
		pciInv(cl.ID, child.Inventories)
		p.Providers = append(p.Providers, child)
	}
	return p
}

// pciChildren are the PCI device providers (pci.go): children of the
// root, named <hypervisor_hostname>_<PCI ADDRESS>, one class each with
// total and max_unit the devices it counts and Placement's defaults
// otherwise (PciResourceProvider.update_provider_tree), and the device's
// traits.
func (v *validRow) pciChildren(root string) []DesiredProvider {
	var out []DesiredProvider
	for _, pp := range v.pciRPs {
		n := pp.devs()
		d := DesiredProvider{
			Name:        pp.name,
			ParentUUID:  root,
			Inventories: map[string]DesiredInventory{},
			Traits:      pp.traits,
			child:       "pci-" + pp.addr,
		}
		if root != "" {
			d.UUID = childUUID(root, d.child)
		}
		put(d.Inventories, pp.rc, inv(n, 0, n, ratioFixed, nil).from("pci_devices", nil))
		out = append(out, d)
	}
	return out
}

// newtonNUMA adds the Newton spec's NUMA_* classes to a flat root
// (NewtonClasses only: Nova never reports them, and a nova-compute that
// starts deletes them).
func (c *InventoryConfig) newtonNUMA(m map[string]DesiredInventory, cells []novaformats.NUMACell, raw *string) {
	var threads, cores, mem, maxT, maxC, maxM int64
	sockets := map[string]bool{}
	for _, cl := range cells {
		t, co := cl.Threads(), cl.CoreCount()
		threads, cores, mem = threads+t, cores+co, mem+cl.MemoryMB
		maxT, maxC, maxM = max(maxT, t), max(maxC, co), max(maxM, cl.MemoryMB)
		if cl.Socket != nil {
			sockets[fmt.Sprint("s", *cl.Socket)] = true
		} else {
			sockets[fmt.Sprint("c", cl.ID)] = true
		}
	}
	put(m, "NUMA_THREAD", inv(threads, 0, maxT, ratioFixed, nil).from("numa_topology", raw))
	put(m, "NUMA_CORE", inv(cores, 0, maxC, ratioFixed, nil).from("numa_topology", raw))
	put(m, "NUMA_SOCKET", inv(int64(len(sockets)), 0, 1, ratioFixed, nil).from("numa_topology", raw))
	put(m, "NUMA_MEMORY_MB", inv(mem, 0, maxM, ratioFixed, nil).from("numa_topology", raw))
}

// statusTraits are the root traits Nova's resource tracker derives from
// the cell database beside the row, added when has is true and removed
// otherwise. COMPUTE_STATUS_DISABLED follows
// ResourceTracker._sync_compute_service_disabled_trait: the trait is there
// exactly when Service.get_by_compute_host(host) (the live nova-compute
// service of the row's host) is disabled; a host without a service row is
// left as it is there, and gets no trait here.
var statusTraits = []struct {
	trait string
	has   func(NodeRow) bool
}{
	{TraitComputeStatusDisabled, func(r NodeRow) bool { return r.ServiceDisabled }},
}

// numaChildName is a NUMA cell's provider name in the nested layout.
func numaChildName(host string, cell int64) string { return fmt.Sprintf("%s_NUMA%d", host, cell) }

func (c *InventoryConfig) inPool(i int, n nova.ComputeNode) bool {
	for _, g := range c.SharedStorage[i].Globs {
		for _, h := range []*string{n.Host, n.HypervisorHostname} {
			if h != nil {
				if ok, _ := path.Match(g, *h); ok {
					return true
				}
			}
		}
	}
	return false
}

// Bind sets the node's uuid (after it was generated and stored) on the plan.
func (p *NodePlan) Bind(uuid string) {
	p.Node.UUID = &uuid
	p.Providers[0].UUID = uuid
	for i := 1; i < len(p.Providers); i++ {
		p.Providers[i].UUID = childUUID(uuid, p.Providers[i].child)
		p.Providers[i].ParentUUID = uuid
	}
}

// SharedPlans builds each pool's sharing provider from its member nodes:
// DISK_GB total is the largest local_gb the members report (they all see
// the same pool), reserved is reserved_host_disk_mb rounded up, max_unit the
// total, and the ratio follows the disk rule with the first member's row
// value. A pool spans hosts: its options are the global ones, never a
// host's own (Hosts).
func (c *InventoryConfig) SharedPlans(plans []*NodePlan) []DesiredProvider {
	var out []DesiredProvider
	for i, sp := range c.SharedStorage {
		var total int64
		var row *float64
		members := 0
		for _, p := range plans {
			if p.pool != i {
				continue
			}
			members++
			total = max(total, p.Node.LocalGB)
			if row == nil && p.Node.DiskAllocationRatio != nil && *p.Node.DiskAllocationRatio != 0 {
				row = p.Node.DiskAllocationRatio
			}
		}
		if members == 0 {
			continue
		}
		d := DesiredProvider{
			UUID: SharedProviderUUID(sp.Name), Name: SharedProviderName(sp.Name),
			Inventories: map[string]DesiredInventory{},
			Traits:      []string{TraitShares},
			Aggregates:  []string{SharedAggregateUUID(sp.Name)},
		}
		put(d.Inventories, "DISK_GB", inv(total, ReservedDiskGB(c.Reserved.DiskMB), total, RatioDisk, row))
		out = append(out, d)
	}
	c.bindRatios(out)
	return out
}

// InventoryChange is one inventory's before and after, for --dry-run.
type InventoryChange struct {
	ResourceClass string               `json:"resource_class"`
	Before        *inventory.Inventory `json:"before"`
	After         *inventory.Inventory `json:"after"`
}

// ProviderChange describes what happens to one provider.
type ProviderChange struct {
	UUID         string            `json:"uuid"`
	Name         string            `json:"name"`
	Parent       string            `json:"parent_provider_uuid,omitempty"`
	Action       string            `json:"action"` // create, update or delete
	Inventories  []InventoryChange `json:"inventories"`
	AddTraits    []string          `json:"add_traits,omitempty"`
	RemoveTraits []string          `json:"remove_traits,omitempty"`
	AddAggs      []string          `json:"add_aggregates,omitempty"`
}

// Diff compares desired providers with Placement's state and returns the
// writes (nil when nothing changes) and a description of the changes. A
// provider name held by another uuid is an error: Placement names are
// unique.
func (c *InventoryConfig) Diff(desired []DesiredProvider, st *PlacementState) (*NodeWrite, []ProviderChange, error) {
	w := &NodeWrite{}
	var changes []ProviderChange
	var used [][2]string // inventories removed with allocations: a layout switch
	for _, d := range desired {
		cur := st.Providers[d.UUID]
		if other, ok := st.ByName[d.Name]; ok && other != d.UUID {
			return nil, nil, fmt.Errorf("resource provider name %q is already used by provider %s", d.Name, other)
		}
		pw := ProviderWrite{UUID: d.UUID, Name: d.Name, ParentUUID: d.ParentUUID}
		ch := ProviderChange{UUID: d.UUID, Name: d.Name, Parent: d.ParentUUID}
		if cur == nil {
			pw.Create = true
			ch.Action = "create"
			pw.AddInventories = map[string]inventory.Inventory{}
			for _, rc := range sortedKeys(d.Inventories) {
				di := d.Inventories[rc]
				v := di.Inventory
				v.AllocationRatio = c.ratio(di, nil)
				if err := checkRatio(rc, v.AllocationRatio); err != nil {
					return nil, nil, err
				}
				pw.AddInventories[rc] = v
				ch.Inventories = append(ch.Inventories, InventoryChange{ResourceClass: rc, After: &v})
			}
			pw.AddTraits, pw.AddAggregates = d.Traits, d.Aggregates
			ch.AddTraits, ch.AddAggs = d.Traits, d.Aggregates
			pw.Generation = bumps(len(pw.AddInventories) > 0, len(pw.AddTraits) > 0, len(pw.AddAggregates) > 0)
			w.Providers = append(w.Providers, pw)
			changes = append(changes, ch)
			continue
		}
		if cur.ParentUUID != d.ParentUUID {
			return nil, nil, fmt.Errorf("resource provider %s (%s) exists with parent %q, not %q", d.UUID, d.Name, cur.ParentUUID, d.ParentUUID)
		}
		pw.ExpectGeneration = cur.Generation
		invChanged := false
		for _, rc := range sortedKeys(d.Inventories) {
			di := d.Inventories[rc]
			v := di.Inventory
			old, has := cur.Inventories[rc]
			if has {
				v.AllocationRatio = c.ratio(di, &old)
				if err := checkRatio(rc, v.AllocationRatio); err != nil {
					return nil, nil, err
				}
				if old.Equal(v) {
					continue
				}
				if pw.UpdateInventories == nil {
					pw.UpdateInventories = map[string]inventory.Inventory{}
				}
				pw.UpdateInventories[rc] = v
				o := old
				ch.Inventories = append(ch.Inventories, InventoryChange{ResourceClass: rc, Before: &o, After: &v})
			} else {
				v.AllocationRatio = c.ratio(di, nil)
				if err := checkRatio(rc, v.AllocationRatio); err != nil {
					return nil, nil, err
				}
				if pw.AddInventories == nil {
					pw.AddInventories = map[string]inventory.Inventory{}
				}
				pw.AddInventories[rc] = v
				ch.Inventories = append(ch.Inventories, InventoryChange{ResourceClass: rc, After: &v})
			}
			invChanged = true
		}
		for _, rc := range sortedKeys(cur.Inventories) {
			if _, want := d.Inventories[rc]; !want && ManagesClass(rc) {
				if cur.Used[rc] {
					used = append(used, [2]string{d.UUID, rc})
				}
				pw.DeleteInventories = append(pw.DeleteInventories, rc)
				o := cur.Inventories[rc]
				ch.Inventories = append(ch.Inventories, InventoryChange{ResourceClass: rc, Before: &o})
				invChanged = true
			}
		}
		for _, t := range d.Traits {
			if !cur.Traits[t] {
				pw.AddTraits = append(pw.AddTraits, t)
			}
		}
		for _, t := range d.NotTraits {
			if cur.Traits[t] {
				pw.RemoveTraits = append(pw.RemoveTraits, t)
			}
		}
		for _, a := range d.Aggregates {
			if !cur.Aggregates[a] {
				pw.AddAggregates = append(pw.AddAggregates, a)
			}
		}
		ch.AddTraits, ch.RemoveTraits, ch.AddAggs = pw.AddTraits, pw.RemoveTraits, pw.AddAggregates
		traitsChanged := len(pw.AddTraits) > 0 || len(pw.RemoveTraits) > 0
		if !invChanged && !traitsChanged && len(pw.AddAggregates) == 0 {
			continue
		}
		pw.Generation = cur.Generation + bumps(invChanged, traitsChanged, len(pw.AddAggregates) > 0)
		ch.Action = "update"
		w.Providers = append(w.Providers, pw)
		changes = append(changes, ch)
	}
	if err := c.planSwitch(desired, st, w, &changes, used); err != nil {
		return nil, nil, err
	}
	if len(w.Providers) == 0 {
		return nil, nil, nil
	}
	return w, changes, nil
}

// bumps counts generation increments the way the Placement API would make
// them for the same change: one for the inventory PUT, one for the traits
// PUT, one for the aggregates PUT.
func bumps(flags ...bool) int64 {
	var n int64
	for _, f := range flags {
		if f {
			n++
		}
	}
	return n
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// ComputeConfig is the InventoryConfig of what Nova's nova-compute
// reports, from nova.conf's options: the flat layout, DISK_GB max_unit the
// total, no Newton classes, and the ratio, reserved and [pci] options of o.
// A bad [pci] device_spec is an error naming its file. `migrate inventory`
// starts from it and adds its flags; `rpctl status` plans with it as it is.
func ComputeConfig(o config.Options) (InventoryConfig, error) {
	c := InventoryConfig{Layout: LayoutFlat, DiskMaxUnit: DiskMaxUnitTotal, Ratios: o.Ratios, Reserved: o.Reserved}
	var err error
	if c.PCI, err = ParsePCIConfig(o.PCI.ReportInPlacement, o.PCI.DeviceSpec); err != nil {
		return c, fmt.Errorf("%s: %w", o.PCI.Source, err)
	}
	return c, nil
}
