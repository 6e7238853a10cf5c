package migrate

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/rpctl/rpctl/internal/nova"
	"github.com/rpctl/rpctl/internal/sanitize"
	"github.com/rpctl/rpctl/internal/standards"
)

// InventoryName is the migration's key in the summary table, named like
// the functions nova-manage lists next to it (migrate_empty_ratio).
const InventoryName = "migrate_compute_node_inventory"

// PlannedNode is what the migration does with one compute node (or one
// sharing provider, which has no NodeID).
type PlannedNode struct {
	Cell    string           `json:"cell,omitempty"`
	NodeID  int64            `json:"compute_node_id,omitempty"`
	Host    string           `json:"hypervisor_hostname"`
	UUID    string           `json:"uuid"`
	Changes []ProviderChange `json:"providers"`
	Error   string           `json:"error,omitempty"`
	// Field and Value name the (first) column that makes the row bad;
	// BadColumns are all of them, in the order Error gives them.
	Field      string   `json:"field,omitempty"`
	Value      string   `json:"value,omitempty"`
	BadColumns []string `json:"bad_columns,omitempty"`
	// Owner is the virt driver capability trait on the node's root
	// provider that shows a nova-compute owns it (owned.go); "" when none.
	Owner string `json:"owned_by_nova_compute,omitempty"`
	// LeftAlone: the node is owned and the plan differs from what
	// Placement holds, but without --force nothing is written; Changes
	// are what a forced run would write, LeftReason why a plan could not
	// even be made.
	LeftAlone  bool   `json:"left_alone,omitempty"`
	LeftReason string `json:"left_alone_reason,omitempty"`

	cell Cell
	// computeHost is compute_nodes.host (SkipLog's key: aggregates name
	// hosts, not hypervisor hostnames).
	computeHost string
	plan        *NodePlan
	write       *NodeWrite
	err         error
	// needsUUID: the row's uuid is NULL; one is generated and stored in the
	// cell database before anything is written to Placement.
	needsUUID bool
}

// RowError is the node's skip reason as the run reports it; nil when the
// node is not bad.
func (pn *PlannedNode) RowError() *RowError {
	if pn.err == nil {
		return nil
	}
	return pn.rowError(pn.err)
}

// fail marks the node bad.
func (pn *PlannedNode) fail(err error) {
	pn.err, pn.Error = err, err.Error()
	var fe *FieldError
	if errors.As(err, &fe) {
		pn.Field, pn.Value = fe.Field, fe.Value
		pn.BadColumns = []string{fe.Field}
	}
	var many FieldErrors
	if errors.As(err, &many) {
		pn.BadColumns = many.Columns()
	}
}

func (pn *PlannedNode) rowError(err error) *RowError {
	return &RowError{Migration: InventoryName, Cell: pn.Cell, ID: pn.NodeID, Host: pn.Host, Err: err, Unfit: errors.Is(err, ErrLayoutSwitch)}
}

// InventoryPlan is the whole run: the sharing providers first, then every
// compute node that needs a change or is bad.
type InventoryPlan struct {
	Shared    []*PlannedNode `json:"shared_providers"`
	Nodes     []*PlannedNode `json:"compute_nodes"`
	Unchanged int            `json:"unchanged"`
	// UnusedHostConfigs are the hosts of InventoryConfig.Hosts that have
	// no live compute node in the cells planned.
	UnusedHostConfigs []string `json:"unused_host_configs,omitempty"`
	// CappedReserved are the reserved_host_* options above some nodes'
	// totals (CappedReserved.Warnings).
	CappedReserved CappedReserved `json:"capped_reserved,omitempty"`
	// LeftAlone are the nodes a nova-compute owns whose plan differs from
	// Placement: nothing is written to them without --force.
	LeftAlone []*PlannedNode `json:"left_alone"`

	classes, traits, aggregates []string
}

// PlanInventory reads every live compute node of the cells and the
// Placement state, and works out what the migration would write. It writes
// nothing.
func PlanInventory(ctx context.Context, cells []Cell, placement Placement, cfg *InventoryConfig) (*InventoryPlan, error) {
	st, err := placement.LoadPlacementState(ctx)
	if err != nil {
		return nil, err
	}
	s := newPlanStream(cfg, st)
	s.run(ctx, cells)
	if _, _, err := s.wait(ctx, -1); err != nil {
		return nil, err
	}
	return s.finish()
}

