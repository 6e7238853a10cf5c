package migrate

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/rpctl/rpctl/inventory"
)

// Layout switches (issue 26). A node migrated with one layout and migrated
// again with another (--layout flat|nested, --shared-storage added or
// removed) must not offer a class twice: the inventories move to where the
// new layout puts them, and so do the allocations held on them, in the
// node's one transaction. Diff finds what moves (moveNeed); at write time
// the allocations are read and each one gets a target (planMoves):
//
//   - the targets of a class are the providers of the new tree that hold
//     it, in tree order (root, then NUMA cells by id), then the sharing
//     provider of the node's pool;
//   - a consumer's allocation goes to the target that already holds
//     another of its classes (its CPUs and memory stay in one NUMA cell),
//     else to the first with room;
//   - an allocation with no room anywhere refuses the node, naming it,
//     the consumer and the class (ErrLayoutSwitch); nothing of the node is
//     written.

// ErrLayoutSwitch is a layout switch that cannot be made safely.
var ErrLayoutSwitch = errors.New("layout switch refused")

// sharedPoolPrefix names the sharing providers rpctl creates (see
// SharedProviderName): only those are left by a node that leaves a pool.
const sharedPoolPrefix = "shared-storage-"

// moveNeed is a class whose allocations on From must move; onlyTree limits
// them to the consumers that hold something on the node's tree (From is a
// sharing provider other nodes use too).
type moveNeed struct {
	From     string
	Class    string
	onlyTree bool
}

// switching is the part of a NodeWrite that plans its moves.
type switching struct {
	needs    []moveNeed
	targets  map[string][]string // class -> target providers, in preference order
	capacity map[[2]string]int64 // (provider, class) -> capacity once written
	tree     []string            // the node's providers as Placement holds them
	node     string
	// layout: Placement holds the node in another layout (flat or
	// nested, in a pool or not) than the one written now: the node is
	// part of the layout switch phase (its progress and time).
	layout bool
}

// capacityOf is Placement's int((total - reserved) * ratio).
func capacityOf(total, reserved int64, ratio float64) int64 {
	return int64(math.Trunc(float64(total-reserved) * ratio))
}

func (st *PlacementState) index() {
	st.once.Do(func() {
		st.children, st.pools = map[string][]string{}, map[string][]string{}
		for _, u := range sortedKeys(st.Providers) {
			p := st.Providers[u]
			if p.ParentUUID != "" {
				st.children[p.ParentUUID] = append(st.children[p.ParentUUID], u)
			}
			if p.Traits[TraitShares] && strings.HasPrefix(p.Name, sharedPoolPrefix) {
				for a := range p.Aggregates {
					st.pools[a] = append(st.pools[a], u)
				}
			}
		}
	})
}

// treeOf is the providers of st under root (itself first), parents first.
func treeOf(st *PlacementState, root string) []string {
	st.index()
	out := []string{root}
	for i := 0; i < len(out); i++ {
		out = append(out, st.children[out[i]]...)
	}
	return out
}

// poolProviders are the rpctl sharing providers of st in aggregate agg.
func poolProviders(st *PlacementState, agg string) []*PProvider {
	st.index()
	var out []*PProvider
	for _, u := range st.pools[agg] {
		out = append(out, st.Providers[u])
	}
	return out
}

// staleDevice is a PCI device provider of the node's tree (it holds
// COMPUTE_MANAGED_PCI_DEVICE, which only device providers have) that the
// plan no longer has, with no allocations and no children: nova-compute
// deletes such a provider (PciResourceProvider.update_provider_tree
// removes the provider of a device that is gone: removed or deleted in
// pci_devices, or no longer in the row), and so does the migration. One
// still allocated keeps it, and the node is refused naming it (Nova logs
// "You should not remove an allocated device").
func staleDevice(st *PlacementState, p *PProvider) bool {
	st.index()
	return p.Traits[TraitManagedPCI] && len(p.Used) == 0 && len(st.children[p.UUID]) == 0
}

