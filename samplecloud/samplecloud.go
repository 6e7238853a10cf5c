// Package samplecloud generates a realistic pre-migration Nova deployment:
// compute nodes in the legacy compute_nodes layout with every stored format
// of pci_stats and numa_topology Nova has used, NULL uuids and unset
// allocation ratios, soft-deleted rows, services, instances with flavors and
// in-progress migrations. It is deterministic in the seed, so tests and bug
// reports can name a cloud by its options.
package samplecloud

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/rpctl/rpctl/internal/nova"
	"github.com/rpctl/rpctl/internal/release"
	"github.com/rpctl/rpctl/status"
)

// Options say what cloud to generate.
type Options struct {
	// Nodes is the number of live, valid compute nodes. About one in twenty
	// more rows are soft-deleted (old hardware of a live host, or a
	// decommissioned host).
	Nodes int
	// Cells spreads the nodes over cell1..cellN, in contiguous blocks.
	Cells int
	Seed  int64
	// BadRows adds that many malformed live rows (see BadKinds) to cell1.
	BadRows int
	// MaxInstancesPerNode bounds the instances placed on each live node
	// (0..max, uniformly); 0 means the default of 3, negative none.
	MaxInstancesPerNode int
	// Release is the release whose row shapes the cloud has (RowShapeOf);
	// "" is release.Default. The same seed gives the same rows in every
	// release, but for the columns a release adds.
	Release release.Name
}

// RowShapeOf is the shape of release rel's cell rows, read from each
// release's own code; a release not in the table is an error.
func RowShapeOf(rel release.Name) (nova.RowShape, error) {
	if rel == "" {
		rel = release.Default
	}
	// Nova 28 (2023.2) on: the resource tracker sets instance.compute_id
	// = node.id with instance.node (nova/compute/resource_tracker.py
	// _set_instance_host_and_node, :563) and migration.dest_compute_id =
	// node.id with dest_node (_create_migration :392,
	// _claim_existing_migration :418), the same lines in the 28.0.0,
	// 29.0.0, 30.0.0 and 31.0.0 tags; Migration.create refuses a dest_node
	// without it (nova/objects/migration.py:198). Nova 27 (2023.1) has
	// neither column: its rows are Zed's shape.
	computeIDs := nova.RowShape{ComputeIDs: true}
	shapes := map[release.Name]nova.RowShape{
		release.Zed:     {},
		release.R2023_1: {},
		release.R2023_2: computeIDs,
		release.R2024_1: computeIDs,
		release.R2024_2: computeIDs,
		release.R2025_1: computeIDs,
	}
	s, ok := shapes[rel]
	if !ok {
		return nova.RowShape{}, fmt.Errorf("sample-cloud knows the row shapes of %v, not of release %q", slices.Sorted(maps.Keys(shapes)), rel)
	}
	return s, nil
}

// Defaults for Options fields left at zero.
const (
	DefaultNodes               = 50
	DefaultMaxInstancesPerNode = 3
)

// MaxNodes bounds Options.Nodes: a cloud is generated in memory before it
// is written (about 4 KB a node with its instances), so a million nodes is
// about 4 GB, and more than any cell holds.
const MaxNodes = 1_000_000

// ServiceVersions is what release rel's sample cloud's services report:
// the control services (conductors, API, scheduler) rel's SERVICE_VERSION,
// and the computes spread from it down to the oldest compute version rel's
// control plane supports (OLDEST_SUPPORTED_SERVICE_VERSION's alias), both
// looked up in status's per-release tables (status.ServiceVersionOf,
// status.Releases), so that "Older than N-1 computes" passes at its edge
// and "status" on a fresh sample cloud says what that release's
// nova-status would: Zed 64 over 64, 63, 62, 61; 2025.1 68 over 68, 67,
// 66, 66. The spread always has six entries, so that a seed draws the
// same rows in every release.
func ServiceVersions(rel release.Name) (control int64, computes []int64, err error) {
	if rel == "" {
		rel = release.Default
	}
	top := status.ServiceVersionOf(rel)
	r, ok := status.Releases[rel]
	if top == 0 || !ok {
		return 0, nil, fmt.Errorf("sample-cloud knows no service versions of release %q", rel)
	}
	oldest := r.OldestComputeVersion
	// Versions 65 (2023.1's cycle) and the like that no release shipped
	// can show in the middle of the spread; a compute's version is only
	// ever compared with the thresholds.
	return top, []int64{top, top, top, max(top-1, oldest), max(top-2, oldest), oldest}, nil
}

// Snapshot is the moment the generated cloud describes: every timestamp is
// relative to it, so output does not depend on when it is generated.
var Snapshot = time.Date(2023, 3, 1, 12, 0, 0, 0, time.UTC)

