package migrate

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/google/uuid"

	"github.com/rpctl/rpctl/storage"
)

// InventoryName is the migration's key in the summary table.
const InventoryName = "inventory"

// PlannedNode is what the migration does with one compute node (or one
// sharing provider, which has no NodeID).
type PlannedNode struct {
	Cell    string           `json:"cell,omitempty"`
	NodeID  int64            `json:"compute_node_id,omitempty"`
	Host    string           `json:"hypervisor_hostname"`
	UUID    string           `json:"uuid"`
	Changes []ProviderChange `json:"providers"`
	Error   string           `json:"error,omitempty"`

	cell  *storage.DB
	plan  *NodePlan
	write *storage.NodeWrite
	err   error
	// needsUUID: the row's uuid is NULL; one is generated and stored in the
	// cell database before anything is written to Placement.
	needsUUID bool
}

// InventoryPlan is the whole run: the sharing providers first, then every
// compute node that needs a change or is bad.
type InventoryPlan struct {
	Shared    []*PlannedNode `json:"shared_providers"`
	Nodes     []*PlannedNode `json:"compute_nodes"`
	Unchanged int            `json:"unchanged"`

	classes, traits, aggregates []string
}

// PlanInventory reads every live compute node of the cells and the
// Placement state, and works out what the migration would write. It writes
// nothing.
func PlanInventory(ctx context.Context, cells []*storage.DB, placement *storage.DB, cfg *InventoryConfig) (*InventoryPlan, error) {
	st, err := storage.LoadPlacementState(ctx, placement)
	if err != nil {
		return nil, err
	}
	out := &InventoryPlan{Shared: []*PlannedNode{}, Nodes: []*PlannedNode{}}
	var plans []*NodePlan
	classes, traits, aggs := map[string]bool{}, map[string]bool{}, map[string]bool{}
	note := func(d DesiredProvider) {
		for rc := range d.Inventories {
			if !standardClasses[rc] {
				classes[rc] = true
			}
		}
		for _, t := range d.Traits {
			traits[t] = true
		}
		for _, a := range d.Aggregates {
			aggs[a] = true
		}
	}
	for _, cell := range cells {
		nodes, err := storage.ListComputeNodes(ctx, cell, false)
		if err != nil {
			return nil, err
		}
		for _, n := range nodes {
			pn := &PlannedNode{Cell: cell.Name, NodeID: n.ID, cell: cell}
			if n.HypervisorHostname != nil {
				pn.Host = *n.HypervisorHostname
			}
			p, err := cfg.PlanNode(cell.Name, n)
			if err != nil {
				pn.err = err
				pn.Error = err.Error()
				out.Nodes = append(out.Nodes, pn)
				continue
			}
			pn.plan = p
			pn.needsUUID = n.UUID == nil || *n.UUID == ""
			if !pn.needsUUID {
				pn.UUID = *n.UUID
			}
			plans = append(plans, p)
			for _, d := range p.Providers {
				note(d)
			}
			w, ch, err := cfg.Diff(p.Providers, st)
			if err != nil {
				pn.err = err
				pn.Error = err.Error()
				out.Nodes = append(out.Nodes, pn)
				continue
			}
			if w == nil && !pn.needsUUID {
				out.Unchanged++
				continue
			}
			pn.write, pn.Changes = w, ch
			out.Nodes = append(out.Nodes, pn)
		}
	}
	for _, d := range cfg.SharedPlans(plans) {
		note(d)
		pn := &PlannedNode{Host: d.Name, UUID: d.UUID}
		w, ch, err := cfg.Diff([]DesiredProvider{d}, st)
		if err != nil {
			return nil, fmt.Errorf("shared storage provider %s: %w", d.Name, err)
		}
		if w == nil {
			continue
		}
		pn.write, pn.Changes = w, ch
		out.Shared = append(out.Shared, pn)
	}
	out.classes, out.traits, out.aggregates = sortedKeys(classes), sortedKeys(traits), sortedKeys(aggs)
	return out, nil
}