// planSwitch adds to w what a layout switch of the node needs beyond its
// desired providers' own diff: the providers of its old tree the new one
// drops (their managed inventories go), the pools its root leaves, and the
// allocations to move. used lists the (provider, class) pairs the diff
// removes although they hold allocations.
func (c *InventoryConfig) planSwitch(desired []DesiredProvider, st *PlacementState, w *NodeWrite, changes *[]ProviderChange, used [][2]string) error {
	if len(desired) == 0 || desired[0].ParentUUID != "" || slices.Contains(desired[0].Traits, TraitShares) {
		if len(used) > 0 {
			return fmt.Errorf("provider %s no longer has %s but it has allocations against it", used[0][0], used[0][1])
		}
		return nil
	}
	root := desired[0]
	sw := &w.switching
	sw.node = root.Name
	wanted := map[string]bool{}
	for _, d := range desired {
		wanted[d.UUID] = true
	}
	// The targets are worked out only for a node that switches.
	ready := false
	targets := func() map[string][]string {
		if !ready {
			ready = true
			c.switchTargets(desired, st, sw)
		}
		return sw.targets
	}
	for _, u := range used {
		if len(targets()[u[1]]) == 0 {
			return fmt.Errorf("%w: node %s: provider %s holds allocations of %s and the new layout has no provider for %s", ErrLayoutSwitch, root.Name, u[0], u[1], u[1])
		}
		sw.needs = append(sw.needs, moveNeed{From: u[0], Class: u[1]})
	}
	cur := st.Providers[root.UUID]
	if cur == nil {
		return nil // a new node: nothing to switch from
	}
	sw.tree = treeOf(st, root.UUID)
	sw.layout = c.switchesLayout(desired, st, cur)
	// Providers of the old tree the new layout does not have.
	for _, u := range sw.tree[1:] {
		if wanted[u] {
			continue
		}
		p := st.Providers[u]
		pw := ProviderWrite{UUID: u, Name: p.Name, ParentUUID: p.ParentUUID, ExpectGeneration: p.Generation, Generation: p.Generation + 1}
		ch := ProviderChange{UUID: u, Name: p.Name, Parent: p.ParentUUID, Action: "update"}
		if staleDevice(st, p) {
			pw.Delete, ch.Action = true, "delete"
			for _, rc := range sortedKeys(p.Inventories) {
				o := p.Inventories[rc]
				ch.Inventories = append(ch.Inventories, InventoryChange{ResourceClass: rc, Before: &o})
			}
			w.Providers = append(w.Providers, pw)
			*changes = append(*changes, ch)
			continue
		}
		for _, rc := range sortedKeys(p.Inventories) {
			if !ManagesClass(rc) {
				continue
			}
			if p.Used[rc] {
				if len(targets()[rc]) == 0 {
					return fmt.Errorf("%w: node %s: provider %s holds allocations of %s and the new layout has no provider for %s", ErrLayoutSwitch, root.Name, p.Name, rc, rc)
				}
				sw.needs = append(sw.needs, moveNeed{From: u, Class: rc})
			}
			pw.DeleteInventories = append(pw.DeleteInventories, rc)
			o := p.Inventories[rc]
			ch.Inventories = append(ch.Inventories, InventoryChange{ResourceClass: rc, Before: &o})
		}
		if len(pw.DeleteInventories) > 0 {
			w.Providers = append(w.Providers, pw)
			*changes = append(*changes, ch)
		}
	}
	// Pools the root leaves.
	var leave []string
	for _, a := range sortedKeys(cur.Aggregates) {
		if slices.Contains(root.Aggregates, a) {
			continue
		}
		pool := poolProviders(st, a)
		if len(pool) == 0 {
			continue
		}
		leave = append(leave, a)
		for _, sp := range pool {
			if sp.Used["DISK_GB"] {
				if len(targets()["DISK_GB"]) == 0 {
					return fmt.Errorf("%w: node %s leaves pool provider %s, whose DISK_GB holds allocations, and the new layout has no provider for DISK_GB", ErrLayoutSwitch, root.Name, sp.Name)
				}
				sw.needs = append(sw.needs, moveNeed{From: sp.UUID, Class: "DISK_GB", onlyTree: true})
			}
		}
	}
	if len(leave) > 0 {
		i := slices.IndexFunc(w.Providers, func(p ProviderWrite) bool { return p.UUID == root.UUID })
		if i < 0 {
			w.Providers = append([]ProviderWrite{{UUID: root.UUID, Name: root.Name, ExpectGeneration: cur.Generation, Generation: cur.Generation}}, w.Providers...)
			*changes = append([]ProviderChange{{UUID: root.UUID, Name: root.Name, Action: "update"}}, *changes...)
			i = 0
		}
		w.Providers[i].RemoveAggregates = leave
		w.Providers[i].Generation++
	}
	return nil
}