// planStream is a plan in the making: the nodes come out in row order (by
// cell, then id) while later rows are still read and parsed, so that the
// migration writes its first groups while the rest is planned (planning
// 100,000 nodes took a third of the run when it came first). Whatever a
// node's plan depends on is known when it comes out: the Placement state
// was read before, and a duplicate name or uuid only loses to an earlier
// node. Only the sharing providers need every node (their DISK_GB is the
// largest member's): finish builds them once the stream is complete.
type planStream struct {
	cfg *InventoryConfig
	st  *PlacementState
	// names and uuids own each provider name and uuid for markDuplicates;
	// only the goroutine that adds nodes touches them.
	names, uuids map[string]*PlannedNode

	mu        sync.Mutex
	changed   chan struct{} // closed and replaced whenever nodes come out or the stream ends
	nodes     []*PlannedNode
	plans     []*NodePlan
	unchanged int
	leftAlone []*PlannedNode
	// The names every plan so far uses; Inventory creates the new ones
	// before it writes a batch.
	classes, traits, aggregates map[string]bool
	// hosts are the hosts of InventoryConfig.Hosts that have a live
	// compute node; only the goroutine reading the rows touches it
	// until the stream is complete.
	hosts    map[string]bool
	capped   CappedReserved
	complete bool
	err      error
}

func newPlanStream(cfg *InventoryConfig, st *PlacementState) *planStream {
	return &planStream{
		cfg: cfg, st: st,
		names: map[string]*PlannedNode{}, uuids: map[string]*PlannedNode{},
		changed: make(chan struct{}),
		classes: map[string]bool{}, traits: map[string]bool{}, aggregates: map[string]bool{},
		hosts: map[string]bool{}, capped: CappedReserved{},
	}
}

// run plans the cells one after the other and ends the stream.
func (s *planStream) run(ctx context.Context, cells []Cell) {
	var err error
	for _, cell := range cells {
		if err = planCell(ctx, cell, s.cfg, s.st, s.add, s.hosts); err != nil {
			break
		}
	}
	s.mu.Lock()
	s.complete, s.err = true, err
	close(s.changed)
	s.mu.Unlock()
}

// note records the names a provider needs.
func (s *planStream) note(d DesiredProvider) {
	for rc := range d.Inventories {
		if !standards.IsResourceClass(rc) {
			s.classes[rc] = true
		}
	}
	for _, t := range d.Traits {
		s.traits[t] = true
	}
	for _, a := range d.Aggregates {
		s.aggregates[a] = true
	}
}

// add takes the next nodes in row order. A node with a plan but a Diff
// error keeps both: its providers still count for the shared pools and the
// names to create.
func (s *planStream) add(pns []*PlannedNode) {
	markDuplicates(pns, s.names, s.uuids)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, pn := range pns {
		if pn.plan == nil {
			s.nodes = append(s.nodes, pn)
			continue
		}
		s.plans = append(s.plans, pn.plan)
		s.capped.add(pn.plan)
		for _, d := range pn.plan.Providers {
			s.note(d)
		}
		switch {
		case pn.LeftAlone:
			s.leftAlone = append(s.leftAlone, pn)
		case pn.err != nil:
			s.nodes = append(s.nodes, pn)
		case pn.write == nil && !pn.needsUUID:
			s.unchanged++
		default:
			s.nodes = append(s.nodes, pn)
		}
	}
	close(s.changed)
	s.changed = make(chan struct{})
}

// wait returns the nodes planned so far once there are at least n of them
// (n < 0: all of them) or the stream is complete, and whether it is.
func (s *planStream) wait(ctx context.Context, n int) ([]*PlannedNode, bool, error) {
	for {
		s.mu.Lock()
		nodes, complete, err, ch := s.nodes, s.complete, s.err, s.changed
		s.mu.Unlock()
		if err != nil {
			return nil, true, err
		}
		if complete || (n >= 0 && len(nodes) >= n) {
			return nodes, complete, nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, false, context.Cause(ctx)
		}
	}
}

// missingNames are the names the plans so far use that ids lacks.
func (s *planStream) missingNames(ids *PlacementIDs) (classes, traits, aggregates []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	miss := func(set map[string]bool, have map[string]int64) []string {
		var out []string
		for _, n := range sortedKeys(set) {
			if _, ok := have[n]; !ok {
				out = append(out, n)
			}
		}
		return out
	}
	if ids == nil {
		ids = &PlacementIDs{}
	}
	return miss(s.classes, ids.Classes), miss(s.traits, ids.Traits), miss(s.aggregates, ids.Aggregates)
}

// cappedWarnings are CappedReserved's warnings of a complete stream.
func (s *planStream) cappedWarnings() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.capped.Warnings()
}

// finish is the whole plan of a complete stream: the sharing providers
// first, then the nodes.
func (s *planStream) finish() (*InventoryPlan, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := &InventoryPlan{Shared: []*PlannedNode{}, Nodes: s.nodes, Unchanged: s.unchanged, UnusedHostConfigs: s.cfg.UnusedHosts(s.hosts), CappedReserved: s.capped, LeftAlone: s.leftAlone}
	if out.Nodes == nil {
		out.Nodes = []*PlannedNode{}
	}
	if out.LeftAlone == nil {
		out.LeftAlone = []*PlannedNode{}
	}
	for _, d := range s.cfg.SharedPlans(s.plans) {
		s.note(d)
		pn := &PlannedNode{Host: d.Name, UUID: d.UUID}
		w, ch, err := s.cfg.Diff([]DesiredProvider{d}, s.st)
		if err != nil {
			return nil, fmt.Errorf("shared storage provider %s: %w", d.Name, err)
		}
		if w == nil {
			continue
		}
		pn.write, pn.Changes = w, ch
		out.Shared = append(out.Shared, pn)
	}
	out.classes, out.traits, out.aggregates = sortedKeys(s.classes), sortedKeys(s.traits), sortedKeys(s.aggregates)
	return out, nil
}