// Cell is the rows of one cell database.
type Cell struct {
	Name         string
	UUID         string
	Services     []nova.Service
	ComputeNodes []nova.ComputeNode
	Instances    []nova.Instance
	Migrations   []nova.Migration
	// MappedHosts are the compute hosts that get a host mapping: every host
	// with a live compute node.
	MappedHosts []string
}

// Cloud is a generated deployment.
type Cloud struct {
	Options Options
	Cells   []Cell
	Flavors []nova.Flavor
	// Aggregates are the host aggregates of the live hosts, written to
	// the API database with it.
	Aggregates []nova.Aggregate
	// Kinds maps what a node exemplifies ("pci_stats=ovo-1.1",
	// "numa_topology=legacy", "ratios=zero", "uuid=null", "deleted",
	// "bad=negative-totals", ...) to compute node ids, for tests and for
	// picking examples.
	Kinds map[string][]int64
}

// Ratio kinds: what the three allocation-ratio columns hold.
const (
	RatiosDefaults  = "defaults"   // 1.5 / 16.0 / 1.0, what Stein+ computes write
	RatiosCustom    = "custom"     // operator-set values
	RatiosZero      = "zero"       // 0.0 everywhere, pre-Stein computes
	RatiosNull      = "null"       // NULL everywhere
	RatiosMixed     = "mixed"      // ram NULL, cpu/disk set
	RatiosMixedZero = "mixed-zero" // ram set, cpu NULL, disk 0.0
)

// RatioKinds lists the ratio kinds in the order the first nodes get them.
var RatioKinds = []string{RatiosDefaults, RatiosZero, RatiosNull, RatiosMixed, RatiosMixedZero, RatiosCustom}

// BadKinds are the defects --bad-rows injects, one per row in this order.
var BadKinds = []string{
	"unparsable-pci-stats", "unparsable-numa-topology", "negative-totals", "unknown-numa-format",
	"odd-hostname", "unknown-pci-format", "usage-over-capacity", "invalid-extra-resources", "negative-ratio",
}

type gen struct {
	rng  *rand.Rand
	o    Options
	c    *Cloud
	ids  struct{ node, svc, inst, mig int64 }
	live int // live valid nodes generated so far, across cells
	// computeSvc finds a host's nova-compute service (an index into its
	// cell's Services) without scanning them all.
	computeSvc map[string]int
	// ctx stops a generation under way (GenerateContext); polls counts
	// the calls of done, which looks at it every 1,024.
	ctx   context.Context
	polls int
	// control and computes are the release's service versions
	// (ServiceVersions).
	control  int64
	computes []int64
}

// done says whether the generation should stop: its context is done. It
// looks every 1,024 calls (a node or an instance's worth of work each), so
// a signal stops 200,000 nodes within milliseconds.
func (g *gen) done() bool {
	if g.ctx == nil {
		return false
	}
	g.polls++
	return g.polls%1024 == 0 && g.ctx.Err() != nil
}

// Generate builds a cloud. The same Options always give the same cloud.
func Generate(o Options) *Cloud {
	c, _ := generate(context.Background(), o)
	return c
}

// GenerateContext is Generate stopped when ctx is done (its error, and no
// cloud): a large cloud takes seconds of CPU to build, which a signal
// must not wait for.
func GenerateContext(ctx context.Context, o Options) (*Cloud, error) {
	c, err := generate(ctx, o)
	if err != nil {
		return nil, err
	}
	return c, nil
}

func generate(ctx context.Context, o Options) (*Cloud, error) {
	if o.Nodes <= 0 {
		o.Nodes = DefaultNodes
	}
	if o.Cells <= 0 {
		o.Cells = 1
	}
	if o.MaxInstancesPerNode == 0 {
		o.MaxInstancesPerNode = DefaultMaxInstancesPerNode
	}
	shape, err := RowShapeOf(o.Release)
	if err != nil {
		return nil, err
	}
	control, computes, err := ServiceVersions(o.Release)
	if err != nil {
		return nil, err
	}
	g := &gen{rng: rand.New(rand.NewPCG(uint64(o.Seed), 0x5eed_c10d)), o: o, computeSvc: map[string]int{}, ctx: ctx,
		control: control, computes: computes}
	g.c = &Cloud{Options: o, Kinds: map[string][]int64{}, Flavors: flavors()}
	for i := 0; i < o.Cells; i++ {
		n := o.Nodes / o.Cells
		if i < o.Nodes%o.Cells {
			n++
		}
		g.c.Cells = append(g.c.Cells, g.cell(i, n))
		if err := ctx.Err(); err != nil {
			return nil, context.Cause(ctx)
		}
	}
	if o.BadRows > 0 {
		g.badRows(&g.c.Cells[0], o.BadRows)
	}
	for k := range g.c.Kinds {
		slices.Sort(g.c.Kinds[k])
	}
	g.c.Aggregates = aggregates(o.Seed, g.c.Cells)
	if shape.ComputeIDs {
		for i := range g.c.Cells {
			setComputeIDs(&g.c.Cells[i])
		}
	}
	return g.c, nil
}