// Inventory is the compute-node inventory migration. It plans once, on its
// first Run, and then hands out the pending nodes batch by batch, so that
// 100,000 nodes are read once rather than once per batch of 50.
type Inventory struct {
	Cells     []*storage.DB
	Placement *storage.DB
	Config    InventoryConfig
	// Parallel workers write groups of GroupSize nodes, each group in one
	// transaction (a failing node is retried alone, so it neither undoes
	// nor blocks the others).
	Parallel  int
	GroupSize int
	// Progress, when set, is told after every group how many of the
	// pending nodes are done.
	Progress func(done, total int)
	// AfterRun, when set, is called at the end of every Run (to clear a
	// progress bar before the runner prints).
	AfterRun func()
	// NewUUID generates compute node uuids (tests make it deterministic).
	NewUUID func() string

	plan     *InventoryPlan
	ids      *storage.PlacementIDs
	next     int
	finished int
}

// Name implements Migration.
func (m *Inventory) Name() string { return InventoryName }

// Pending is the number of nodes the plan found to migrate (bad rows
// included); it is known after the first Run.
func (m *Inventory) Pending() int {
	if m.plan == nil {
		return 0
	}
	return len(m.plan.Nodes)
}

func (m *Inventory) load(ctx context.Context) error {
	p, err := PlanInventory(ctx, m.Cells, m.Placement, &m.Config)
	if err != nil {
		return err
	}
	ids, err := storage.EnsurePlacementNames(ctx, m.Placement, p.classes, p.traits, p.aggregates)
	if err != nil {
		return err
	}
	m.plan, m.ids = p, ids
	for _, s := range p.Shared {
		if errs := storage.WriteNodes(ctx, m.Placement, ids, []storage.NodeWrite{*s.write}); errs[0] != nil {
			return fmt.Errorf("shared storage provider %s: %w", s.Host, errs[0])
		}
	}
	return nil
}