// switchesLayout says whether the node whose root Placement holds as cur
// is written now in another layout than ReadLayout finds: NUMA children
// holding inventory or not, and the pool aggregate its root is in.
func (c *InventoryConfig) switchesLayout(desired []DesiredProvider, st *PlacementState, cur *PProvider) bool {
	was := ReadLayout(st, cur.UUID)
	nested := false
	for _, d := range desired[1:] {
		nested = nested || (d.ParentUUID != "" && slices.Contains(d.Traits, TraitNUMARoot) && len(d.Inventories) > 0)
	}
	if nested != was.Nested {
		return true
	}
	pool := ""
	for _, a := range slices.Sorted(slices.Values(desired[0].Aggregates)) {
		if ps := poolProviders(st, a); len(ps) > 0 {
			pool = strings.TrimPrefix(ps[0].Name, sharedPoolPrefix)
			break
		}
		for _, p := range c.SharedStorage {
			if SharedAggregateUUID(p.Name) == a {
				pool = p.Name
			}
		}
		if pool != "" {
			break
		}
	}
	return pool != was.Pool
}

// planMoves reads the allocations a switching node holds and gives each
// one that must move its target (see the rules above).
func (c *InventoryConfig) planMoves(ctx context.Context, p Placement, w *NodeWrite) error {
	return c.planMovesAfter(ctx, p, w, nil)
}

// planMovesAfter is planMoves with the usage changes of moves planned but
// not written yet (a dry run's earlier nodes) counted on the targets, so
// that two nodes are not both promised the last room of a pool.
func (c *InventoryConfig) planMovesAfter(ctx context.Context, p Placement, w *NodeWrite, pending map[[2]string]int64) error {
	sw := &w.switching
	w.Moves = nil
	if len(sw.needs) == 0 {
		return nil
	}
	ar, ok := p.(AllocationReader)
	if !ok {
		return fmt.Errorf("%w: node %s: its layout changes and this Placement store cannot move allocations", ErrLayoutSwitch, sw.node)
	}
	rows, usage, invs, err := ar.SwitchAllocations(ctx, sw.tree, sw.targetList())
	if err != nil {
		return err
	}
	return c.placeMoves(w, rows, usage, invs, pending)
}

// targetList is every provider the node's moves may aim at, sorted.
func (sw *switching) targetList() []string {
	var targets []string
	for _, ts := range sw.targets {
		targets = append(targets, ts...)
	}
	slices.Sort(targets)
	return slices.Compact(targets)
}