// markDuplicates makes bad rows of the nodes whose provider name or uuid
// an earlier node (by cell, then id) already claims: Placement's names and
// uuids are unique, so only the first can have it, and without this the
// batch that held both would fail at the database instead of in the plan.
// names and uuids hold the owners seen so far; pns come in row order.
func markDuplicates(pns []*PlannedNode, names, uuids map[string]*PlannedNode) {
	for _, pn := range pns {
		if pn.plan == nil || pn.err != nil {
			continue
		}
		var dup error
		for _, d := range pn.plan.Providers {
			if o, ok := names[d.Name]; ok && o != pn {
				dup = badField("hypervisor_hostname", quoteValue(&pn.Host), "the resource provider name %s is already %s's (Placement names are unique)", strconv.Quote(shorten(d.Name)), o.describe())
				break
			}
			if o, ok := uuids[d.UUID]; ok && d.UUID != "" && o != pn {
				dup = badField("uuid", quoteValue(&pn.UUID), "the resource provider uuid %s is already %s's", d.UUID, o.describe())
				break
			}
		}
		if dup != nil {
			pn.fail(dup)
			pn.write, pn.Changes = nil, nil
			continue
		}
		for _, d := range pn.plan.Providers {
			names[d.Name] = pn
			if d.UUID != "" {
				uuids[d.UUID] = pn
			}
		}
	}
}

// describe names a compute node in another node's message.
func (pn *PlannedNode) describe() string {
	return fmt.Sprintf("compute node id=%d in cell %s", pn.NodeID, pn.Cell)
}

// planCell reads a cell's live nodes and plans and diffs them on every CPU
// while the rows still arrive: parsing 100,000 nodes' NUMA and PCI blobs is
// most of the planning time. emit gets the planned nodes in row order, a
// chunk at a time, from one goroutine.
// seen gets the hosts of cfg.Hosts that have a row.
func planCell(ctx context.Context, cell Cell, cfg *InventoryConfig, st *PlacementState, emit func([]*PlannedNode), seen map[string]bool) error {
	const chunk = 256
	facts, err := readCellFacts(ctx, cell, cfg)
	if err != nil {
		return err
	}
	type part struct {
		seq   int
		nodes []nova.ComputeNode
		out   []*PlannedNode
	}
	in := make(chan *part, 4)
	done := make(chan *part, 4)
	var wg sync.WaitGroup
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range in {
				p.out = make([]*PlannedNode, len(p.nodes))
				for i, n := range p.nodes {
					p.out[i] = planOne(cell, facts.row(n), cfg, st)
				}
				p.nodes = nil
				done <- p
			}
		}()
	}
	collected := make(chan struct{})
	go func() {
		// The workers finish chunks out of order; they come out in order.
		early := map[int]*part{}
		next := 0
		for p := range done {
			early[p.seq] = p
			for q, ok := early[next]; ok; q, ok = early[next] {
				delete(early, next)
				emit(q.out)
				next++
			}
		}
		close(collected)
	}()
	cur := &part{}
	err = cell.ScanNodesForInventory(ctx, func(n nova.ComputeNode) {
		if n.Host != nil && len(cfg.Hosts) > 0 {
			if _, ok := cfg.Hosts[*n.Host]; ok {
				seen[*n.Host] = true
			}
		}
		cur.nodes = append(cur.nodes, n)
		if len(cur.nodes) == chunk {
			in <- cur
			cur = &part{seq: cur.seq + 1}
		}
	})
	if len(cur.nodes) > 0 {
		in <- cur
	}
	close(in)
	wg.Wait()
	close(done)
	<-collected
	return err
}

// cellFacts are what a cell says beside its compute_nodes rows, read once
// before the rows are planned.
type cellFacts struct {
	disabled map[string]bool // hosts of disabled nova-compute services
	// pci are the nodes' PCI devices, read only when they are reported.
	pci map[int64][]nova.PCIDevice
}