// setComputeIDs gives each instance the id of the live compute node it is
// on and each migration its destination node's, as Nova 31's resource
// tracker writes them with instance.node and migration.dest_node
// (RowShapeOf). The nodes are found by host and hypervisor_hostname, as
// ComputeNode.get_by_host_and_nodename finds them.
func setComputeIDs(c *Cell) {
	type hostNode struct{ host, node string }
	ids := map[hostNode]int64{}
	for _, n := range c.ComputeNodes {
		if !n.IsDeleted() && n.Host != nil && n.HypervisorHostname != nil {
			ids[hostNode{*n.Host, *n.HypervisorHostname}] = n.ID
		}
	}
	for i := range c.Instances {
		in := &c.Instances[i]
		if in.Host == nil || in.Node == nil {
			continue
		}
		if id, ok := ids[hostNode{*in.Host, *in.Node}]; ok {
			in.ComputeID = ip(id)
		}
	}
	for i := range c.Migrations {
		m := &c.Migrations[i]
		if id, ok := ids[hostNode{m.DestCompute, m.DestNode}]; ok {
			m.DestComputeID = ip(id)
		}
	}
}

func (g *gen) uuid() string {
	var b [16]byte
	for i := 0; i < 16; i += 8 {
		v := g.rng.Uint64()
		for j := 0; j < 8; j++ {
			b[i+j] = byte(v >> (8 * j))
		}
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return uuid.UUID(b).String()
}

func (g *gen) kind(k string, id int64) { g.c.Kinds[k] = append(g.c.Kinds[k], id) }

func (g *gen) ago(min, max time.Duration) *time.Time {
	t := Snapshot.Add(-(min + time.Duration(g.rng.Int64N(int64(max-min)+1)))).Truncate(time.Second)
	return &t
}

func sp(s string) *string               { return &s }
func ip(v int64) *int64                 { return &v }
func fp(v float64) *float64             { return &v }
func sortInts(s []int) []int            { s = slices.Clone(s); slices.Sort(s); return s }
func pick[T any](r *rand.Rand, s []T) T { return s[r.IntN(len(s))] }

// node is a compute node being built, with what usage needs.
type node struct {
	cn      *nova.ComputeNode
	vcpus   int64
	mem     int64 // instance memory, without the host reservation
	disk    int64
	running int64
	projs   map[string]int
}

// reservedHostMemoryMB is Nova's default reserved_host_memory_mb, which the
// resource tracker counts in memory_mb_used.
const reservedHostMemoryMB = 512

func (g *gen) cell(idx, nodes int) Cell {
	c := Cell{Name: fmt.Sprintf("cell%d", idx+1), UUID: g.uuid()}
	// Control services: conductors in every cell; the API services and the
	// scheduler register in cell1, where their [database] points.
	ctl := func(host, binary string, topic *string) {
		g.ids.svc++
		c.Services = append(c.Services, nova.Service{ID: g.ids.svc, UUID: sp(g.uuid()), Host: sp(host), Binary: sp(binary), Topic: topic,
			ReportCount: 100000 + g.rng.Int64N(900000), CreatedAt: g.ago(400*24*time.Hour, 900*24*time.Hour),
			UpdatedAt: g.ago(0, 10*time.Second), LastSeenUp: g.ago(0, 10*time.Second), Version: g.control})
	}
	for i := 1; i <= 2; i++ {
		ctl(fmt.Sprintf("cond-%s-%d", c.Name, i), "nova-conductor", sp("conductor"))
	}
	if idx == 0 {
		for i := 1; i <= 3; i++ {
			host := fmt.Sprintf("ctl%d", i)
			ctl(host, "nova-scheduler", sp("scheduler"))
			ctl(host, "nova-osapi_compute", nil)
			ctl(host, "nova-metadata", nil)
		}
	}

	var built, all []*node
	deleted := 0
	if nodes >= 2 {
		deleted = max(1, nodes/20)
	}
	// Which row positions are soft-deleted, so that deleted rows sit among
	// live ones in id order as they do in an old deployment.
	isDeleted := map[int]bool{}
	for len(isDeleted) < deleted {
		isDeleted[g.rng.IntN(nodes+deleted)] = true
	}
	hostSeq := 0
	for pos := 0; pos < nodes+deleted; pos++ {
		if g.done() {
			return c
		}
		if !isDeleted[pos] {
			hostSeq++
			n := g.computeNode(&c, idx, g.hostName(idx, hostSeq), rowLive)
			built, all = append(built, n), append(all, n)
			continue
		}
		if g.rng.IntN(2) == 0 && pos < nodes+deleted-1 && !isDeleted[pos+1] {
			// Replaced hardware: the old row of the host whose live row
			// comes next; same host and hypervisor_hostname, which the
			// unique key allows because deleted differs.
			all = append(all, g.computeNode(&c, idx, g.hostName(idx, hostSeq+1), rowReplaced))
		} else {
			// Decommissioned host: its service was deleted too.
			all = append(all, g.computeNode(&c, idx, fmt.Sprintf("old-%s-%04d", c.Name, pos+1), rowDecommissioned))
		}
	}
	for _, n := range built {
		c.MappedHosts = append(c.MappedHosts, *n.cn.Host)
	}
	if g.ctx != nil && g.ctx.Err() != nil {
		return c
	}
	g.instances(&c, built)
	for _, n := range all {
		g.finishUsage(n)
		c.ComputeNodes = append(c.ComputeNodes, *n.cn)
	}
	return c
}

func (g *gen) hostName(cellIdx, seq int) string {
	// Globally unique: host_mappings.host is unique across cells.
	return fmt.Sprintf("cmp%d-%05d", cellIdx+1, seq)
}

var (
	coreChoices   = []int{8, 12, 16, 20, 24, 32}
	memPerSocket  = []int64{65536, 98304, 131072, 196608, 262144}
	diskChoices   = []int64{447, 893, 1788, 3576, 7152}
	hvVersions    = []int64{6002000, 6002000, 7000000, 4002000}
	cpuModels     = []string{"Cascadelake-Server-noTSX", "Icelake-Server", "EPYC-Rome", "Skylake-Server-IBRS"}
	extraCustomRC = []string{"CUSTOM_FPGA_ARRIA10", "CUSTOM_NVME_SLOT", "CUSTOM_GPU_TESLA_T4"}
)

// computeNode creates a compute node (and, for a new host, its nova-compute
// service). Deleted rows get deleted = id and deleted_at, as
// SoftDeleteMixin.soft_delete does.
// rowState is what kind of compute_nodes row computeNode makes.
type rowState int

const (
	rowLive           rowState = iota
	rowReplaced                // soft-deleted, its host lives on in a newer row
	rowDecommissioned          // soft-deleted with its service
	rowBad                     // live but malformed (--bad-rows)
)

func (g *gen) computeNode(c *Cell, cellIdx int, host string, st rowState) *node {
	deleted := st == rowReplaced || st == rowDecommissioned
	r := g.rng
	g.ids.node++
	id := g.ids.node
	var svc *nova.Service
	if i, ok := g.computeSvc[host]; ok {
		svc = &c.Services[i]
	}
	decommissioned := st == rowDecommissioned
	if svc == nil {
		g.ids.svc++
		s := nova.Service{ID: g.ids.svc, UUID: sp(g.uuid()), Host: sp(host), Binary: sp("nova-compute"), Topic: sp("compute"),
			ReportCount: 1000 + r.Int64N(2000000), CreatedAt: g.ago(200*24*time.Hour, 1500*24*time.Hour),
			UpdatedAt: g.ago(0, 20*time.Second), LastSeenUp: g.ago(0, 20*time.Second), Version: pick(r, g.computes)}
		if r.IntN(20) == 0 && !decommissioned {
			s.Disabled, s.DisabledReason = true, sp("maintenance: DIMM replacement")
		}
		if decommissioned {
			s.Deleted, s.DeletedAt = s.ID, g.ago(10*24*time.Hour, 100*24*time.Hour)
			s.UpdatedAt, s.LastSeenUp = s.DeletedAt, s.DeletedAt
		}
		c.Services = append(c.Services, s)
		svc = &c.Services[len(c.Services)-1]
		g.computeSvc[host] = len(c.Services) - 1
	}

	h := hardware{sockets: 2, cores: pick(r, coreChoices), threads: 2}
	if r.IntN(5) == 0 {
		h.sockets = 1
	}
	per := pick(r, memPerSocket)
	for s := 0; s < h.sockets; s++ {
		// libvirt reports a little less than the DIMMs: firmware and kernel.
		h.cellMemMB = append(h.cellMemMB, per-int64(200+r.IntN(600)))
	}
	h.dedicated = r.IntN(4) == 0

	var pciF, numaF, extraF, ratioK string
	if st == rowLive && g.live < len(NUMAFormats) {
		// The first nodes carry every format, whatever the seed.
		pciF, numaF = PCIFormats[g.live%len(PCIFormats)], NUMAFormats[g.live]
		extraF, ratioK = ExtraFormats[g.live%len(ExtraFormats)], RatioKinds[g.live%len(RatioKinds)]
	} else {
		pciF = pickWeighted(r, PCIFormats, []int{40, 25, 15, 10, 5, 5})
		numaF = pickWeighted(r, NUMAFormats, []int{45, 15, 10, 10, 5, 15})
		extraF = pickWeighted(r, ExtraFormats, []int{85, 10, 5})
		ratioK = pickWeighted(r, RatioKinds, []int{40, 20, 15, 10, 5, 10})
	}
	uuidSet := r.IntN(5) == 0
	if st == rowLive && g.live < 2 {
		uuidSet = g.live == 1
	}

	cpuInfo := map[string]any{
		"arch": "x86_64", "model": pick(r, cpuModels), "vendor": "Intel",
		"topology":    map[string]int{"cells": h.sockets, "sockets": 1, "cores": h.cores, "threads": h.threads},
		"features":    []string{"avx", "avx2", "fma", "pcid", "pdpe1gb", "sse4.2", "ssse3", "vmx"},
		"maxphysaddr": map[string]any{"mode": "emulate", "bits": 46},
	}
	hhn := host + ".example.org"
	cn := &nova.ComputeNode{
		ID: id, CreatedAt: g.ago(100*24*time.Hour, 1400*24*time.Hour), UpdatedAt: g.ago(0, 60*time.Second),
		ServiceID: ip(svc.ID), Host: sp(host), HypervisorHostname: sp(hhn),
		VCPUs: h.vcpus(), MemoryMB: h.memoryMB(), LocalGB: pick(r, diskChoices),
		HypervisorType: "QEMU", HypervisorVersion: pick(r, hvVersions), CPUInfo: *jsonString(cpuInfo),
		CurrentWorkload:    ip(0),
		HostIP:             sp(fmt.Sprintf("10.%d.%d.%d", cellIdx+1, (id/250)%256, id%250+1)),
		SupportedInstances: sp(`[["x86_64", "qemu", "hvm"], ["x86_64", "kvm", "hvm"], ["i686", "qemu", "hvm"], ["i686", "kvm", "hvm"]]`),
		Metrics:            sp("[]"),
		PCIStats:           pciStats(g.pools(h), pciF),
		NUMATopology: numaTopology(h, numaF, func(s [][]int) {
			r.Shuffle(len(s), func(i, j int) { s[i], s[j] = s[j], s[i] })
		}),
		Mapped: ip(0),
	}
	if uuidSet {
		cn.UUID = sp(g.uuid())
	}
	setRatios(cn, ratioK, r)
	switch extraF {
	case ExtraEmpty:
		cn.ExtraResources = sp("{}")
	case ExtraCustom:
		cn.ExtraResources = jsonString(map[string]int{pick(r, extraCustomRC): 1 + r.IntN(8)})
	}
	if deleted {
		cn.Deleted, cn.DeletedAt = id, g.ago(24*time.Hour, 300*24*time.Hour)
		cn.UpdatedAt = cn.DeletedAt
		if cn.CreatedAt.After(*cn.DeletedAt) {
			t := cn.DeletedAt.Add(-365 * 24 * time.Hour)
			cn.CreatedAt = &t
		}
	}
	prefix := ""
	switch st {
	case rowLive:
		g.live++
	case rowBad:
		prefix = "bad:"
	default:
		g.kind("deleted", id)
		prefix = "deleted:"
	}
	g.kind(prefix+"pci_stats="+pciF, id)
	g.kind(prefix+"numa_topology="+numaF, id)
	g.kind(prefix+"extra_resources="+extraF, id)
	g.kind(prefix+"ratios="+ratioK, id)
	if uuidSet {
		g.kind(prefix+"uuid=set", id)
	} else {
		g.kind(prefix+"uuid=null", id)
	}
	return &node{cn: cn, projs: map[string]int{}}
}

// pools gives a host SR-IOV VFs, GPUs, both or none, on its NUMA cells.
func (g *gen) pools(h hardware) []pciPool {
	r := g.rng
	n0, n1 := 0, h.sockets-1
	vf := pciPool{vendor: "8086", product: "1515", numaNode: &n0, count: 8 * (1 + r.IntN(8)),
		tags: map[string]string{"dev_type": "type-VF", "physical_network": "physnet1", "remote_managed": "false"}}
	gpu := pciPool{vendor: "10de", product: "1db6", numaNode: &n1, count: 1 + r.IntN(4), tags: map[string]string{"dev_type": "type-PCI"}}
	switch r.IntN(3) {
	case 0:
		return []pciPool{vf}
	case 1:
		return []pciPool{gpu}
	}
	return []pciPool{vf, gpu}
}

func setRatios(cn *nova.ComputeNode, kind string, r *rand.Rand) {
	switch kind {
	case RatiosDefaults:
		cn.RAMAllocationRatio, cn.CPUAllocationRatio, cn.DiskAllocationRatio = fp(1.5), fp(16.0), fp(1.0)
	case RatiosCustom:
		c := pick(r, [][3]float64{{1.0, 4.0, 1.0}, {1.2, 2.0, 1.0}, {1.0, 8.0, 1.5}})
		cn.RAMAllocationRatio, cn.CPUAllocationRatio, cn.DiskAllocationRatio = fp(c[0]), fp(c[1]), fp(c[2])
	case RatiosZero:
		cn.RAMAllocationRatio, cn.CPUAllocationRatio, cn.DiskAllocationRatio = fp(0), fp(0), fp(0)
	case RatiosNull:
	case RatiosMixed:
		cn.CPUAllocationRatio, cn.DiskAllocationRatio = fp(16.0), fp(1.0)
	case RatiosMixedZero:
		cn.RAMAllocationRatio, cn.DiskAllocationRatio = fp(1.5), fp(0)
	}
}

func pickWeighted(r *rand.Rand, items []string, weights []int) string {
	total := 0
	for _, w := range weights {
		total += w
	}
	x := r.IntN(total)
	for i, w := range weights {
		if x < w {
			return items[i]
		}
		x -= w
	}
	return items[len(items)-1]
}

func flavors() []nova.Flavor {
	created := Snapshot.Add(-1000 * 24 * time.Hour)
	mk := func(id int64, name string, vcpus, mem, root, eph int64, specs map[string]string) nova.Flavor {
		return nova.Flavor{ID: id, FlavorID: fmt.Sprint(id), Name: name, VCPUs: vcpus, MemoryMB: mem, RootGB: root, EphemeralGB: eph,
			RxtxFactor: 1.0, VCPUWeight: ip(0), IsPublic: true, ExtraSpecs: specs, CreatedAt: &created}
	}
	return []nova.Flavor{
		mk(1, "m1.tiny", 1, 512, 1, 0, map[string]string{}),
		mk(2, "m1.small", 1, 2048, 20, 0, map[string]string{}),
		mk(3, "m1.medium", 2, 4096, 40, 0, map[string]string{"hw:cpu_policy": "shared"}),
		mk(4, "m1.large", 4, 8192, 80, 0, map[string]string{"hw_rng:allowed": "True", "quota:disk_read_iops_sec": "2000"}),
		mk(5, "m1.xlarge", 8, 16384, 160, 0, map[string]string{}),
		mk(6, "r1.large", 4, 32768, 40, 40, map[string]string{"hw:mem_page_size": "any"}),
		// Flavors no sample instance uses (instanceFlavors): what capacity
		// and candidates --flavor are asked about.
		mk(7, "c1.pinned", 4, 8192, 40, 0, map[string]string{"hw:cpu_policy": "dedicated", "hw:cpu_thread_policy": "prefer", "hw:emulator_threads_policy": "isolate"}),
		mk(8, "m1.xxlarge", 16, 65536, 320, 0, map[string]string{}),
		mk(9, "g1.vgpu", 8, 16384, 80, 0, map[string]string{"resources1:VGPU": "1", "trait1:CUSTOM_GPU_A100": "required", "group_policy": "isolate"}),
		mk(10, "s1.swap", 2, 4096, 20, 10, map[string]string{"trait:COMPUTE_NODE": "required", "quota:cpu_shares": "1024"}),
		func() nova.Flavor {
			f := mk(11, "ci.private", 2, 4096, 20, 0, map[string]string{"hw:mem_encryption": "false"})
			f.IsPublic = false
			f.Swap = 2048
			return f
		}(),
	}
}

// instanceFlavors is how many of flavors() sample instances are drawn
// from; later ones exist only in the API database.
const instanceFlavors = 6

// flavorPrimitive is a Flavor as instance_extra.flavor stores it.
func flavorPrimitive(f nova.Flavor) map[string]any {
	return map[string]any{
		"nova_object.name": "Flavor", "nova_object.namespace": "nova", "nova_object.version": "1.2",
		"nova_object.data": map[string]any{
			"id": f.ID, "name": f.Name, "memory_mb": f.MemoryMB, "vcpus": f.VCPUs, "root_gb": f.RootGB,
			"ephemeral_gb": f.EphemeralGB, "flavorid": f.FlavorID, "swap": f.Swap, "rxtx_factor": f.RxtxFactor,
			"vcpu_weight": f.VCPUWeight, "disabled": f.Disabled, "is_public": f.IsPublic, "extra_specs": f.ExtraSpecs,
			"description": f.Description, "created_at": f.CreatedAt.UTC().Format("2006-01-02T15:04:05Z"),
			"updated_at": nil, "deleted_at": nil, "deleted": false,
		},
		"nova_object.changes": []string{"created_at", "deleted", "deleted_at", "description", "disabled", "ephemeral_gb",
			"extra_specs", "flavorid", "id", "is_public", "memory_mb", "name", "root_gb", "rxtx_factor", "swap",
			"updated_at", "vcpu_weight", "vcpus"},
	}
}

func flavorJSON(cur, old, new *nova.Flavor) *string {
	v := map[string]any{"cur": flavorPrimitive(*cur), "old": nil, "new": nil}
	if old != nil {
		v["old"] = flavorPrimitive(*old)
	}
	if new != nil {
		v["new"] = flavorPrimitive(*new)
	}
	b, _ := json.Marshal(v)
	s := string(b)
	return &s
}

func fits(n *node, f nova.Flavor) bool {
	return n.vcpus+f.VCPUs <= n.cn.VCPUs && n.mem+f.MemoryMB+reservedHostMemoryMB <= n.cn.MemoryMB &&
		n.disk+f.RootGB+f.EphemeralGB <= n.cn.LocalGB
}

func (n *node) consume(f nova.Flavor) {
	n.vcpus += f.VCPUs
	n.mem += f.MemoryMB
	n.disk += f.RootGB + f.EphemeralGB
}

var projects = []string{"8c2e5d1f4b7a4f0e9d3c6b2a1e0f9d8c", "3f9a7c1e2b4d4e6f8a0b1c2d3e4f5a6b", "a1b2c3d4e5f60718293a4b5c6d7e8f90"}

// instances places instances within each node's raw capacity (no
// overcommit, so any ratio ≥ 1 a migration picks keeps usage valid), then
// turns a few into in-progress live migrations and resizes, whose usage the
// resource tracker counts on both source and destination.
func (g *gen) instances(c *Cell, nodes []*node) {
	r := g.rng
	fl := g.c.Flavors[:instanceFlavors]
	// An unmoved instance's instance_extra.flavor depends on its flavor only.
	curFlavor := make([]*string, len(fl))
	for i := range fl {
		curFlavor[i] = flavorJSON(&fl[i], nil, nil)
	}
	var placed []int // indexes into c.Instances
	owner := map[int]*node{}
	for _, n := range nodes {
		if g.done() {
			return
		}
		k := 0
		if g.o.MaxInstancesPerNode > 0 {
			k = r.IntN(g.o.MaxInstancesPerNode + 1)
		}
		for i := 0; i < k; i++ {
			fi := r.IntN(len(fl))
			f := fl[fi]
			if !fits(n, f) {
				continue
			}
			n.consume(f)
			n.running++
			g.ids.inst++
			proj := pick(r, projects)
			n.projs[proj]++
			in := nova.Instance{ID: g.ids.inst, UUID: g.uuid(), CreatedAt: g.ago(24*time.Hour, 600*24*time.Hour),
				UpdatedAt: g.ago(0, 24*time.Hour), UserID: "5e1c0f7d2a8b4c3d9e6f0a1b2c3d4e5f", ProjectID: proj,
				ImageRef: "0b6fe5e0-1d2c-4f4f-9a9e-6a2f3b8e9d11", Host: n.cn.Host, Node: n.cn.HypervisorHostname,
				LaunchedOn: n.cn.Host, AvailabilityZone: sp("nova"), VMState: "active", PowerState: 1,
				InstanceTypeID: f.ID, MemoryMB: f.MemoryMB, VCPUs: f.VCPUs, RootGB: f.RootGB, EphemeralGB: f.EphemeralGB,
				Flavor: curFlavor[fi], PCIRequests: sp("[]")}
			in.Hostname = fmt.Sprintf("vm-%d", in.ID)
			in.DisplayName = in.Hostname
			in.LaunchedAt = in.CreatedAt
			if r.IntN(10) == 0 {
				in.VMState, in.PowerState = "stopped", 4
			}
			c.Instances = append(c.Instances, in)
			placed = append(placed, len(c.Instances)-1)
			owner[len(c.Instances)-1] = n
		}
	}
	if len(nodes) < 2 || len(placed) == 0 {
		return
	}
	want := max(1, len(placed)/30)
	for tries := 0; len(c.Migrations) < want && tries < 4*want; tries++ {
		ii := placed[r.IntN(len(placed))]
		in := &c.Instances[ii]
		if in.TaskState != nil || in.VMState != "active" {
			continue
		}
		src := owner[ii]
		dst := nodes[r.IntN(len(nodes))]
		if dst == src {
			continue
		}
		old := fl[in.InstanceTypeID-1]
		resize := r.IntN(2) == 0 && int(in.InstanceTypeID) < len(fl)
		nf := old
		if resize {
			nf = fl[in.InstanceTypeID]
		}
		if !fits(dst, nf) {
			continue
		}
		dst.consume(nf)
		g.ids.mig++
		m := nova.Migration{ID: g.ids.mig, UUID: g.uuid(), CreatedAt: g.ago(time.Minute, time.Hour), UpdatedAt: g.ago(0, time.Minute),
			SourceCompute: *src.cn.Host, DestCompute: *dst.cn.Host, DestHost: dst.cn.HostIP,
			SourceNode: *src.cn.HypervisorHostname, DestNode: *dst.cn.HypervisorHostname, InstanceUUID: in.UUID,
			OldInstanceTypeID: old.ID, NewInstanceTypeID: nf.ID, UserID: sp(in.UserID), ProjectID: sp(in.ProjectID)}
		if resize {
			// finish_resize done, waiting for the user to confirm: the
			// instance already runs on the destination with the new flavor.
			m.MigrationType, m.Status = "resize", "finished"
			in.VMState, in.Host, in.Node = "resized", dst.cn.Host, dst.cn.HypervisorHostname
			in.InstanceTypeID, in.MemoryMB, in.VCPUs, in.RootGB, in.EphemeralGB = nf.ID, nf.MemoryMB, nf.VCPUs, nf.RootGB, nf.EphemeralGB
			in.Flavor = flavorJSON(&nf, &old, &nf)
			src.running--
			dst.running++
		} else {
			m.MigrationType, m.Status = "live-migration", "running"
			in.TaskState = sp("migrating")
		}
		c.Migrations = append(c.Migrations, m)
		g.kind("migration:"+m.MigrationType, src.cn.ID)
	}
}

// finishUsage fills the columns the resource tracker derives from usage.
func (g *gen) finishUsage(n *node) {
	cn := n.cn
	cn.VCPUsUsed, cn.MemoryMBUsed, cn.LocalGBUsed = n.vcpus, n.mem+reservedHostMemoryMB, n.disk
	cn.FreeRAMMB, cn.FreeDiskGB = ip(cn.MemoryMB-cn.MemoryMBUsed), ip(cn.LocalGB-cn.LocalGBUsed)
	cn.RunningVMs = ip(n.running)
	if g.rng.IntN(10) != 0 {
		cn.DiskAvailableLeast = ip(*cn.FreeDiskGB - g.rng.Int64N(*cn.FreeDiskGB/4+1))
	}
	stats := map[string]string{"failed_builds": "0", "io_workload": "0", "num_instances": fmt.Sprint(n.running),
		"num_os_type_None": fmt.Sprint(n.running), "num_task_None": fmt.Sprint(n.running), "num_vm_active": fmt.Sprint(n.running)}
	for p, k := range n.projs {
		stats["num_proj_"+p] = fmt.Sprint(k)
	}
	cn.Stats = jsonString(stats)
}

// badRows appends malformed live rows, each with its own nova-compute
// service, for tests of the migration's and checks' error paths.
func (g *gen) badRows(c *Cell, count int) {
	for i := 0; i < count; i++ {
		kind := BadKinds[i%len(BadKinds)]
		host := fmt.Sprintf("bad-%04d", i+1)
		if kind == "odd-hostname" {
			host = fmt.Sprintf("bad host;%d'\"é/", i+1)
		}
		n := g.computeNode(c, 0, host, rowBad)
		g.finishUsage(n)
		cn := n.cn
		switch kind {
		case "unparsable-pci-stats":
			cn.PCIStats = sp(`{"nova_object.name": "PciDevicePoolList", "nova_object.data": {"objects": [`)
		case "unparsable-numa-topology":
			cn.NUMATopology = sp(`{"nova_object.name": "NUMATopology", "nova_object.data": {"cells": [{"id": 0, "cpuset": [0, 1`)
		case "negative-totals":
			cn.VCPUs, cn.MemoryMB, cn.LocalGB = -16, -65536, -1
		case "unknown-numa-format":
			cn.NUMATopology = sp(`{"sockets": [{"socket_id": 0, "cores": 8, "memory_kb": 67108864}]}`)
		case "unknown-pci-format":
			cn.PCIStats = sp(`42`)
		case "usage-over-capacity":
			cn.VCPUsUsed, cn.MemoryMBUsed, cn.LocalGBUsed = cn.VCPUs*40, cn.MemoryMB*3, cn.LocalGB*5
			cn.FreeRAMMB, cn.FreeDiskGB = ip(cn.MemoryMB-cn.MemoryMBUsed), ip(cn.LocalGB-cn.LocalGBUsed)
		case "invalid-extra-resources":
			cn.ExtraResources = sp(`{"not a class!": "lots", "CUSTOM_OK": -3}`)
		case "negative-ratio":
			cn.CPUAllocationRatio = fp(-1.0)
		}
		c.ComputeNodes = append(c.ComputeNodes, *cn)
		c.MappedHosts = append(c.MappedHosts, host)
		g.kind("bad="+kind, cn.ID)
		g.kind("bad", cn.ID)
	}
}