// placeMoves gives each allocation of w that must move its target, from
// what SwitchAllocations read: rows may hold other nodes' consumers too
// (one read for many nodes), and usage is not changed (a copy is).
func (c *InventoryConfig) placeMoves(w *NodeWrite, rows []AllocationRow, read map[[2]string]int64, invs map[[2]string]inventory.Inventory, pending map[[2]string]int64) error {
	sw := &w.switching
	w.Moves = nil
	if len(sw.needs) == 0 {
		return nil
	}
	targets := sw.targetList()
	for _, t := range targets {
		for k, inv := range invs {
			if k[0] != t {
				continue
			}
			if _, planned := sw.capacity[k]; !planned {
				sw.capacity[k] = capacityOf(inv.Total, inv.Reserved, inv.AllocationRatio)
			}
		}
	}
	usage := map[[2]string]int64{}
	for k, n := range read {
		if slices.Contains(targets, k[0]) {
			usage[k] = n
		}
	}
	for k, d := range pending {
		if slices.Contains(targets, k[0]) {
			usage[k] += d
		}
	}
	inTree := map[string]bool{}
	for _, u := range sw.tree {
		inTree[u] = true
	}
	treeConsumers := map[string]bool{}
	for _, r := range rows {
		if inTree[r.Provider] {
			treeConsumers[r.Consumer] = true
		}
	}
	// This node's consumers only: a read for many nodes holds the others'.
	mine := rows[:0:0]
	for _, r := range rows {
		if treeConsumers[r.Consumer] {
			mine = append(mine, r)
		}
	}
	rows = mine
	holds := map[string]map[string]bool{} // consumer -> providers it holds
	for _, r := range rows {
		if holds[r.Consumer] == nil {
			holds[r.Consumer] = map[string]bool{}
		}
		holds[r.Consumer][r.Provider] = true
	}
	// Allocations leaving a provider free their room there.
	for _, n := range sw.needs {
		for _, r := range rows {
			if r.Provider == n.From && r.Class == n.Class && (!n.onlyTree || treeConsumers[r.Consumer]) {
				usage[[2]string{n.From, n.Class}] -= r.Used
			}
		}
	}
	for _, n := range sw.needs {
		for _, r := range rows {
			if r.Provider != n.From || r.Class != n.Class || (n.onlyTree && !treeConsumers[r.Consumer]) {
				continue
			}
			room := func(t string) bool {
				k := [2]string{t, r.Class}
				return usage[k]+r.Used <= sw.capacity[k]
			}
			to := ""
			for _, t := range sw.targets[r.Class] {
				if t != n.From && holds[r.Consumer][t] && room(t) {
					to = t
					break
				}
			}
			if to == "" {
				for _, t := range sw.targets[r.Class] {
					if t != n.From && room(t) {
						to = t
						break
					}
				}
			}
			if to == "" {
				return fmt.Errorf("%w: node %s: consumer %s holds %s %d on %s and no provider of the new layout has room for it (%s); free room (allocation ratio, move instances) or keep the layout", ErrLayoutSwitch, sw.node, r.Consumer, r.Class, r.Used, n.From, strings.Join(sw.targets[r.Class], ", "))
			}
			usage[[2]string{to, r.Class}] += r.Used
			holds[r.Consumer][to] = true
			w.Moves = append(w.Moves, AllocationMove{Consumer: r.Consumer, Class: r.Class, From: n.From, To: to, Used: r.Used, Limit: sw.capacity[[2]string{to, r.Class}]})
		}
	}
	return nil
}

// switchTargets works out, for every class of the node's new tree, the
// providers that will hold it and their capacity once written.
func (c *InventoryConfig) switchTargets(desired []DesiredProvider, st *PlacementState, sw *switching) {
	root := desired[0]
	sw.targets, sw.capacity = map[string][]string{}, map[[2]string]int64{}
	for _, d := range desired {
		for _, rc := range sortedKeys(d.Inventories) {
			di := d.Inventories[rc]
			v := di.Inventory
			v.AllocationRatio = c.ratio(di, nil)
			if p := st.Providers[d.UUID]; p != nil {
				if o, ok := p.Inventories[rc]; ok {
					v.AllocationRatio = c.ratio(di, &o)
				}
			}
			sw.targets[rc] = append(sw.targets[rc], d.UUID)
			sw.capacity[[2]string{d.UUID, rc}] = capacityOf(v.Total, v.Reserved, v.AllocationRatio)
		}
	}
	// The pool's sharing provider is written before the nodes: its
	// capacity is read when the moves are planned.
	for _, a := range root.Aggregates {
		for _, pool := range c.SharedStorage {
			if SharedAggregateUUID(pool.Name) == a && !slices.Contains(sw.targets["DISK_GB"], SharedProviderUUID(pool.Name)) {
				sw.targets["DISK_GB"] = append(sw.targets["DISK_GB"], SharedProviderUUID(pool.Name))
			}
		}
	}
}

// intoPool says w moves allocations that may land on a configured pool's
// sharing provider, whose room every joining node competes for: the nodes
// that get in are the first written (issue 37 row 2).
func (c *InventoryConfig) intoPool(w *NodeWrite) bool {
	if w == nil || len(w.needs) == 0 {
		return false
	}
	for _, pool := range c.SharedStorage {
		u := SharedProviderUUID(pool.Name)
		for _, ts := range w.targets {
			if slices.Contains(ts, u) {
				return true
			}
		}
	}
	return false
}

// poolUUIDs are the sharing providers of the configured pools and of the
// pools Placement holds.
func poolUUIDs(st *PlacementState, cfg *InventoryConfig) []string {
	st.index()
	set := map[string]bool{}
	for _, ps := range st.pools {
		for _, u := range ps {
			set[u] = true
		}
	}
	for _, p := range cfg.SharedStorage {
		set[SharedProviderUUID(p.Name)] = true
	}
	return sortedKeys(set)
}

