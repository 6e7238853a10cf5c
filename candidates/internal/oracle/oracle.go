// Package oracle is a deliberately simple, exponential re-statement of
// Placement 8.0.0's GET /allocation_candidates, written from Placement's
// Python (placement/objects/allocation_candidate.py and research_context.py)
// and not from rpctl's search: it works on the raw database rows, enumerates
// every combination outright, and prunes nothing. Tests compare the search
// with it on small random clouds, including the queries where the real
// Placement crashes and so cannot be compared with.
//
// It answers as Placement does with its two documented bugs fixed (see the
// docs/candidates.md's deliberate differences): merged amounts are the true sums, and a
// candidate whose unsuffixed group is served only by sharing providers is
// kept for every anchor.
package oracle

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/rpctl/rpctl/candidates"
)

// ErrBadRequest is what a request Placement answers with 400 at search time
// (an unknown resource class or trait) yields.
var ErrBadRequest = errors.New("oracle: Placement answers 400")

const sharingTrait = "MISC_SHARES_VIA_AGGREGATE"

type inventory struct {
	total, reserved, minUnit, maxUnit, step int64
	pyRatio, sqlRatio                       float64
	used                                    int64
}

type provider struct {
	id     int64
	uuid   string
	parent int64 // 0 for a root
	root   int64
	traits map[string]bool
	aggs   map[string]bool
	invs   map[string]*inventory
}

type cloud struct {
	provs    map[int64]*provider
	ids      []int64 // ascending
	classes  map[string]bool
	traits   map[string]bool
	byUUID   map[string]*provider
	hasTrees bool
	sharing  map[int64]bool
}

func load(in *candidates.ModelInput) *cloud {
	c := &cloud{provs: map[int64]*provider{}, classes: map[string]bool{}, traits: map[string]bool{},
		byUUID: map[string]*provider{}, sharing: map[int64]bool{}}
	classByID := map[int64]string{}
	for i, n := range candidates.StandardResourceClasses() {
		classByID[int64(i)] = n
		c.classes[n] = true
	}
	for _, r := range in.ResourceClasses {
		if !c.classes[r.Name] {
			classByID[r.ID] = r.Name
			c.classes[r.Name] = true
		}
	}
	traitByID := map[int64]string{}
	for _, r := range in.Traits {
		traitByID[r.ID] = r.Name
		c.traits[r.Name] = true
	}
	aggByID := map[int64]string{}
	for _, r := range in.Aggregates {
		aggByID[r.ID] = r.Name
	}
	for _, r := range in.Providers {
		p := &provider{id: r.ID, uuid: r.UUID, parent: r.ParentID, traits: map[string]bool{},
			aggs: map[string]bool{}, invs: map[string]*inventory{}}
		c.provs[r.ID] = p
		c.byUUID[r.UUID] = p
		c.ids = append(c.ids, r.ID)
		if r.ParentID != 0 {
			c.hasTrees = true
		}
	}
	slices.Sort(c.ids)
	for _, p := range c.provs {
		r := p
		for r.parent != 0 {
			r = c.provs[r.parent]
		}
		p.root = r.id
	}
	for _, r := range in.Inventories {
		sql := r.AllocationRatio
		if in.Ratios == candidates.RatioMySQLFloat {
			sql = r.SQLRatio
		}
		c.provs[r.ProviderID].invs[classByID[r.ResourceClassID]] = &inventory{total: r.Total, reserved: r.Reserved,
			minUnit: r.MinUnit, maxUnit: r.MaxUnit, step: r.StepSize, pyRatio: r.AllocationRatio, sqlRatio: sql}
	}
	for _, r := range in.Usages {
		if p := c.provs[r.ProviderID]; p != nil {
			if inv := p.invs[classByID[r.ResourceClassID]]; inv != nil {
				inv.used += r.Used
			}
		}
	}
	for _, r := range in.ProviderTraits {
		c.provs[r.ProviderID].traits[traitByID[r.OtherID]] = true
		if traitByID[r.OtherID] == sharingTrait {
			c.sharing[r.ProviderID] = true
		}
	}
	for _, r := range in.ProviderAggregates {
		c.provs[r.ProviderID].aggs[aggByID[r.OtherID]] = true
	}
	return c
}

