package status

import (
	"context"
	"fmt"
	"strings"

	"github.com/rpctl/rpctl/migrate"
)

// CheckComputeInventories is the check that a compute node's providers
// hold what the node's nova-compute would report.
const CheckComputeInventories = "Compute Node Inventories"

// InventoryMismatch is one inventory of a compute node's provider tree
// that differs from what the node's nova-compute would report for its row
// and nova.conf, as the inventory migration plans it (migrate.PlanRow).
type InventoryMismatch struct {
	Cell, Host string
	// Provider is the provider's name: the node's root, or one of its PCI
	// device children.
	Provider string
	Class    string
	// What is how it differs: "missing", "not reported by nova-compute",
	// or the fields, Placement's value -> the reported one.
	What string
	// Owner is the virt driver capability trait on the node's root
	// provider ("" when no nova-compute has reported it yet).
	Owner string
}

func (m InventoryMismatch) String() string {
	s := m.Host
	if m.Provider != m.Host {
		s += " " + m.Provider
	}
	return fmt.Sprintf("%s %s %s", s, m.Class, m.What)
}

// computeConfig is the config the nodes are planned with: Compute, or
// nova.conf's options as the release's nova-compute reads them.
func (e *Env) computeConfig() (*migrate.InventoryConfig, error) {
	if e.ComputeErr != nil {
		return nil, e.ComputeErr
	}
	if e.Compute != nil {
		return e.Compute, nil
	}
	c, err := migrate.ComputeConfig(e.Options)
	if err != nil {
		return nil, err
	}
	if c.Ratios, err = migrate.RatiosFor(c.Ratios, e.Release); err != nil {
		return nil, err
	}
	return &c, nil
}

// LayoutNode is a compute node whose tree rpctl wrote with layout
// options nova-compute does not report (migrate.WrittenLayout).
type LayoutNode struct {
	Cell, Host string
	Layout     migrate.WrittenLayout
}

// InventoryMismatches plans every live compute node whose root provider
// exists as the inventory migration does (with its host's config) and
// compares the plan's inventories (the classes nova-compute manages, every
// field, the ratio resolved as the migration resolves it) with
// Placement's. A node nova-compute does not own yet is planned with the
// layout options its tree shows (migrate.ReadLayout; --newton-classes when
// that plan is the closer one): an operator's --layout nested or
// --shared-storage is a choice, checked against its own plan and listed in
// layouts; a node nova-compute owns is planned as nova-compute reports it
// (the flat layout), since that is what it writes. bad names the rows that
// cannot be planned; errs are the cells (or Placement) that could not be
// read; fatal is a config that cannot be planned with or a Placement that
// cannot be read, when nothing is compared.
func (e *Env) InventoryMismatches(ctx context.Context) (out []InventoryMismatch, layouts []LayoutNode, bad []string, errs []error, fatal error) {
	cfg, err := e.computeConfig()
	if err != nil {
		return nil, nil, nil, nil, err
	}
	if e.Placement == nil {
		return nil, nil, nil, nil, e.placementErr()
	}
	st, err := e.Placement.LoadPlacementState(ctx)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	errs = append(errs, e.CellErrs...)
	for _, c := range e.Cells {
		cell := cellName(c)
		err := migrate.ScanNodeRows(ctx, c, cfg, func(r migrate.NodeRow) {
			if r.Node.UUID == nil || st.Providers[*r.Node.UUID] == nil {
				return // the Compute Node UUIDs and Resource Providers checks' business
			}
			host := hostOf(NodeRef{ID: r.Node.ID, Host: deref(r.Node.Host), Node: deref(r.Node.HypervisorHostname)})
			ms, l, err := compareNode(cfg, cell, r, st)
			if err != nil {
				bad = append(bad, fmt.Sprintf("%s: %s (%v)", cell, host, err))
				return
			}
			for i := range ms {
				ms[i].Cell, ms[i].Host = cell, host
			}
			out = append(out, ms...)
			if !l.Nova() {
				layouts = append(layouts, LayoutNode{Cell: cell, Host: host, Layout: l})
			}
		})
		if err != nil {
			errs = append(errs, err)
		}
	}
	return out, layouts, bad, errs, nil
}

// compareNode plans the node's row with the layout its tree was written
// with (see InventoryMismatches) and lists the inventories of the plan's
// providers that Placement holds otherwise: migrate's Diff, the very
// comparison a re-run of the migration writes from, read for its
// inventories only (traits and aggregates are other checks' business).
func compareNode(cfg *migrate.InventoryConfig, cell string, r migrate.NodeRow, st *migrate.PlacementState) ([]InventoryMismatch, migrate.WrittenLayout, error) {
	root := *r.Node.UUID
	owner := migrate.NovaComputeOwner(st.Providers[root].Traits)
	var l migrate.WrittenLayout
	if owner == "" {
		l = migrate.ReadLayout(st, root)
	}
	var best []InventoryMismatch
	bestLayout := l
	// Without, then with the Newton classes (only rpctl writes them, and
	// only on a tree nova-compute does not own): the closer plan wins,
	// Nova's on a tie.
	for _, newton := range []bool{false, true} {
		if newton && owner != "" {
			break
		}
		l.NewtonClasses = newton
		ms, err := diffNode(cfg.ForLayout(l, deref(r.Node.HypervisorHostname)), cell, r, st, owner, l)
		if err != nil {
			return nil, l, err
		}
		if !newton || len(ms) < len(best) {
			best, bestLayout = ms, l
		}
		if len(best) == 0 {
			break
		}
	}
	return best, bestLayout, nil
}