// planSwitchMoves plans the moves of the nodes about to be written; a
// node whose switch is refused leaves the list with its error. The
// allocations of all of them are read at once (issue 35: a read per node
// was five round trips per node), and each node's moves are planned from
// that read, as each was planned from its own read before any of them
// was written.
func (m *Inventory) planSwitchMoves(ctx context.Context, batch []*PlannedNode, left []int, errs []error, fatal func(error)) []int {
	var ws []*NodeWrite
	for _, i := range left {
		batch[i].write.Moves = nil
		ws = append(ws, batch[i].write)
	}
	read, readErr := readSwitches(ctx, m.Placement, ws)
	keep := left[:0:0]
	for _, i := range left {
		w := batch[i].write
		var err error
		switch {
		case len(w.needs) == 0:
		case readErr != nil:
			err = readErr
		case read == nil:
			// No AllocationReader: planMoves says so.
			err = m.Config.planMoves(ctx, m.Placement, w)
		default:
			err = m.Config.placeMoves(w, read.rows, read.usage, read.invs, nil)
		}
		switch {
		case err == nil:
			keep = append(keep, i)
		case errors.Is(err, ErrLayoutSwitch):
			errs[i] = err
		default:
			fatal(err)
		}
	}
	return keep
}

// switchRead is what SwitchAllocations read for several nodes at once.
type switchRead struct {
	rows  []AllocationRow
	usage map[[2]string]int64
	invs  map[[2]string]inventory.Inventory
}

// readSwitches reads, in one SwitchAllocations, the allocations of every
// node of ws whose layout switch moves some (their trees and targets
// together): nil when none does or the store reads no allocations.
func readSwitches(ctx context.Context, p Placement, ws []*NodeWrite) (*switchRead, error) {
	var tree, targets []string
	for _, w := range ws {
		if len(w.needs) > 0 {
			tree = append(tree, w.tree...)
			targets = append(targets, w.targetList()...)
		}
	}
	ar, ok := p.(AllocationReader)
	if len(tree) == 0 || !ok {
		return nil, nil
	}
	slices.Sort(tree)
	slices.Sort(targets)
	rows, usage, invs, err := ar.SwitchAllocations(ctx, slices.Compact(tree), slices.Compact(targets))
	if err != nil {
		return nil, err
	}
	return &switchRead{uniqueRows(rows), usage, invs}, nil
}

// uniqueRows drops the repeats of an allocation a read in several IN
// lists returned more than once (a consumer on trees of two lists).
func uniqueRows(rows []AllocationRow) []AllocationRow {
	seen := make(map[AllocationRow]bool, len(rows))
	out := rows[:0]
	for _, r := range rows {
		if !seen[r] {
			seen[r] = true
			out = append(out, r)
		}
	}
	return out
}

// retirePools empties the DISK_GB of the pool providers no configured pool
// names once no provider is left in their aggregates and nothing is
// allocated on them: the nodes that left took their DISK_GB home, and the
// pool would otherwise count it a second time. It runs after the last
// node; a pool still in use stays, and so does its provider.
func (m *Inventory) retirePools(ctx context.Context) error {
	configured := map[string]bool{}
	for _, p := range m.Config.SharedStorage {
		configured[SharedProviderUUID(p.Name)] = true
	}
	st, err := m.Placement.LoadPlacementState(ctx)
	if err != nil {
		return err
	}
	members := map[string]int{} // aggregate -> providers in it that do not share
	for _, p := range st.Providers {
		if p.Traits[TraitShares] {
			continue
		}
		for a := range p.Aggregates {
			members[a]++
		}
	}
	var writes []NodeWrite
	for _, u := range poolUUIDs(st, &InventoryConfig{}) {
		p := st.Providers[u]
		if p == nil || configured[u] || p.Used["DISK_GB"] {
			continue
		}
		if _, ok := p.Inventories["DISK_GB"]; !ok {
			continue
		}
		inUse := false
		for a := range p.Aggregates {
			inUse = inUse || members[a] > 0
		}
		if inUse {
			continue
		}
		writes = append(writes, NodeWrite{Providers: []ProviderWrite{{UUID: u, Name: p.Name, ExpectGeneration: p.Generation, Generation: p.Generation + 1, DeleteInventories: []string{"DISK_GB"}}}})
	}
	for i, err := range m.Placement.WriteNodes(ctx, m.ids, writes) {
		if err != nil {
			return fmt.Errorf("retire shared storage provider %s: %w", writes[i].Providers[0].Name, err)
		}
	}
	return nil
}