// capacity is int((total - reserved) * allocation_ratio) in Python.
func (inv *inventory) capacity() int64 {
	return int64(math.Trunc(float64(inv.total-inv.reserved) * inv.pyRatio))
}

// sqlFits is _capacity_check_clause, evaluated in doubles as the server does.
func (inv *inventory) sqlFits(amount int64) bool {
	return float64(inv.used+amount) <= float64(inv.total-inv.reserved)*inv.sqlRatio &&
		inv.minUnit <= amount && inv.maxUnit >= amount && inv.step != 0 && amount%inv.step == 0
}

// part is one provider giving one class.
type part struct {
	prov   int64
	class  string
	amount int64
}

// areq is an allocation request of one group, or of all of them merged.
type areq struct {
	anchor   int64
	parts    []part
	mappings map[string][]int64 // suffix -> providers
	sameProv bool
}

// Candidates returns Placement's allocation requests for req on the cloud in,
// unlimited, each as a canonical string (see Canon), sorted; or ErrBadRequest.
func Candidates(in *candidates.ModelInput, req *candidates.Request) ([]string, error) {
	c := load(in)
	// RequestWideSearchContext: root_required.
	var anchors map[int64]bool
	if len(req.RootRequired)+len(req.RootForbidden) > 0 {
		for _, t := range append(slices.Clone(req.RootRequired), req.RootForbidden...) {
			if !c.traits[t] {
				return nil, ErrBadRequest
			}
		}
		anchors = map[int64]bool{}
		for _, id := range c.ids {
			p := c.provs[id]
			if p.parent != 0 {
				continue
			}
			ok := true
			for _, t := range req.RootRequired {
				ok = ok && p.traits[t]
			}
			for _, t := range req.RootForbidden {
				ok = ok && !p.traits[t]
			}
			if ok {
				anchors[id] = true
			}
		}
		if len(anchors) == 0 {
			return nil, nil
		}
	}
	viable := func(root int64) bool { return anchors == nil || anchors[root] }

	perGroup := make([][]areq, len(req.Groups))
	for gi := range req.Groups {
		g := &req.Groups[gi]
		reqs, err := c.group(g, viable)
		if err != nil {
			return nil, err
		}
		if len(reqs) == 0 {
			return nil, nil // Placement stops at the first empty group
		}
		perGroup[gi] = reqs
	}

	// _merge_candidates: per anchor, one request per group, every way.
	suffixed := 0
	for _, g := range req.Groups {
		if g.Suffix != "" {
			suffixed++
		}
	}
	out := map[string]bool{}
	roots := map[int64]bool{}
	for _, reqs := range perGroup {
		for _, r := range reqs {
			roots[r.anchor] = true
		}
	}
	for root := range roots {
		lists := make([][]areq, len(perGroup))
		for gi, reqs := range perGroup {
			for _, r := range reqs {
				if r.anchor == root {
					lists[gi] = append(lists[gi], r)
				}
			}
		}
		combo := make([]areq, len(lists))
		var walk func(d int)
		walk = func(d int) {
			if d < len(lists) {
				for _, r := range lists[d] {
					combo[d] = r
					walk(d + 1)
				}
				return
			}
			if merged, ok := c.merge(req, combo, suffixed); ok {
				out[c.canon(merged)] = true
			}
		}
		walk(0)
	}
	res := make([]string, 0, len(out))
	for k := range out {
		res = append(res, k)
	}
	slices.Sort(res)
	return res, nil
}

