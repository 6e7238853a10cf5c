package migrate

import (
	"strings"
)

// WrittenLayout is which of rpctl's own layout options a node's provider
// tree shows in Placement: --layout nested (NUMA children holding
// HW_NUMA_ROOT), --shared-storage (the root in the aggregate of one of
// rpctl's sharing providers) and --newton-classes. Nova 26's nova-compute
// writes none of them: its update_provider_tree (ResourceTracker.
// _update_to_placement) reports the flat layout, so a nova-compute that
// starts on such a tree rewrites it (it puts VCPU, MEMORY_MB and DISK_GB
// back on the root beside the NUMA children and the pool: the libvirt
// driver ignores sharing providers, bug #1784020; and deletes the Newton
// classes). Reading the layout back lets `rpctl status` check a node
// against the layout the operator chose, and name the nodes in one.
type WrittenLayout struct {
	Nested bool
	// Pool is the --shared-storage pool the root is in ("" for none).
	Pool          string
	NewtonClasses bool
}

// Nova is true for the layout nova-compute itself reports.
func (l WrittenLayout) Nova() bool { return !l.Nested && l.Pool == "" && !l.NewtonClasses }

// Options are the migrate flags that write l, as an operator types them.
func (l WrittenLayout) Options() string {
	var o []string
	if l.Nested {
		o = append(o, "--layout nested")
	}
	if l.Pool != "" {
		o = append(o, "--shared-storage "+l.Pool+"=...")
	}
	if l.NewtonClasses {
		o = append(o, "--newton-classes")
	}
	return strings.Join(o, " ")
}

// ReadLayout reads the layout options that wrote the tree of the compute
// node provider root from st: NUMA children holding inventory, a pool's
// aggregate on the root (NewtonClasses excepted: which classes the
// Newton spec adds depends on the row, so the caller plans both ways).
func ReadLayout(st *PlacementState, root string) WrittenLayout {
	var l WrittenLayout
	p := st.Providers[root]
	if p == nil {
		return l
	}
	st.index()
	// A switch back to flat empties the NUMA children and keeps them
	// (layout_switch.go): only one holding inventory is the nested layout.
	for _, c := range st.children[root] {
		if cp := st.Providers[c]; cp.Traits[TraitNUMARoot] && len(cp.Inventories) > 0 {
			l.Nested = true
			break
		}
	}
	for _, a := range sortedKeys(p.Aggregates) {
		if ps := poolProviders(st, a); len(ps) > 0 {
			l.Pool = strings.TrimPrefix(ps[0].Name, sharedPoolPrefix)
			break
		}
	}
	return l
}

// ForLayout is c planning the node whose hypervisor_hostname is node
// with the layout l: what `migrate inventory` with l's options plans for
// it. c's own Layout, SharedStorage and NewtonClasses are replaced.
func (c *InventoryConfig) ForLayout(l WrittenLayout, node string) *InventoryConfig {
	lc := *c
	lc.Layout, lc.SharedStorage, lc.NewtonClasses = LayoutFlat, nil, l.NewtonClasses
	if l.Nested {
		lc.Layout = LayoutNested
	}
	if l.Pool != "" {
		lc.SharedStorage = []SharedPool{{Name: l.Pool, Globs: []string{globQuote(node)}}}
	}
	return &lc
}

// globQuote makes s a path.Match pattern matching s alone.
func globQuote(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