// Run implements Migration: it migrates up to count pending nodes.
func (m *Inventory) Run(ctx context.Context, count int) (found, done int, err error) {
	if m.AfterRun != nil {
		defer m.AfterRun()
	}
	if m.plan == nil {
		if err := m.load(ctx); err != nil {
			return 0, 0, err
		}
	}
	end := min(m.next+count, len(m.plan.Nodes))
	batch := m.plan.Nodes[m.next:end]
	m.next = end
	found = len(batch)
	var rowErrs RowErrors
	bad := func(pn *PlannedNode, err error) {
		rowErrs = append(rowErrs, &RowError{Migration: InventoryName, Cell: pn.Cell, ID: pn.NodeID, Host: pn.Host, Err: err})
	}
	// The uuids go into the cell databases first: a crash after that
	// leaves nodes that a re-run migrates under the same uuids.
	gen := map[*storage.DB]map[int64]string{}
	for _, pn := range batch {
		if pn.err == nil && pn.needsUUID {
			u := uuid.NewString()
			if m.NewUUID != nil {
				u = m.NewUUID()
			}
			if gen[pn.cell] == nil {
				gen[pn.cell] = map[int64]string{}
			}
			gen[pn.cell][pn.NodeID] = u
		}
	}
	stored := map[*storage.DB]map[int64]string{}
	for cell, want := range gen {
		got, err := storage.SetComputeNodeUUIDs(ctx, cell, want)
		if err != nil {
			return found, done, err
		}
		stored[cell] = got
	}
	var todo []*PlannedNode
	for _, pn := range batch {
		if pn.err != nil {
			bad(pn, pn.err)
			continue
		}
		if pn.needsUUID {
			got, ok := stored[pn.cell][pn.NodeID]
			if !ok {
				bad(pn, fmt.Errorf("compute node still has no uuid"))
				continue
			}
			ours := got == gen[pn.cell][pn.NodeID]
			pn.plan.Bind(got)
			pn.UUID, pn.needsUUID = got, false
			if ours {
				// A uuid generated just now has no provider yet: the plan's
				// creates stand, with the uuid filled in.
				for i := range pn.write.Providers {
					pn.write.Providers[i].UUID = pn.plan.Providers[i].UUID
					pn.write.Providers[i].ParentUUID = pn.plan.Providers[i].ParentUUID
				}
			} else if err := m.replan(ctx, pn); err != nil {
				// Someone else (a nova-compute) set the uuid: re-read.
				if isRowLevel(err) {
					bad(pn, err)
					continue
				}
				return found, done, err
			}
			if pn.write == nil {
				done++
				continue
			}
		}
		todo = append(todo, pn)
	}
	ok, errs, fatal := m.writeAll(ctx, todo)
	done += ok
	for i, e := range errs {
		if e != nil {
			bad(todo[i], e)
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

// isRowLevel says whether a write error concerns only that node.
func isRowLevel(err error) bool {
	return errors.Is(err, storage.ErrDuplicate) || errors.Is(err, storage.ErrGenerationConflict) ||
		errors.Is(err, storage.ErrInventoryInUse) || errors.Is(err, errPlan)
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
	st, err := storage.LoadProviders(ctx, m.Placement, uuids, names)
	if err != nil {
		return err
	}
	w, ch, err := m.Config.Diff(pn.plan.Providers, st)
	if err != nil {
		return planError{err}
	}
	pn.write, pn.Changes = w, ch
	return nil
}

// conflictRetries is how often a node is re-planned after a concurrent
// change, as Nova's resource tracker retries _update_to_placement.
const conflictRetries = 4

// writeAll writes the nodes in groups on Parallel workers. It returns the
// number written, a row error per node (nil when written), and a fatal
// error when the database itself failed.
func (m *Inventory) writeAll(ctx context.Context, nodes []*PlannedNode) (int, []error, error) {
	errs := make([]error, len(nodes))
	if len(nodes) == 0 {
		return 0, errs, nil
	}
	group := m.GroupSize
	if group <= 0 {
		group = 100
	}
	workers := max(m.Parallel, 1)
	if !m.Placement.IsMySQL() {
		workers = 1 // SQLite has one writer
	}
	type span struct{ lo, hi int }
	ch := make(chan span)
	var mu sync.Mutex
	var fatal error
	written := 0
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for s := range ch {
				part := nodes[s.lo:s.hi]
				writes := make([]storage.NodeWrite, len(part))
				for i, pn := range part {
					writes[i] = *pn.write
				}
				res := storage.WriteNodes(ctx, m.Placement, m.ids, writes)
				ok := 0
				for i, e := range res {
					pn := part[i]
					for try := 0; e != nil && try < conflictRetries && (errors.Is(e, storage.ErrGenerationConflict) || errors.Is(e, storage.ErrDuplicate)); try++ {
						if e = m.replan(ctx, pn); e != nil {
							break
						}
						if pn.write == nil {
							break // someone else wrote exactly what we wanted
						}
						e = storage.WriteNodes(ctx, m.Placement, m.ids, []storage.NodeWrite{*pn.write})[0]
					}
					if e == nil {
						ok++
						continue
					}
					if !isRowLevel(e) {
						mu.Lock()
						if fatal == nil {
							fatal = e
						}
						mu.Unlock()
						continue
					}
					errs[s.lo+i] = e
				}
				mu.Lock()
				written += ok
				m.finished += len(part)
				if m.Progress != nil {
					m.Progress(m.finished, len(m.plan.Nodes))
				}
				mu.Unlock()
			}
		}()
	}
	for lo := 0; lo < len(nodes); lo += group {
		mu.Lock()
		stop := fatal != nil
		mu.Unlock()
		if stop || ctx.Err() != nil {
			break
		}
		ch <- span{lo, min(lo+group, len(nodes))}
	}
	close(ch)
	wg.Wait()
	if fatal == nil && ctx.Err() != nil {
		fatal = ctx.Err()
	}
	return written, errs, fatal
}