func (c *cloud) merge(req *candidates.Request, combo []areq, suffixed int) (areq, bool) {
	if req.GroupPolicy == "isolate" {
		seen := map[int64]bool{}
		for _, r := range combo {
			if r.sameProv {
				for _, ps := range r.mappings {
					seen[ps[0]] = true
				}
			}
		}
		if len(seen) != suffixed {
			return areq{}, false
		}
	}
	for _, ss := range req.SameSubtree {
		set := map[int64]bool{}
		for _, r := range combo {
			for _, s := range ss {
				for _, p := range r.mappings[s] {
					set[p] = true
				}
			}
		}
		if !c.sameSubtree(set) {
			return areq{}, false
		}
	}
	sum := map[[2]string]int64{}
	var keys [][2]string
	maps := map[string]map[int64]bool{}
	for _, r := range combo {
		for _, pt := range r.parts {
			k := [2]string{fmt.Sprint(pt.prov), pt.class}
			if _, ok := sum[k]; !ok {
				keys = append(keys, k)
			}
			sum[k] += pt.amount
		}
		for s, ps := range r.mappings {
			if maps[s] == nil {
				maps[s] = map[int64]bool{}
			}
			for _, p := range ps {
				maps[s][p] = true
			}
		}
	}
	m := areq{anchor: combo[0].anchor, mappings: map[string][]int64{}}
	for _, k := range keys {
		var id int64
		fmt.Sscan(k[0], &id)
		inv := c.provs[id].invs[k[1]]
		if inv.used+sum[k] > inv.capacity() || sum[k] > inv.maxUnit {
			return areq{}, false
		}
		m.parts = append(m.parts, part{id, k[1], sum[k]})
	}
	for s, set := range maps {
		for p := range set {
			m.mappings[s] = append(m.mappings[s], p)
		}
	}
	// exclude_nested_providers before 1.29: no two providers of one tree.
	if req.Microversion < 29 && c.hasTrees {
		rootOf := map[int64]int64{}
		for _, pt := range m.parts {
			rootOf[pt.prov] = c.provs[pt.prov].root
		}
		distinct := map[int64]bool{}
		for _, r := range rootOf {
			distinct[r] = true
		}
		if len(distinct) != len(rootOf) {
			return areq{}, false
		}
	}
	return m, true
}

// sameSubtree: one of the providers is an ancestor-or-self of all of them.
func (c *cloud) sameSubtree(set map[int64]bool) bool {
	if len(set) <= 1 {
		return true
	}
	for top := range set {
		all := true
		for p := range set {
			q := p
			for q != 0 && q != top {
				q = c.provs[q].parent
			}
			all = all && q == top
		}
		if all {
			return true
		}
	}
	return false
}

// group returns one group's allocation requests, or nil when it has none
// (Placement's ResourceProviderNotFound included).
func (c *cloud) group(g *candidates.RequestGroup, viable func(int64) bool) ([]areq, error) {
	for rc := range g.Resources {
		if !c.classes[rc] {
			return nil, ErrBadRequest
		}
	}
	// member_of: providers in every ANDed set (their own aggregates).
	var inAggs map[int64]bool
	if len(g.MemberOf) > 0 {
		inAggs = map[int64]bool{}
		for _, id := range c.ids {
			ok := true
			for _, set := range g.MemberOf {
				ok = ok && slices.ContainsFunc(set, func(a string) bool { return c.provs[id].aggs[a] })
			}
			if ok {
				inAggs[id] = true
			}
		}
		if len(inAggs) == 0 {
			return nil, nil
		}
	}
	for _, set := range g.RequiredTraits {
		for _, t := range set {
			if !c.traits[t] {
				return nil, ErrBadRequest
			}
		}
	}
	for _, t := range g.ForbiddenTraits {
		if !c.traits[t] {
			return nil, ErrBadRequest
		}
	}
	treeRoot := int64(0)
	if g.InTree != "" {
		p := c.byUUID[g.InTree]
		if p == nil {
			return nil, nil
		}
		treeRoot = p.root
	}
	// get_providers_with_resource per class.
	withRes := map[string][]int64{}
	for rc, n := range g.Resources {
		for _, id := range c.ids {
			p := c.provs[id]
			if inv := p.invs[rc]; inv != nil && inv.sqlFits(n) && (treeRoot == 0 || p.root == treeRoot) {
				withRes[rc] = append(withRes[rc], id)
			}
		}
		if len(withRes[rc]) == 0 {
			return nil, nil
		}
	}
	forbiddenAgg := func(p *provider) bool {
		return slices.ContainsFunc(g.ForbiddenAggs, func(a string) bool { return p.aggs[a] })
	}
	hasForbidden := func(p *provider) bool {
		return slices.ContainsFunc(g.ForbiddenTraits, func(t string) bool { return p.traits[t] })
	}
	holds := func(traits map[string]bool) bool {
		for _, set := range g.RequiredTraits {
			if !slices.ContainsFunc(set, func(t string) bool { return traits[t] }) {
				return false
			}
		}
		return true
	}
	suffixed := g.Suffix != ""
	if suffixed || (len(c.sharing) == 0 && !c.hasTrees) {
		return c.single(g, inAggs, withRes, viable, forbiddenAgg, hasForbidden, holds), nil
	}
	return c.multi(g, inAggs, withRes, treeRoot, viable, forbiddenAgg, hasForbidden, holds), nil
}