func diffNode(cfg *migrate.InventoryConfig, cell string, r migrate.NodeRow, st *migrate.PlacementState, owner string, l migrate.WrittenLayout) ([]InventoryMismatch, error) {
	who := "nova-compute"
	if !l.Nova() {
		who = "rpctl's " + l.Options()
	}
	p, err := cfg.PlanRow(cell, r)
	if err != nil {
		return nil, err
	}
	_, changes, err := cfg.Diff(p.Providers, st)
	if err != nil {
		return nil, err
	}
	var out []InventoryMismatch
	for _, ch := range changes {
		for _, ic := range ch.Inventories {
			m := InventoryMismatch{Provider: ch.Name, Class: ic.ResourceClass, Owner: owner}
			switch {
			case ic.Before == nil && ch.Action == "create":
				m.What = fmt.Sprintf("missing (no provider %s)", ch.Name)
			case ic.Before == nil:
				m.What = fmt.Sprintf("missing (%s reports total %d)", who, ic.After.Total)
			case ic.After == nil:
				m.What = fmt.Sprintf("total %d not reported by %s", ic.Before.Total, who)
			default:
				m.What = migrate.InventoryDelta(ic.Before, ic.After)
			}
			out = append(out, m)
		}
	}
	return out, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func (e *Env) checkComputeInventories(ctx context.Context) (Code, string, error) {
	ms, layouts, bad, errs, fatal := e.InventoryMismatches(ctx)
	if fatal != nil {
		return unavailable(append([]error{fatal}, e.CellErrs...)...)
	}
	cells := func() ([]perCell, map[string]int) {
		pcs := make([]perCell, len(e.Cells))
		idx := map[string]int{}
		for i, cell := range e.cellOrder() {
			pcs[i].cell, idx[cell] = cell, i
		}
		return pcs, idx
	}
	pcs, idx := cells()
	owned, chosen := 0, 0
	for _, m := range ms {
		pc := &pcs[idx[m.Cell]]
		pc.count++
		if len(pc.first) < e.sample() {
			pc.first = append(pc.first, m.String())
		}
		if m.Owner != "" {
			owned++
		}
	}
	var msgs []string
	if n := len(ms); n > 0 {
		hint := `Run "rpctl migrate inventory" with the same nova.conf (and --compute-config-dir)`
		if len(layouts) > 0 {
			hint += " and the same layout options"
		}
		if owned > 0 {
			hint += fmt.Sprintf("; %d of them on providers a nova-compute already owns, which it rewrites at its next update (check that host's nova.conf, or --force)", owned)
		}
		msgs = append(msgs, fmt.Sprintf("%s of compute nodes' providers %s from what the node's nova-compute would report for its compute_nodes row and nova.conf, or the layout rpctl wrote it with (Placement's value -> planned: %s). %s.",
			plural(n, "inventory", "inventories"), map[bool]string{true: "differs", false: "differ"}[n == 1], joinCells(pcs), hint))
	}
	if n := len(bad); n > 0 {
		msgs = append(msgs, fmt.Sprintf("%s cannot be planned or compared with Placement: %s.", plural(n, "compute node row", "compute node rows"), listSome(bad[:min(n, e.sample())], n)))
	}
	code := Success
	if len(msgs) > 0 {
		code = Warning
	}
	// The layouts an operator chose are not a fault, but a nova-compute
	// that starts on them rewrites them: say so even on Success.
	if len(layouts) > 0 {
		pcs, idx := cells()
		byOpts := map[string]int{}
		var opts []string
		for _, l := range layouts {
			pc := &pcs[idx[l.Cell]]
			pc.count++
			if len(pc.first) < e.sample() {
				pc.first = append(pc.first, l.Host)
			}
			o := l.Layout.Options()
			if byOpts[o] == 0 {
				opts = append(opts, o)
			}
			byOpts[o]++
		}
		chosen = len(layouts)
		for i, o := range opts {
			opts[i] = fmt.Sprintf("%d with %s", byOpts[o], o)
		}
		msgs = append(msgs, fmt.Sprintf("%s a layout rpctl wrote on request (%s: %s), checked against that layout. nova-compute reports only the flat layout and rewrites these when it starts (VCPU, MEMORY_MB and DISK_GB back on the root, counted twice beside NUMA children or a sharing provider): run \"rpctl migrate inventory\" without those options before starting it.",
			plural(chosen, "compute node holds", "compute nodes hold"), strings.Join(opts, ", "), joinCells(pcs)))
	}
	return e.withErrors(code, strings.Join(msgs, " "), errs)
}