func readCellFacts(ctx context.Context, cell NodeSource, cfg *InventoryConfig) (*cellFacts, error) {
	f := &cellFacts{}
	var err error
	if f.disabled, err = cell.DisabledComputeHosts(ctx); err != nil {
		return nil, err
	}
	if cfg.reportsPCI() {
		if f.pci, err = cell.PCIDevices(ctx); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// row is a compute node row with its facts.
func (f *cellFacts) row(n nova.ComputeNode) NodeRow {
	return NodeRow{Node: n, ServiceDisabled: n.Host != nil && f.disabled[*n.Host], PCIDevices: f.pci[n.ID]}
}

// ScanNodeRows calls fn, in id order, with every live compute node of the
// cell and what the cell says beside it, read as the inventory migration
// reads them before it plans each with cfg.PlanRow (the disabled services;
// the PCI devices only when cfg, or a host's config, reports them): how
// `rpctl status` plans the same rows.
func ScanNodeRows(ctx context.Context, cell NodeSource, cfg *InventoryConfig, fn func(NodeRow)) error {
	facts, err := readCellFacts(ctx, cell, cfg)
	if err != nil {
		return err
	}
	return cell.ScanNodesForInventory(ctx, func(n nova.ComputeNode) { fn(facts.row(n)) })
}

func planOne(cell Cell, r NodeRow, cfg *InventoryConfig, st *PlacementState) *PlannedNode {
	n := r.Node
	pn := &PlannedNode{Cell: cell.Name(), NodeID: n.ID, cell: cell}
	if n.HypervisorHostname != nil {
		pn.Host = *n.HypervisorHostname
	}
	if n.Host != nil {
		pn.computeHost = *n.Host
	}
	p, err := cfg.PlanRow(cell.Name(), r)
	if err != nil {
		pn.fail(err)
		return pn
	}
	// The plan keeps the row for Bind and the shared pools; the blobs are
	// parsed and need not stay in memory.
	p.Node.NUMATopology, p.Node.PCIStats, p.Node.ExtraResources = nil, nil, nil
	pn.plan = p
	pn.needsUUID = n.UUID == nil
	if !pn.needsUUID {
		pn.UUID = *n.UUID
	}
	if err := cfg.diffNode(pn, st); err != nil {
		pn.fail(err)
	}
	return pn
}

// diffNode diffs the node's plan with st. A node whose root provider a
// nova-compute owns (owned.go) is left alone unless OverwriteOwned: its
// write is dropped, and a plan that cannot be made there (an inventory of
// nova-compute's in use, a layout switch) is no bad row but the reason it
// is left alone.
func (c *InventoryConfig) diffNode(pn *PlannedNode, st *PlacementState) error {
	pn.Owner = nodeOwner(pn.plan.Providers, st)
	pn.LeftAlone, pn.LeftReason = false, ""
	w, ch, err := c.Diff(pn.plan.Providers, st)
	pn.write, pn.Changes = w, ch
	if pn.Owner == "" || c.OverwriteOwned {
		return err
	}
	if err != nil {
		pn.LeftAlone, pn.LeftReason = true, err.Error()
	} else if w != nil {
		pn.LeftAlone = true
	}
	pn.write = nil
	return nil
}

// LeftAloneNote is what the run says of a node it left alone.
func (pn *PlannedNode) LeftAloneNote() string {
	why := "differs from the plan: " + DescribeChanges(pn.Changes)
	if pn.LeftReason != "" {
		why = "the plan cannot be made there: " + pn.LeftReason
	}
	return pn.rowError(fmt.Errorf("owned by nova-compute (%s on its provider): left alone; it %s (--force overwrites)", pn.Owner, why)).Error()
}

// forcedNote is what a forced run says of an owned node before it writes.
func (pn *PlannedNode) forcedNote() string {
	return pn.rowError(fmt.Errorf("owned by nova-compute (%s on its provider): overwriting (--force): %s", pn.Owner, DescribeChanges(pn.Changes))).Error()
}

// DefaultParallel is --parallel's default: two Placement writers keep a
// small server busy while one waits on a round trip; four measured no
// better on two cores.
const DefaultParallel = 2

// Inventory is the compute-node inventory migration. Its first Run starts
// planning, which goes on while the batches are written, and every Run
// hands out the next pending nodes, so that 100,000 nodes are read once
// rather than once per batch of 50.
type Inventory struct {
	Cells     []Cell
	Placement Placement
	Config    InventoryConfig
	// Parallel workers write groups of GroupSize nodes; every node is a
	// transaction of its own (a failing node neither undoes nor blocks the
	// others), and a store may send a group's transactions together.
	Parallel  int
	GroupSize int
	// Progress, when set, is told after every group how many of the
	// pending nodes are done, and of how many: total is -1 while the rows
	// are still being planned.
	Progress func(done, total int)
	// SwitchProgress, when set, is told after every group holding nodes
	// that switch layout (switchesLayout) how many of those are done, and
	// of how many (-1 while the rows are still being planned): the layout
	// switch phase's progress (issue 35).
	SwitchProgress func(done, total int)
	// AfterRun, when set, is called at the end of every Run (to clear a
	// progress bar before the runner prints).
	AfterRun func()
	// Warn, when set, is told once the plan is complete about the host
	// configs (Config.Hosts) of hosts with no live compute node.
	Warn   func(msg string)
	warned bool
	// NewUUID generates compute node uuids (tests make it deterministic).
	NewUUID func() string
	// Skipped, when set, records every row skipped as bad, for the later
	// steps of the same run (SkipLog).
	Skipped *SkipLog
	// Notice, when set, gets one line per node a nova-compute owns: left
	// alone (said at the end of the Run that reached it), or, with --force,
	// what will be overwritten (said before it is written).
	Notice func(string)

	stream   *planStream
	startErr error
	// stopPlan ends the planning; planEnded is closed when it has.
	stopPlan  context.CancelFunc
	planEnded chan struct{}
	// nodes are the pending nodes planned so far; complete once the
	// stream is.
	nodes    []*PlannedNode
	complete bool
	// pools are the sharing providers of rpctl's pools, configured or
	// found (layout_switch.go); oldPools says whether Placement held one
	// that no configured pool names, which retirePools may have to empty.
	pools    []string
	oldPools bool
	ids      *PlacementIDs
	cellMu   sync.Mutex
	retired  bool
	next     int
	finished int
	// switchDone are the nodes written that switch layout, switchTook
	// the share of the writing time theirs, switchTotal all of them in
	// the complete plan (once counted).
	switchDone    int
	switchTook    time.Duration
	switchTotal   int
	switchCounted bool
	// elsewhere counts nodes found migrated by another writer.
	elsewhere int
	// told is how many of the stream's left-alone nodes were noticed;
	// leftLate are nodes found owned only when their write was retried.
	told     int
	leftLate []*PlannedNode
	lateMu   sync.Mutex
}

// LeftAlone is every node the run left alone because a nova-compute owns
// it, so far.
func (m *Inventory) LeftAlone() []*PlannedNode {
	var out []*PlannedNode
	if m.stream != nil {
		m.stream.mu.Lock()
		out = append(out, m.stream.leftAlone...)
		m.stream.mu.Unlock()
	}
	m.lateMu.Lock()
	out = append(out, m.leftLate...)
	m.lateMu.Unlock()
	return out
}

// tellLeftAlone notices the left-alone nodes not noticed yet.
func (m *Inventory) tellLeftAlone() {
	if m.stream == nil {
		return
	}
	all := m.LeftAlone()
	for _, pn := range all[min(m.told, len(all)):] {
		if m.Notice != nil {
			m.Notice(pn.LeftAloneNote())
		}
	}
	m.told = len(all)
}

// DoneElsewhere implements SharedWork: the nodes Run reported done because
// another writer (another run, on Galera possibly through another node)
// had already given them exactly the planned providers.
func (m *Inventory) DoneElsewhere() int { return m.elsewhere }

// Name implements Migration.
func (m *Inventory) Name() string { return InventoryName }

// Pending is the number of nodes the plan found to migrate (bad rows
// included) so far; it is the whole count once a Run has reached the end.
func (m *Inventory) Pending() int { return len(m.nodes) }

// Stop implements Stopper: it ends the planning that a run stopped early
// (--max-count, a failure) leaves going, and waits for it.
func (m *Inventory) Stop() {
	if m.stopPlan != nil {
		m.stopPlan()
		<-m.planEnded
	}
}

// start reads the Placement state and starts planning. With shared
// storage pools the whole plan comes first: a pool's sharing provider is
// sized from all its members and written before them.
func (m *Inventory) start(ctx context.Context) error {
	st, err := m.Placement.LoadPlacementState(ctx)
	if err != nil {
		return err
	}
	m.pools = poolUUIDs(st, &m.Config)
	for _, u := range poolUUIDs(st, &InventoryConfig{}) {
		m.oldPools = m.oldPools || !m.Config.namesPool(u)
	}
	m.stream = newPlanStream(&m.Config, st)
	pctx, cancel := context.WithCancel(ctx)
	m.stopPlan, m.planEnded = cancel, make(chan struct{})
	go func() {
		defer close(m.planEnded)
		m.stream.run(pctx, m.Cells)
	}()
	if len(m.Config.SharedStorage) == 0 {
		return nil
	}
	if _, _, err := m.stream.wait(ctx, -1); err != nil {
		return err
	}
	p, err := m.stream.finish()
	if err != nil {
		return err
	}
	if m.ids, err = m.Placement.EnsurePlacementNames(ctx, p.classes, p.traits, p.aggregates); err != nil {
		return err
	}
	for _, s := range p.Shared {
		if errs := m.Placement.WriteNodes(ctx, m.ids, []NodeWrite{*s.write}); errs[0] != nil {
			return fmt.Errorf("shared storage provider %s: %w", s.Host, errs[0])
		}
	}
	return nil
}

// namesPool says whether u is the sharing provider of a configured pool.
func (c *InventoryConfig) namesPool(u string) bool {
	for _, p := range c.SharedStorage {
		if SharedProviderUUID(p.Name) == u {
			return true
		}
	}
	return false
}

// ensureNames creates the classes, traits and aggregates the plans so far
// use that are not there yet: before a batch is written, every name its
// nodes need exists.
func (m *Inventory) ensureNames(ctx context.Context) error {
	classes, traits, aggs := m.stream.missingNames(m.ids)
	if m.ids != nil && len(classes)+len(traits)+len(aggs) == 0 {
		return nil
	}
	ids, err := m.Placement.EnsurePlacementNames(ctx, classes, traits, aggs)
	if err != nil {
		return err
	}
	m.ids = ids
	return nil
}

// Parts implements PhaseParts: the layout switch phase, when the run
// had one. Its time is the inventory step's writing time apportioned by
// node to the nodes that switch (a group of 50 nodes, 10 of them
// switching, gives them a fifth of its time), divided by the workers
// that write side by side.
func (m *Inventory) Parts() []PhasePart {
	if m.switchDone == 0 {
		return nil
	}
	return []PhasePart{{Name: "layout switch", Items: m.switchDone, Unit: "nodes", Took: m.switchTook}}
}

// switches is the number of nodes of the complete plan that switch
// layout, -1 while planning goes on.
func (m *Inventory) switches() int {
	if !m.complete {
		return -1
	}
	if !m.switchCounted {
		m.switchCounted = true
		for _, pn := range m.nodes {
			if pn.write != nil && pn.write.layout {
				m.switchTotal++
			}
		}
	}
	return m.switchTotal
}

// total is the number of pending nodes for Progress, -1 while planning
// goes on.
func (m *Inventory) total() int {
	if !m.complete {
		return -1
	}
	return len(m.nodes)
}

// Run implements Migration: it migrates up to count pending nodes.
func (m *Inventory) Run(ctx context.Context, count int) (found, done int, err error) {
	defer func() {
		if m.AfterRun != nil {
			m.AfterRun()
		}
		m.tellLeftAlone()
	}()
	if m.stream == nil {
		m.startErr = m.start(ctx)
	}
	if m.startErr != nil {
		// Nothing is written after a failed start (the pools' providers
		// may be missing), however often Run is called.
		return 0, 0, m.startErr
	}
	if m.nodes, m.complete, err = m.stream.wait(ctx, m.next+count); err != nil {
		return 0, 0, err
	}
	if m.complete && !m.warned {
		m.warned = true
		if msg := m.Config.UnusedHostsWarning(m.Config.UnusedHosts(m.stream.hosts)); msg != "" && m.Warn != nil {
			m.Warn(msg)
		}
		for _, msg := range m.stream.cappedWarnings() {
			if m.Warn != nil {
				m.Warn(msg)
			}
		}
	}
	if err := m.ensureNames(ctx); err != nil {
		return 0, 0, err
	}
	end := min(m.next+count, len(m.nodes))
	batch := m.nodes[m.next:end]
	m.next = end
	found = len(batch)
	// The uuids are generated here, in batch order, so that a
	// deterministic NewUUID gives every node the same one whatever the
	// workers' timing.
	gen := make([]string, len(batch))
	var todo []int
	for i, pn := range batch {
		if pn.err != nil {
			continue
		}
		if pn.Owner != "" && pn.write != nil && m.Notice != nil {
			m.Notice(pn.forcedNote())
		}
		if pn.needsUUID {
			gen[i] = uuid.NewString()
			if m.NewUUID != nil {
				gen[i] = m.NewUUID()
			}
		}
		todo = append(todo, i)
	}
	errs := make([]error, len(batch))
	ok, elsewhere, fatal := m.writeAll(ctx, batch, gen, todo, errs)
	done += ok + elsewhere
	m.elsewhere += elsewhere
	if fatal == nil && m.complete && m.next == len(m.nodes) && !m.retired {
		m.retired = true
		// Only a pool provider Placement held when the run began can
		// have been left by this run's nodes.
		if m.oldPools {
			fatal = m.retirePools(ctx)
		}
	}
	var rowErrs RowErrors
	for i, pn := range batch {
		e := errs[i]
		if pn.err != nil {
			e = pn.err
		}
		if e != nil {
			re := pn.rowError(e)
			rowErrs = append(rowErrs, re)
			if pn.err != nil && !re.Unfit {
				m.Skipped.add(pn.computeHost, re)
			}
		}
	}
	if fatal != nil {
		return found, done, fatal
	}
	if len(rowErrs) > 0 {
		return found, done, rowErrs
	}
	return found, done, nil
}

// storeUUIDs writes the group's generated uuids into the cell databases
// before anything of those nodes goes to Placement: a crash after that
// leaves nodes that a re-run migrates under the same uuids. It binds each
// node to the uuid its row holds, re-planning when a nova-compute set
// another first, and returns the nodes still to write. Row-level problems
// land in errs.
func (m *Inventory) storeUUIDs(ctx context.Context, batch []*PlannedNode, gen []string, idx []int, errs []error) ([]int, error) {
	want := map[Cell]map[int64]string{}
	for _, i := range idx {
		if pn := batch[i]; pn.needsUUID {
			if want[pn.cell] == nil {
				want[pn.cell] = map[int64]string{}
			}
			want[pn.cell][pn.NodeID] = gen[i]
		}
	}
	stored := map[Cell]map[int64]string{}
	for cell, w := range want {
		// One writer per cell at a time: two workers' UPDATEs of the
		// uuid unique index could deadlock each other, and the cell update
		// still overlaps the other workers' Placement transactions.
		m.cellMu.Lock()
		got, err := cell.SetComputeNodeUUIDs(ctx, w)
		m.cellMu.Unlock()
		if err != nil {
			return nil, err
		}
		stored[cell] = got
	}
	var out []int
	for _, i := range idx {
		pn := batch[i]
		if !pn.needsUUID {
			out = append(out, i)
			continue
		}
		got, ok := stored[pn.cell][pn.NodeID]
		if !ok {
			errs[i] = fmt.Errorf("compute node still has no uuid")
			continue
		}
		pn.plan.Bind(got)
		pn.UUID, pn.needsUUID = got, false
		if got == gen[i] {
			// A uuid generated just now has no provider yet: the plan's
			// creates stand, with the uuid filled in.
			for k := range pn.write.Providers {
				pn.write.Providers[k].UUID = pn.plan.Providers[k].UUID
				pn.write.Providers[k].ParentUUID = pn.plan.Providers[k].ParentUUID
			}
		} else if err := m.replan(ctx, pn); err != nil {
			// Someone else (a nova-compute) set the uuid: re-read.
			if isRowLevel(err) {
				errs[i] = err
				continue
			}
			return nil, err
		}
		if pn.write == nil {
			continue // already what we want: done, nothing to write
		}
		out = append(out, i)
	}
	return out, nil
}

// isRowLevel says whether a write error concerns only that node.
func isRowLevel(err error) bool {
	return errors.Is(err, ErrDuplicate) || errors.Is(err, ErrGenerationConflict) || errors.Is(err, ErrBadValue) ||
		errors.Is(err, ErrInventoryInUse) || errors.Is(err, errPlan) || errors.Is(err, ErrLayoutSwitch)
}

var errPlan = errors.New("plan")

type planError struct{ err error }

func (e planError) Error() string { return e.err.Error() }
func (e planError) Is(t error) bool {
	return t == errPlan
}

// replan re-reads the node's providers and diffs again (after a uuid was
// generated, or a concurrent writer changed them).
func (m *Inventory) replan(ctx context.Context, pn *PlannedNode) error {
	var uuids, names []string
	for _, d := range pn.plan.Providers {
		uuids, names = append(uuids, d.UUID), append(names, d.Name)
	}
	// The pools' sharing providers too: a node may join or leave one.
	st, err := m.Placement.LoadProviders(ctx, append(uuids, m.pools...), names)
	if err != nil {
		return err
	}
	if err := m.Config.diffNode(pn, st); err != nil {
		return planError{err}
	}
	return nil
}

// committedAnyway returns the nodes among idx whose providers Placement
// now holds as planned although their write reported an error: a
// connection that dies during COMMIT leaves the client not knowing whether
// the server committed. Reading back, once the server has finished with
// the failed writes' sessions (a killed session still commits or rolls
// back after the client saw the error), keeps the summary's Completed equal
// to what was written. It has its own bound, readBackBound (the run's
// context may be cancelled by a signal); when the database cannot answer,
// no node is claimed.
func (m *Inventory) committedAnyway(ctx context.Context, batch []*PlannedNode, idx []int, failures []error) []int {
	if len(idx) == 0 {
		return nil
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), readBackBound)
	defer cancel()
	if s, ok := m.Placement.(Settler); ok {
		if err := s.Settle(rctx, failures); err != nil {
			return nil
		}
	}
	var uuids, names []string
	for _, i := range idx {
		for _, d := range batch[i].plan.Providers {
			uuids, names = append(uuids, d.UUID), append(names, d.Name)
		}
	}
	st, err := m.Placement.LoadProviders(rctx, uuids, names)
	if err != nil {
		return nil
	}
	var out []int
	for _, i := range idx {
		if w, _, err := m.Config.Diff(batch[i].plan.Providers, st); err == nil && w == nil {
			out = append(out, i)
		}
	}
	return out
}

// readBackBound bounds the read-back after writes whose outcome is in
// doubt: the wait for their sessions to end plus the read. It is a bound,
// not an expected time: a killed session ends within milliseconds on an
// idle server and within a few seconds on a loaded 2-core test machine; a
// database that does not answer within it gets no node claimed.
const readBackBound = 30 * time.Second

// conflictRetries is how often a node is re-planned after a concurrent
// change, as Nova's resource tracker retries _update_to_placement.
const conflictRetries = 4

// writeAll migrates the batch's nodes listed in todo in groups on Parallel
// workers; each worker stores its group's uuids in the cells and then
// writes the group to Placement, so that one worker's cell update and
// another's Placement transaction proceed together. It returns the number
// of nodes this run wrote and of those another writer had already written,
// sets a row error per failed node in errs, and returns a fatal error when
// a database itself failed.
func (m *Inventory) writeAll(ctx context.Context, batch []*PlannedNode, gen []string, todo []int, errs []error) (int, int, error) {
	if len(todo) == 0 {
		return 0, 0, nil
	}
	group := m.GroupSize
	if group <= 0 {
		group = 100
	}
	workers := max(m.Parallel, 1)
	if m.Placement.SingleWriter() {
		workers = 1 // SQLite has one writer
	}
	// Nodes joining a pool take its sharing provider's room in the order
	// they are written: with several workers that order, and so which
	// nodes get in, was the workers' timing (two clean runs of a flat cloud
	// on MariaDB ended with different members, and a re-run after kill -9
	// with others again; issue 37 row 2). Such a batch is written by one
	// worker, in node order, as on SQLite: the members are then the first
	// nodes by cell and id that fit, whatever the run and wherever it was
	// stopped.
	for _, i := range todo {
		if workers > 1 && m.Config.intoPool(batch[i].write) {
			workers = 1
		}
	}
	// A runner batch (50 nodes by default) is split so that every worker
	// has a share of it.
	group = max(1, min(group, (len(todo)+workers-1)/workers))
	ch := make(chan []int)
	var mu sync.Mutex
	var fatal error
	ok := make([]nodeDone, len(batch)) // each index is written by one worker
	var inDoubt []int                  // nodes whose write failed with the database
	var doubtful []error               // and their errors
	setFatal := func(err error) {
		mu.Lock()
		if fatal == nil {
			fatal = err
		}
		mu.Unlock()
	}
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for part := range ch {
				began, switching := time.Now(), 0
				for _, i := range part {
					if w := batch[i].write; w != nil && w.layout {
						switching++
					}
				}
				left, err := m.storeUUIDs(ctx, batch, gen, part, errs)
				if err != nil {
					setFatal(err)
					left = nil
				} else {
					// Bound to a uuid whose providers already match.
					for _, i := range part {
						switch {
						case errs[i] != nil:
						case batch[i].LeftAlone:
							// A nova-compute set the uuid and owns the
							// provider already.
							m.lateMu.Lock()
							m.leftLate = append(m.leftLate, batch[i])
							m.lateMu.Unlock()
						case batch[i].write == nil:
							ok[i] = doneElsewhere
						}
					}
				}
				left = m.planSwitchMoves(ctx, batch, left, errs, setFatal)
				writes := make([]NodeWrite, len(left))
				for k, i := range left {
					writes[k] = *batch[i].write
				}
				res := m.Placement.WriteNodes(ctx, m.ids, writes)
				for k, e := range res {
					pn := batch[left[k]]
					state := doneHere
					for try := 0; e != nil && try < conflictRetries && (errors.Is(e, ErrGenerationConflict) || errors.Is(e, ErrDuplicate)); try++ {
						if e = m.replan(ctx, pn); e != nil {
							break
						}
						if pn.LeftAlone {
							// A nova-compute took the node over meanwhile.
							state = notDone
							m.lateMu.Lock()
							m.leftLate = append(m.leftLate, pn)
							m.lateMu.Unlock()
							break
						}
						if pn.write == nil {
							state = doneElsewhere // someone else wrote exactly what we wanted
							break
						}
						if e = m.Config.planMoves(ctx, m.Placement, pn.write); e != nil {
							break
						}
						e = m.Placement.WriteNodes(ctx, m.ids, []NodeWrite{*pn.write})[0]
					}
					switch {
					case e == nil:
						ok[left[k]] = state
					case isRowLevel(e):
						errs[left[k]] = e
					default:
						// Named, so that an operator knows where the run
						// stopped even when the database is what failed.
						setFatal(fmt.Errorf("compute node id=%d (%s) in cell %s: %w", pn.NodeID, shorten(pn.Host), sanitize.String(pn.Cell), e))
						mu.Lock()
						inDoubt = append(inDoubt, left[k])
						doubtful = append(doubtful, e)
						mu.Unlock()
					}
				}
				mu.Lock()
				m.finished += len(part)
				if m.Progress != nil {
					m.Progress(m.finished, m.total())
				}
				if switching > 0 {
					m.switchDone += switching
					m.switchTook += time.Since(began) * time.Duration(switching) / time.Duration(len(part)*workers)
					if m.SwitchProgress != nil {
						m.SwitchProgress(m.switchDone, m.switches())
					}
				}
				mu.Unlock()
			}
		}()
	}
	for lo := 0; lo < len(todo); lo += group {
		mu.Lock()
		stop := fatal != nil
		mu.Unlock()
		if stop || ctx.Err() != nil {
			break
		}
		ch <- todo[lo:min(lo+group, len(todo))]
	}
	close(ch)
	wg.Wait()
	if fatal == nil && ctx.Err() != nil {
		fatal = ctx.Err()
	}
	for _, i := range m.committedAnyway(ctx, batch, inDoubt, doubtful) {
		ok[i] = doneHere
	}
	written, elsewhere := 0, 0
	for _, o := range ok {
		switch o {
		case doneHere:
			written++
		case doneElsewhere:
			elsewhere++
		}
	}
	return written, elsewhere, fatal
}

// nodeDone says who migrated a node of a batch.
type nodeDone int

const (
	notDone       nodeDone = iota
	doneHere               // this run's write
	doneElsewhere          // found as planned, written by another writer
)