// single is get_provider_ids_matching + _alloc_candidates_single_provider:
// one provider gives everything and holds the traits and aggregates itself.
func (c *cloud) single(g *candidates.RequestGroup, inAggs map[int64]bool, withRes map[string][]int64, viable func(int64) bool,
	forbiddenAgg, hasForbidden func(*provider) bool, holds func(map[string]bool) bool) []areq {
	// A resourceless group whose only filters are forbidden ones (or
	// in_tree) matches nothing in Placement: its "allowed" set is empty.
	positive := len(g.RequiredTraits) > 0 || len(g.MemberOf) > 0
	if len(g.Resources) == 0 && !positive {
		return nil
	}
	var out []areq
	for _, id := range c.ids {
		p := c.provs[id]
		ok := holds(p.traits) && !hasForbidden(p) && !forbiddenAgg(p) && (inAggs == nil || inAggs[id])
		for rc := range g.Resources {
			ok = ok && slices.Contains(withRes[rc], id)
		}
		if !ok {
			continue
		}
		r := areq{anchor: p.root, mappings: map[string][]int64{g.Suffix: {id}}, sameProv: g.Suffix != ""}
		for rc, n := range g.Resources {
			r.parts = append(r.parts, part{id, rc, n})
		}
		if viable(p.root) {
			out = append(out, r)
		}
		if c.sharing[id] {
			for a := range c.sharingAnchors(id) {
				if a != p.root && viable(a) {
					cp := r
					cp.anchor = a
					out = append(out, cp)
				}
			}
		}
	}
	return out
}

// sharingAnchors are the roots of every provider sharing an aggregate with p.
func (c *cloud) sharingAnchors(p int64) map[int64]bool {
	out := map[int64]bool{}
	for a := range c.provs[p].aggs {
		for _, q := range c.provs {
			if q.aggs[a] {
				out[q.root] = true
			}
		}
	}
	return out
}

