package status

import (
	"fmt"
	"slices"
	"strings"
)

// Provider trees, as rpctl's layouts build them: a compute node's
// VCPU/MEMORY_MB/DISK_GB may sit on its root, on children (the nested
// layout's NUMA cells) or, for DISK_GB, on a sharing provider of the root's
// aggregates (--shared-storage). The checks look at the whole tree.

type treeIndex struct {
	byUUID   map[string]*ProviderTotals
	children map[string][]string // parent uuid -> child uuids
	sharing  map[string][]string // aggregate uuid -> sharing provider uuids
}

func (e *Env) providerTrees(provs []ProviderTotals) *treeIndex {
	t := &treeIndex{byUUID: e.providersByUUID(provs), children: map[string][]string{}, sharing: map[string][]string{}}
	for i := range provs {
		p := &provs[i]
		if p.ParentUUID != "" {
			t.children[p.ParentUUID] = append(t.children[p.ParentUUID], p.UUID)
		}
		if p.Sharing {
			for _, a := range p.Aggregates {
				t.sharing[a] = append(t.sharing[a], p.UUID)
			}
		}
	}
	return t
}

// tree is the node's provider and its descendants, parents first.
func (t *treeIndex) tree(root string) []string {
	out := []string{root}
	for i := 0; i < len(out); i++ {
		out = append(out, t.children[out[i]]...)
	}
	return out
}

// shared is the sharing providers of the root's aggregates (itself
// excepted).
func (t *treeIndex) shared(root string) []string {
	var out []string
	p := t.byUUID[root]
	if p == nil {
		return nil
	}
	for _, a := range p.Aggregates {
		for _, s := range t.sharing[a] {
			if s != root && !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	return out
}

func classTotal(p *ProviderTotals, i int) *int64 { return placementTotals(*p)[i] }

// holders names, per legacy class, the providers of the node's tree and
// its sharing providers that have an inventory of it.
func (t *treeIndex) holders(root string) [3][]string {
	var out [3][]string
	for _, u := range append(t.tree(root), t.shared(root)...) {
		p := t.byUUID[u]
		if p == nil {
			continue
		}
		for i := range legacyClasses {
			if classTotal(p, i) != nil {
				out[i] = append(out[i], u)
			}
		}
	}
	return out
}

// doubled describes the classes the node's tree offers twice: on a
// provider and on one of its descendants (a root and its NUMA child), or
// in the tree and on a sharing provider. Siblings holding the same class
// (the NUMA cells) split it; they do not repeat it.
func (t *treeIndex) doubled(root string) string {
	var out []string
	name := func(u string) string {
		if p := t.byUUID[u]; p != nil && p.Name != "" {
			return p.Name
		}
		return u
	}
	for i, rc := range legacyClasses {
		var local []string
		for _, u := range t.tree(root) {
			if p := t.byUUID[u]; p != nil && classTotal(p, i) != nil {
				local = append(local, u)
			}
		}
		for _, u := range local {
			var under []string
			for _, d := range t.tree(u)[1:] {
				if slices.Contains(local, d) {
					under = append(under, name(d))
				}
			}
			if len(under) > 0 {
				out = append(out, fmt.Sprintf("%s on %s and under it on %s", rc, name(u), strings.Join(under, ", ")))
			}
		}
		if len(local) > 0 {
			for _, s := range t.shared(root) {
				if p := t.byUUID[s]; p != nil && classTotal(p, i) != nil {
					out = append(out, fmt.Sprintf("%s on %s and on the sharing provider %s", rc, name(local[0]), name(s)))
				}
			}
		}
	}
	return strings.Join(out, "; ")
}
