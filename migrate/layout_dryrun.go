package migrate

import (
	"context"
	"errors"
	"slices"
)

// PlannedMove is an allocation a layout switch would move, as --dry-run
// lists it: the node, the consumer, the class and amount, and the
// providers it leaves and joins (names as the new layout gives them).
type PlannedMove struct {
	Cell     string `json:"cell,omitempty"`
	NodeID   int64  `json:"compute_node_id,omitempty"`
	Host     string `json:"hypervisor_hostname"`
	Consumer string `json:"consumer"`
	Class    string `json:"resource_class"`
	Used     int64  `json:"used"`
	From     string `json:"from_provider"`
	FromName string `json:"from_provider_name"`
	To       string `json:"to_provider"`
	ToName   string `json:"to_provider_name"`
}

// PlanMoves works out, writing nothing, the allocations the run would move
// for the plan's nodes that switch layout, in plan order. The run writes a
// node's moves in its transaction, so each node sees the moves of the
// nodes written before it: here the moves planned for earlier nodes count
// on their targets in the same way. A node whose switch would be refused
// is marked bad with the run's reason (RowError names it), as the run
// skips it.
func (p *InventoryPlan) PlanMoves(ctx context.Context, placement Placement, cfg *InventoryConfig) ([]PlannedMove, error) {
	names := map[string]string{}
	for _, s := range p.Shared {
		for _, ch := range s.Changes {
			names[ch.UUID] = ch.Name
		}
	}
	// The pools' sharing providers are written before any node: a node
	// joining one moves its DISK_GB allocations against the capacity
	// the plan gives it, not the one Placement holds now.
	var poolCap map[[2]string]int64
	for _, s := range p.Shared {
		for _, pw := range s.write.Providers {
			for rc, v := range pw.AddInventories {
				poolCap = setCap(poolCap, pw.UUID, rc, v.Total, v.Reserved, v.AllocationRatio)
			}
			for rc, v := range pw.UpdateInventories {
				poolCap = setCap(poolCap, pw.UUID, rc, v.Total, v.Reserved, v.AllocationRatio)
			}
		}
	}
	pending := map[[2]string]int64{}
	var out []PlannedMove
	var switching []*PlannedNode
	for _, pn := range p.Nodes {
		if pn.err == nil && pn.write != nil && len(pn.write.needs) > 0 {
			switching = append(switching, pn)
		}
	}
	// The allocations are read for dryRunReads nodes at a time (issue 35:
	// a read per node was five round trips per node); nothing is written
	// meanwhile, so each node is planned from what its own read would
	// have found, with the earlier nodes' moves counted (pending).
	const dryRunReads = 100
	var read *switchRead
	for k, pn := range switching {
		if k%dryRunReads == 0 {
			var ws []*NodeWrite
			for _, n := range switching[k:min(k+dryRunReads, len(switching))] {
				ws = append(ws, n.write)
			}
			var err error
			if read, err = readSwitches(ctx, placement, ws); err != nil {
				return nil, err
			}
		}
		for key, c := range poolCap {
			if _, own := pn.write.capacity[key]; !own {
				pn.write.capacity[key] = c
			}
		}
		var err error
		if read == nil {
			err = cfg.planMovesAfter(ctx, placement, pn.write, pending) // no AllocationReader: it says so
		} else {
			err = cfg.placeMoves(pn.write, read.rows, read.usage, read.invs, pending)
		}
		if err != nil {
			if errors.Is(err, ErrLayoutSwitch) {
				pn.fail(err)
				continue
			}
			return nil, err
		}
		for _, d := range pn.plan.Providers {
			names[d.UUID] = d.Name
		}
		for _, ch := range pn.Changes {
			names[ch.UUID] = ch.Name
		}
		for _, m := range pn.write.Moves {
			pending[[2]string{m.From, m.Class}] -= m.Used
			pending[[2]string{m.To, m.Class}] += m.Used
			out = append(out, PlannedMove{Cell: pn.Cell, NodeID: pn.NodeID, Host: pn.Host, Consumer: m.Consumer, Class: m.Class, Used: m.Used,
				From: m.From, FromName: names[m.From], To: m.To, ToName: names[m.To]})
		}
	}
	// A pool a node leaves may be written by nothing in the plan.
	var unnamed []string
	for _, m := range out {
		for _, u := range []string{m.From, m.To} {
			if names[u] == "" && !slices.Contains(unnamed, u) {
				unnamed = append(unnamed, u)
			}
		}
	}
	if len(unnamed) > 0 {
		st, err := placement.LoadProviders(ctx, unnamed, nil)
		if err != nil {
			return nil, err
		}
		for u, pp := range st.Providers {
			names[u] = pp.Name
		}
		for i := range out {
			out[i].FromName, out[i].ToName = names[out[i].From], names[out[i].To]
		}
	}
	return out, nil
}

func setCap(m map[[2]string]int64, provider, class string, total, reserved int64, ratio float64) map[[2]string]int64 {
	if m == nil {
		m = map[[2]string]int64{}
	}
	m[[2]string{provider, class}] = capacityOf(total, reserved, ratio)
	return m
}