// multi is get_trees_matching_all + _alloc_candidates_multiple_providers:
// per anchor tree, one provider (of the tree or sharing into it) per class,
// the contributing providers together holding the traits.
func (c *cloud) multi(g *candidates.RequestGroup, inAggs map[int64]bool, withRes map[string][]int64, treeRoot int64, viable func(int64) bool,
	forbiddenAgg, hasForbidden func(*provider) bool, holds func(map[string]bool) bool) []areq {
	if len(g.RequiredTraits) > 0 {
		// The early exit when no provider has any required trait at all.
		any := false
		for _, p := range c.provs {
			for _, set := range g.RequiredTraits {
				for _, t := range set {
					any = any || p.traits[t]
				}
			}
		}
		if !any {
			return nil
		}
	}
	type cand struct{ prov, anchor int64 }
	classes := make([]string, 0, len(g.Resources))
	for rc := range g.Resources {
		classes = append(classes, rc)
	}
	slices.Sort(classes)
	perClass := map[string][]cand{}
	for _, rc := range classes {
		set := map[cand]bool{}
		for _, id := range withRes[rc] {
			set[cand{id, c.provs[id].root}] = true
		}
		if treeRoot == 0 {
			for _, id := range withRes[rc] {
				if c.sharing[id] && (inAggs == nil || inAggs[id]) {
					for a := range c.sharingAnchors(id) {
						set[cand{id, a}] = true
					}
				}
			}
		}
		var kept []cand
		for k := range set {
			p, root := c.provs[k.prov], c.provs[k.anchor]
			if !viable(k.anchor) {
				continue
			}
			if inAggs != nil && !inAggs[k.prov] && !inAggs[root.id] {
				continue
			}
			if forbiddenAgg(p) || forbiddenAgg(root) {
				continue
			}
			kept = append(kept, k)
		}
		if len(kept) == 0 {
			return nil
		}
		perClass[rc] = kept
	}
	anchorsAll := map[int64]bool{}
	for _, k := range perClass[classes[0]] {
		anchorsAll[k.anchor] = true
	}
	var out []areq
	for anchor := range anchorsAll {
		lists := make([][]int64, len(classes))
		ok := true
		for i, rc := range classes {
			for _, k := range perClass[rc] {
				if k.anchor == anchor {
					lists[i] = append(lists[i], k.prov)
				}
			}
			ok = ok && len(lists[i]) > 0
		}
		if !ok {
			continue
		}
		seen := map[string]bool{}
		pick := make([]int64, len(classes))
		var walk func(d int)
		walk = func(d int) {
			if d < len(classes) {
				for _, p := range lists[d] {
					pick[d] = p
					walk(d + 1)
				}
				return
			}
			traits := map[string]bool{}
			provs := map[int64]bool{}
			for _, p := range pick {
				provs[p] = true
				if hasForbidden(c.provs[p]) {
					return
				}
				for t := range c.provs[p].traits {
					traits[t] = true
				}
			}
			if !holds(traits) {
				return
			}
			r := areq{anchor: anchor, mappings: map[string][]int64{"": nil}}
			for i, rc := range classes {
				r.parts = append(r.parts, part{pick[i], rc, g.Resources[rc]})
			}
			for p := range provs {
				r.mappings[""] = append(r.mappings[""], p)
			}
			if k := c.canon(r); !seen[k] {
				seen[k] = true
				out = append(out, r)
			}
		}
		walk(0)
	}
	return out
}

// canon writes a request as "uuid:CLASS=n,... | suffix=uuid+uuid;...", parts
// and mappings sorted; the anchor is not part of it (Placement's equality).
func (c *cloud) canon(r areq) string {
	parts := make([]string, len(r.parts))
	for i, pt := range r.parts {
		parts[i] = fmt.Sprintf("%s:%s=%d", c.provs[pt.prov].uuid, pt.class, pt.amount)
	}
	maps := make(map[string][]string, len(r.mappings))
	for s, ps := range r.mappings {
		for _, p := range ps {
			maps[s] = append(maps[s], c.provs[p].uuid)
		}
	}
	return Canon(parts, maps)
}

// Canon is the canonical form of one allocation request: parts as
// "uuid:CLASS=amount", mappings as suffix -> provider uuids.
func Canon(parts []string, mappings map[string][]string) string {
	parts = slices.Clone(parts)
	slices.Sort(parts)
	var ms []string
	for s, ps := range mappings {
		ps = slices.Clone(ps)
		slices.Sort(ps)
		ms = append(ms, s+"="+strings.Join(ps, "+"))
	}
	slices.Sort(ms)
	return strings.Join(parts, ",") + " | " + strings.Join(ms, ";")
}
