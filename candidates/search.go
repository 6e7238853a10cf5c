package candidates

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
)

// Options tune the search beyond what Placement 8.0.0's API exposes. They
// correspond to later Placement's [placement]max_allocation_candidates,
// allocation_candidates_generation_strategy and
// randomize_allocation_candidates.
type Options struct {
	// MaxCandidates stops generation once that many distinct candidates
	// exist (0 = unlimited). It applies before Request.Limit.
	MaxCandidates int
	// Strategy is "depth-first" (default: all candidates of one anchor, then
	// the next) or "breadth-first" (one candidate per anchor per turn), which
	// spreads a capped result over more hosts.
	Strategy string
	// Randomize returns a random sample of Limit candidates (or a shuffle of
	// all of them), drawn from a generator seeded with Seed.
	Randomize bool
	Seed      int64
}

// Amount is one provider giving one resource class.
type Amount struct {
	Provider int32 // provider index in the Model
	Class    int32 // resource class index in the Model
	Amount   int64
}

// Mapping is the 1.34 "mappings" entry of one request group.
type Mapping struct {
	Suffix    string
	Providers []int32 // ascending
}

// Candidate is one allocation request.
type Candidate struct {
	// Anchor is the root provider the candidate was built around (the tree
	// that is not a sharing provider's, unless only sharing providers are
	// involved).
	Anchor    int32
	Resources []Amount  // consolidated, ordered by provider then class
	Mappings  []Mapping // in request group order
}

// Result is the answer to one request: candidates plus the providers whose
// summaries Placement would return.
type Result struct {
	model      *Model
	Candidates []Candidate
	// Summaries are provider indexes, ascending.
	Summaries []int32
	// requested are the resource classes named by any group, for the
	// pre-1.27 summaries.
	requested []int32
}

// Model returns the model the result was computed from.
func (r *Result) Model() *Model { return r.model }

// Order of results, without Options.Randomize: anchors ascending by the
// internal index of their root provider (i.e. database id), and within an
// anchor the odometer order over request groups in request order, each
// group's own candidates being ordered by provider index (single-provider
// groups) or by the product over resource classes in class-id order with
// providers ascending (the unsuffixed group on trees / sharing). Breadth-first
// interleaves the anchors in that order. Placement instead returns
// list(set()), whose order is an accident of hashing; so when Limit or
// MaxCandidates cut a result, our first N are a valid answer but not
// necessarily Placement's first N — compare limited results by count and
// validity only.

type groupCtx struct {
	g         *RequestGroup
	suffixed  bool
	classes   []int32 // ascending class index (= class id order)
	amounts   []int64
	required  [][]int32
	forbidden []int32
	inAggs    bitset // nil when member_of is absent
	badAggs   bitset // nil when no forbidden aggregates
	treeRoot  int32
	withRes   [][]int32 // per class: providers with room for the amount
}

// gcand is a per-group allocation request.
type gcand struct {
	anchor int32
	res    []Amount // ascending (provider, class)
	provs  []int32  // ascending distinct providers (the group's mapping)
}

type searcher struct {
	m           *Model
	req         *Request
	opt         Options
	anchorOK    bitset // nil: every root may anchor
	nestedAware bool
}

func emptyResult(m *Model) *Result { return &Result{model: m} }

func searchBadRequest(msg string) *APIError {
	return &APIError{Status: 400, Code: DefaultErrorCode, Message: msg}
}

// Candidates answers GET /allocation_candidates for req, following Placement
// 8.0.0's algorithm (objects/allocation_candidate.py): groups are searched in
// request order and the first group that matches nothing ends the search
// with an empty answer, so an unknown trait in a later group is only
// reported if the earlier groups matched something, as in Placement.
//
// Deliberate differences from 8.0.0:
//   - Consolidating groups never mutates shared state, so the inflated
//     amounts of Placement's copy_arr_if_needed bug (group_policy isolate or
//     absent, a class requested in the unsuffixed and a suffixed group on the
//     same provider) do not happen.
//   - A candidate of the unsuffixed group made only of sharing providers is
//     kept for every anchor it can serve. Placement keeps it for one anchor
//     picked by set iteration order (its per-group result is a set whose
//     equality ignores the anchor), which silently drops valid combinations
//     with suffixed groups, e.g. resources=DISK_GB:100&resources1=VCPU:1
//     with DISK_GB on a sharing provider. Our answer is then a superset.
func (m *Model) Candidates(req *Request, opt Options) (*Result, error) {
	s := &searcher{m: m, req: req, opt: opt, nestedAware: req.Microversion >= 29}
	if len(req.RootRequired) > 0 || len(req.RootForbidden) > 0 {
		ok, err := s.anchorRoots()
		if err != nil {
			return nil, err
		}
		if ok == nil {
			return emptyResult(m), nil
		}
		s.anchorOK = ok
	}
	per := make([][]gcand, len(req.Groups))
	ctxs := make([]*groupCtx, len(req.Groups))
	for i := range req.Groups {
		gc, err := s.resolveGroup(&req.Groups[i])
		if err != nil {
			return nil, err
		}
		if gc == nil {
			return emptyResult(m), nil
		}
		ctxs[i] = gc
		var cands []gcand
		if gc.suffixed || (len(m.sharing) == 0 && !m.hasTrees) || len(gc.classes) == 0 {
			cands = s.singleProvider(gc)
		} else {
			cands = s.multiProvider(gc)
		}
		if len(cands) == 0 {
			return emptyResult(m), nil
		}
		per[i] = cands
	}
	res := s.merge(ctxs, per)
	res.requested = requestedClasses(ctxs)
	return res, nil
}

func requestedClasses(ctxs []*groupCtx) []int32 {
	var out []int32
	for _, gc := range ctxs {
		out = append(out, gc.classes...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// lookupTraits resolves names, failing like trait_obj.ids_from_names on the
// first unknown one. Placement iterates a Python set there, so with several
// unknown names in one set which one it names is arbitrary; we name the
// first in request order.
func (m *Model) lookupTraits(names []string) ([]int32, error) {
	out := make([]int32, 0, len(names))
	for _, n := range names {
		t, ok := m.traitIndex[n]
		if !ok {
			return nil, searchBadRequest(fmt.Sprintf("No such trait(s): %s.", n))
		}
		out = append(out, t)
	}
	return out, nil
}

// anchorRoots applies root_required; nil means no root qualifies.
func (s *searcher) anchorRoots() (bitset, error) {
	m := s.m
	req, err := m.lookupTraits(s.req.RootRequired)
	if err != nil {
		return nil, err
	}
	forb, err := m.lookupTraits(s.req.RootForbidden)
	if err != nil {
		return nil, err
	}
	ok := newBitset(len(m.providers))
	found := false
	for _, r := range m.roots {
		p := &m.providers[r]
		good := true
		for _, t := range req {
			if !p.hasTrait(t) {
				good = false
				break
			}
		}
		for _, t := range forb {
			if good && p.hasTrait(t) {
				good = false
			}
		}
		if good {
			ok.set(r)
			found = true
		}
	}
	if !found {
		return nil, nil
	}
	return ok, nil
}

func (s *searcher) anchorAllowed(root int32) bool {
	return s.anchorOK == nil || s.anchorOK.has(root)
}

// aggMembers returns the providers in every any-of set of member_of, or nil
// if that is nobody. Unknown aggregate UUIDs are simply members of nothing.
func (m *Model) aggMembers(sets [][]string) bitset {
	var acc bitset
	for _, set := range sets {
		b := newBitset(len(m.providers))
		found := false
		for _, u := range set {
			if a, ok := m.aggIndex[u]; ok {
				b.setAll(m.aggProviders[a])
				found = found || len(m.aggProviders[a]) > 0
			}
		}
		if !found {
			return nil
		}
		if acc == nil {
			acc = b
		} else {
			acc.and(b)
		}
	}
	for _, w := range acc {
		if w != 0 {
			return acc
		}
	}
	return nil
}

// resolveGroup does what RequestGroupSearchContext.__init__ does, in the
// same order, so that errors and empty answers take precedence the same way.
// It returns (nil, nil) when the group can match nothing.
func (s *searcher) resolveGroup(g *RequestGroup) (*groupCtx, error) {
	m := s.m
	gc := &groupCtx{g: g, suffixed: g.UseSameProvider(), treeRoot: -1}
	// Placement reports the first unknown class in query order.
	names := g.ResourceOrder
	if len(names) != len(g.Resources) {
		names = make([]string, 0, len(g.Resources))
		for n := range g.Resources {
			names = append(names, n)
		}
		sort.Strings(names)
	}
	for _, n := range names {
		if _, ok := m.classIndex[n]; !ok {
			return nil, searchBadRequest(fmt.Sprintf(
				"Invalid resource class in resources parameter: No such resource class %s.", n))
		}
	}
	if len(g.MemberOf) > 0 {
		gc.inAggs = m.aggMembers(g.MemberOf)
		if gc.inAggs == nil {
			return nil, nil
		}
	}
	for _, set := range g.RequiredTraits {
		ids, err := m.lookupTraits(set)
		if err != nil {
			return nil, err
		}
		gc.required = append(gc.required, ids)
	}
	forb, err := m.lookupTraits(g.ForbiddenTraits)
	if err != nil {
		return nil, err
	}
	gc.forbidden = forb
	if g.InTree != "" {
		p, ok := m.byUUID[g.InTree]
		if !ok {
			return nil, nil
		}
		gc.treeRoot = m.providers[p].Root
	}
	if len(g.ForbiddenAggs) > 0 {
		b := newBitset(len(m.providers))
		for _, u := range g.ForbiddenAggs {
			if a, ok := m.aggIndex[u]; ok {
				b.setAll(m.aggProviders[a])
			}
		}
		gc.badAggs = b
	}
	type cl struct {
		c int32
		n int64
	}
	cls := make([]cl, 0, len(names))
	for _, n := range names {
		cls = append(cls, cl{m.classIndex[n], g.Resources[n]})
	}
	slices.SortFunc(cls, func(a, b cl) int { return int(a.c - b.c) })
	for _, x := range cls {
		var with []int32
		for _, p := range m.classProviders[x.c] {
			pr := &m.providers[p]
			if gc.treeRoot >= 0 && pr.Root != gc.treeRoot {
				continue
			}
			if pr.inventory(x.c).fits(x.n) {
				with = append(with, p)
			}
		}
		if len(with) == 0 {
			return nil, nil
		}
		gc.classes = append(gc.classes, x.c)
		gc.amounts = append(gc.amounts, x.n)
		gc.withRes = append(gc.withRes, with)
	}
	return gc, nil
}

func (gc *groupCtx) hasForbiddenTrait(p *Provider) bool {
	for _, t := range gc.forbidden {
		if p.hasTrait(t) {
			return true
		}
	}
	return false
}

func (gc *groupCtx) holdsRequired(p *Provider) bool {
	for _, set := range gc.required {
		ok := false
		for _, t := range set {
			if p.hasTrait(t) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// singleProvider is _alloc_candidates_single_provider: one provider holds all
// of the group's resources, traits and aggregates itself (no aggregate on the
// root spanning the tree here).
func (s *searcher) singleProvider(gc *groupCtx) []gcand {
	m := s.m
	var base []int32
	if len(gc.classes) == 0 {
		// Resourceless group. Placement starts from the providers matching
		// required traits and member_of; with neither (only forbidden traits
		// or only in_tree) that set is empty and so is the answer. in_tree
		// is not applied at all here, also as in 8.0.0.
		if len(gc.required) == 0 && gc.inAggs == nil {
			return nil
		}
		for i := range m.providers {
			p := &m.providers[i]
			if gc.inAggs != nil && !gc.inAggs.has(int32(i)) {
				continue
			}
			if gc.holdsRequired(p) {
				base = append(base, int32(i))
			}
		}
	} else {
		base = intersectSorted(gc.withRes)
	}
	var out []gcand
	for _, pi := range base {
		p := &m.providers[pi]
		if len(gc.classes) > 0 {
			if !gc.holdsRequired(p) || (gc.inAggs != nil && !gc.inAggs.has(pi)) {
				continue
			}
		}
		if gc.hasForbiddenTrait(p) || (gc.badAggs != nil && gc.badAggs.has(pi)) {
			continue
		}
		res := make([]Amount, len(gc.classes))
		for k, c := range gc.classes {
			res[k] = Amount{Provider: pi, Class: c, Amount: gc.amounts[k]}
		}
		provs := []int32{pi}
		if s.anchorAllowed(p.Root) {
			out = append(out, gcand{anchor: p.Root, res: res, provs: provs})
		}
		if m.isSharing.has(pi) {
			for _, a := range m.sharingAnchorsOf(pi) {
				if a != p.Root && s.anchorAllowed(a) {
					out = append(out, gcand{anchor: a, res: res, provs: provs})
				}
			}
		}
	}
	return out
}

func intersectSorted(lists [][]int32) []int32 {
	if len(lists) == 0 {
		return nil
	}
	out := slices.Clone(lists[0])
	for _, l := range lists[1:] {
		k := 0
		j := 0
		for _, x := range out {
			for j < len(l) && l[j] < x {
				j++
			}
			if j < len(l) && l[j] == x {
				out[k] = x
				k++
			}
		}
		out = out[:k]
	}
	return out
}

// multiProvider is get_trees_matching_all + _alloc_candidates_multiple_providers
// for the unsuffixed group when trees or sharing providers exist: each class
// comes wholly from one provider of the anchor's tree or from a sharing
// provider anchored to it; traits are judged on the contributing providers
// only; member_of and forbidden aggregates look at the provider or its
// (anchor) root.
func (s *searcher) multiProvider(gc *groupCtx) []gcand {
	m := s.m
	nc := len(gc.classes)
	// anchor -> per class -> providers
	trees := map[int32][][]int32{}
	for ci := range gc.classes {
		add := func(p, anchor int32) {
			if !s.anchorAllowed(anchor) {
				return
			}
			if gc.inAggs != nil && !gc.inAggs.has(p) && !gc.inAggs.has(anchor) {
				return
			}
			if gc.badAggs != nil && (gc.badAggs.has(p) || gc.badAggs.has(anchor)) {
				return
			}
			if ci > 0 {
				if _, ok := trees[anchor]; !ok {
					return // not a common tree (merge_common_trees)
				}
			}
			lists, ok := trees[anchor]
			if !ok {
				lists = make([][]int32, nc)
				trees[anchor] = lists
			}
			lists[ci] = append(lists[ci], p)
		}
		for _, p := range gc.withRes[ci] {
			add(p, m.providers[p].Root)
		}
		if gc.treeRoot < 0 {
			for _, p := range gc.withRes[ci] {
				if !m.isSharing.has(p) || (gc.inAggs != nil && !gc.inAggs.has(p)) {
					continue
				}
				for _, a := range m.sharingAnchorsOf(p) {
					if a != m.providers[p].Root {
						add(p, a)
					}
				}
			}
		}
		for a, lists := range trees {
			if len(lists[ci]) == 0 {
				delete(trees, a)
			}
		}
		if len(trees) == 0 {
			return nil
		}
	}
	anchors := make([]int32, 0, len(trees))
	for a := range trees {
		anchors = append(anchors, a)
	}
	slices.Sort(anchors)
	var out []gcand
	pick := make([]int32, nc)
	for _, a := range anchors {
		lists := trees[a]
		ok := true
		for ci := range lists {
			l := lists[ci][:0]
			for _, p := range lists[ci] {
				// A provider holding a forbidden trait can never contribute.
				if !gc.hasForbiddenTrait(&m.providers[p]) {
					l = append(l, p)
				}
			}
			slices.Sort(l)
			lists[ci] = slices.Compact(l)
			if len(lists[ci]) == 0 {
				ok = false
			}
		}
		if !ok {
			continue
		}
		var rec func(ci int)
		rec = func(ci int) {
			if ci == nc {
				if c, ok := s.buildMulti(gc, a, pick); ok {
					out = append(out, c)
				}
				return
			}
			for _, p := range lists[ci] {
				pick[ci] = p
				rec(ci + 1)
			}
		}
		rec(0)
	}
	return out
}

func (s *searcher) buildMulti(gc *groupCtx, anchor int32, pick []int32) (gcand, bool) {
	m := s.m
	provs := slices.Clone(pick)
	slices.Sort(provs)
	provs = slices.Compact(provs)
	for _, set := range gc.required {
		ok := false
		for _, p := range provs {
			for _, t := range set {
				if m.providers[p].hasTrait(t) {
					ok = true
					break
				}
			}
			if ok {
				break
			}
		}
		if !ok {
			return gcand{}, false
		}
	}
	res := make([]Amount, len(pick))
	for ci, p := range pick {
		res[ci] = Amount{Provider: p, Class: gc.classes[ci], Amount: gc.amounts[ci]}
	}
	sortAmounts(res)
	return gcand{anchor: anchor, res: res, provs: provs}, true
}

func sortAmounts(res []Amount) {
	slices.SortFunc(res, func(a, b Amount) int {
		if a.Provider != b.Provider {
			return int(a.Provider - b.Provider)
		}
		return int(a.Class - b.Class)
	})
}

// anchorGen lazily walks the combinations (one per-group candidate per group)
// of one anchor depth-first, pruning a partial combination as soon as the
// summed amounts exceed capacity or max_unit, or group_policy=isolate is
// broken. Both checks only get worse as groups are added, so pruning never
// loses a result and turns the k^n product into the valid set's size.
type anchorGen struct {
	s      *searcher
	ctxs   []*groupCtx
	lists  [][]*gcand
	idx    []int
	depth  int
	acc    []accEntry
	undo   [][]undoRec
	owner  []int32 // provider held by each suffixed group on the path, -1
	done   bool
	anchor int32
}

type accEntry struct {
	p, c int32
	sum  int64
	inv  *Inventory
}

type undoRec struct {
	i     int
	delta int64
	added bool
}

func (g *anchorGen) push(d int, c *gcand) bool {
	if g.ctxs[d].suffixed && g.s.req.GroupPolicy == "isolate" {
		p := c.provs[0]
		for k := 0; k < d; k++ {
			if g.owner[k] == p {
				return false
			}
		}
	}
	recs := g.undo[d][:0] // reuses the buffer of the last visit at this depth
	ok := true
	for _, a := range c.res {
		i := -1
		for k := range g.acc {
			if g.acc[k].p == a.Provider && g.acc[k].c == a.Class {
				i = k
				break
			}
		}
		if i < 0 {
			g.acc = append(g.acc, accEntry{p: a.Provider, c: a.Class,
				inv: g.s.m.providers[a.Provider].inventory(a.Class)})
			i = len(g.acc) - 1
			recs = append(recs, undoRec{i: i, delta: a.Amount, added: true})
		} else {
			recs = append(recs, undoRec{i: i, delta: a.Amount})
		}
		e := &g.acc[i]
		e.sum += a.Amount
		if e.inv.Used+e.sum > e.inv.Capacity || e.sum > e.inv.MaxUnit {
			ok = false
		}
	}
	g.undo[d] = recs
	if g.ctxs[d].suffixed && len(c.provs) == 1 {
		g.owner[d] = c.provs[0]
	} else {
		g.owner[d] = -1
	}
	if !ok {
		g.pop(d)
	}
	return ok
}

func (g *anchorGen) pop(d int) {
	recs := g.undo[d]
	for k := len(recs) - 1; k >= 0; k-- {
		r := recs[k]
		g.acc[r.i].sum -= r.delta
		if r.added {
			g.acc = g.acc[:r.i]
		}
	}
	g.undo[d] = recs[:0]
	g.owner[d] = -1
}

// next returns the next combination that passes the per-path checks and
// same_subtree, or false when the anchor is exhausted.
func (g *anchorGen) next() ([]*gcand, bool) {
	n := len(g.lists)
	for !g.done {
		// Advance: at depth g.depth try idx[depth]; on success go deeper.
		d := g.depth
		if g.idx[d] >= len(g.lists[d]) {
			g.idx[d] = 0
			if d == 0 {
				g.done = true
				return nil, false
			}
			g.depth--
			g.pop(g.depth)
			g.idx[g.depth]++
			continue
		}
		if !g.push(d, g.lists[d][g.idx[d]]) {
			g.idx[d]++
			continue
		}
		if d+1 < n {
			g.depth++
			continue
		}
		combo := make([]*gcand, n)
		for k := range combo {
			combo[k] = g.lists[k][g.idx[k]]
		}
		g.pop(d)
		g.idx[d]++
		if g.s.sameSubtreeOK(g.ctxs, combo) {
			return combo, true
		}
	}
	return nil, false
}

func (s *searcher) sameSubtreeOK(ctxs []*groupCtx, combo []*gcand) bool {
	m := s.m
	for _, set := range s.req.SameSubtree {
		var ps []int32
		for _, suf := range set {
			for gi, gc := range ctxs {
				if gc.g.Suffix == suf {
					ps = append(ps, combo[gi].provs...)
				}
			}
		}
		slices.Sort(ps)
		ps = slices.Compact(ps)
		if len(ps) <= 1 {
			continue
		}
		found := false
		for _, top := range ps {
			all := true
			for _, p := range ps {
				if !m.isAncestorOrSelf(top, p) {
					all = false
					break
				}
			}
			if all {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

func (m *Model) isAncestorOrSelf(a, p int32) bool {
	for p >= 0 {
		if p == a {
			return true
		}
		p = m.providers[p].Parent
	}
	return false
}

// merge is _merge_candidates + exclude_nested_providers + limit_results.
func (s *searcher) merge(ctxs []*groupCtx, per [][]gcand) *Result {
	m := s.m
	ng := len(ctxs)
	// Per group, the candidates in runs of one anchor, anchors ascending
	// (a stable sort keeps each anchor's own order).
	type run struct {
		anchor int32
		items  []*gcand
	}
	runs := make([][]run, ng)
	for gi := range per {
		ptrs := make([]*gcand, len(per[gi]))
		for k := range per[gi] {
			ptrs[k] = &per[gi][k]
		}
		slices.SortStableFunc(ptrs, func(a, b *gcand) int { return cmp.Compare(a.anchor, b.anchor) })
		for lo := 0; lo < len(ptrs); {
			hi := lo + 1
			for hi < len(ptrs) && ptrs[hi].anchor == ptrs[lo].anchor {
				hi++
			}
			runs[gi] = append(runs[gi], run{ptrs[lo].anchor, ptrs[lo:hi:hi]})
			lo = hi
		}
	}
	// Anchors every group has, by merge-joining the runs.
	var anchors []int32
	var lists [][]*gcand // ng per anchor
	pos := make([]int, ng)
	for _, r0 := range runs[0] {
		ok := true
		for gi := 1; gi < ng && ok; gi++ {
			for pos[gi] < len(runs[gi]) && runs[gi][pos[gi]].anchor < r0.anchor {
				pos[gi]++
			}
			ok = pos[gi] < len(runs[gi]) && runs[gi][pos[gi]].anchor == r0.anchor
		}
		if !ok {
			continue
		}
		anchors = append(anchors, r0.anchor)
		lists = append(lists, r0.items)
		for gi := 1; gi < ng; gi++ {
			lists = append(lists, runs[gi][pos[gi]].items)
		}
	}
	// One backing array per field instead of five allocations per anchor.
	gens := make([]*anchorGen, len(anchors))
	genBacking := make([]anchorGen, len(anchors))
	idx := make([]int, len(anchors)*ng)
	undo := make([][]undoRec, len(anchors)*ng)
	owner := make([]int32, len(anchors)*ng)
	for k := range owner {
		owner[k] = -1
	}
	for i, a := range anchors {
		lo, hi := i*ng, (i+1)*ng
		genBacking[i] = anchorGen{s: s, ctxs: ctxs, lists: lists[lo:hi:hi], idx: idx[lo:hi:hi],
			undo: undo[lo:hi:hi], owner: owner[lo:hi:hi], anchor: a}
		gens[i] = &genBacking[i]
	}

	excludeNested := !s.nestedAware && m.hasTrees
	limit := s.req.Limit
	stop := 0
	if limit > 0 && !s.opt.Randomize && !excludeNested {
		stop = limit
	}
	if s.opt.MaxCandidates > 0 && (stop == 0 || s.opt.MaxCandidates < stop) {
		stop = s.opt.MaxCandidates
	}

	seen := map[string]struct{}{}
	var out []Candidate
	var key []byte
	emit := func(anchor int32, combo []*gcand) bool {
		c := consolidate(anchor, ctxs, combo)
		if excludeNested && usesTwoOfOneTree(m, c.Resources) {
			return true
		}
		key = candidateKey(key[:0], &c)
		if _, dup := seen[string(key)]; dup {
			return true
		}
		seen[string(key)] = struct{}{}
		out = append(out, c)
		return stop == 0 || len(out) < stop
	}
	if s.opt.Strategy == "breadth-first" {
		live := gens
		for len(live) > 0 {
			k := 0
			stopped := false
			for _, g := range live {
				combo, ok := g.next()
				if !ok {
					continue
				}
				live[k] = g
				k++
				if !emit(g.anchor, combo) {
					stopped = true
					break
				}
			}
			if stopped {
				break
			}
			live = live[:k]
		}
	} else {
	outer:
		for _, g := range gens {
			for {
				combo, ok := g.next()
				if !ok {
					break
				}
				if !emit(g.anchor, combo) {
					break outer
				}
			}
		}
	}

	// Pre-1.29 summaries only list providers used by some (pre-limit)
	// candidate; remember them before limiting.
	var usedBefore bitset
	if excludeNested {
		usedBefore = newBitset(len(m.providers))
		for i := range out {
			for _, a := range out[i].Resources {
				usedBefore.set(a.Provider)
			}
		}
	}
	if s.opt.Randomize {
		rng := rand.New(rand.NewPCG(uint64(s.opt.Seed), 0x9e3779b97f4a7c15))
		rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	}
	if limit > 0 && limit < len(out) {
		out = out[:limit]
	}
	res := &Result{model: m, Candidates: out}
	roots := newBitset(len(m.providers))
	for i := range out {
		for _, a := range out[i].Resources {
			roots.set(m.providers[a.Provider].Root)
		}
	}
	for i := range m.providers {
		if !roots.has(m.providers[i].Root) {
			continue
		}
		if usedBefore != nil && !usedBefore.has(int32(i)) {
			continue
		}
		res.Summaries = append(res.Summaries, int32(i))
	}
	return res
}

func usesTwoOfOneTree(m *Model, res []Amount) bool {
	for i := range res {
		for j := i + 1; j < len(res); j++ {
			if res[i].Provider != res[j].Provider &&
				m.providers[res[i].Provider].Root == m.providers[res[j].Provider].Root {
				return true
			}
		}
	}
	return false
}

func consolidate(anchor int32, ctxs []*groupCtx, combo []*gcand) Candidate {
	if len(combo) == 1 {
		// One group's request is already sorted and consolidated; results
		// are read-only, so it can be shared rather than copied.
		c := combo[0]
		return Candidate{Anchor: anchor, Resources: c.res,
			Mappings: []Mapping{{Suffix: ctxs[0].g.Suffix, Providers: c.provs}}}
	}
	n := 0
	for _, c := range combo {
		n += len(c.res)
	}
	res := make([]Amount, 0, n)
	for _, c := range combo {
		res = append(res, c.res...)
	}
	sortAmounts(res)
	k := 0
	for i := range res {
		if k > 0 && res[k-1].Provider == res[i].Provider && res[k-1].Class == res[i].Class {
			res[k-1].Amount += res[i].Amount
			continue
		}
		res[k] = res[i]
		k++
	}
	maps := make([]Mapping, len(combo))
	for gi, c := range combo {
		maps[gi] = Mapping{Suffix: ctxs[gi].g.Suffix, Providers: c.provs}
	}
	return Candidate{Anchor: anchor, Resources: res[:k], Mappings: maps}
}

// candidateKey encodes what AllocationRequest.__eq__ compares: the
// resources and the mappings, not the anchor. Fixed-width fields keep the
// encoding unambiguous.
func candidateKey(b []byte, c *Candidate) []byte {
	b = binary.LittleEndian.AppendUint32(b, uint32(len(c.Resources)))
	for _, a := range c.Resources {
		b = binary.LittleEndian.AppendUint32(b, uint32(a.Provider))
		b = binary.LittleEndian.AppendUint32(b, uint32(a.Class))
		b = binary.LittleEndian.AppendUint64(b, uint64(a.Amount))
	}
	for _, mp := range c.Mappings {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(mp.Suffix)))
		b = append(b, mp.Suffix...)
		b = binary.LittleEndian.AppendUint32(b, uint32(len(mp.Providers)))
		for _, p := range mp.Providers {
			b = binary.LittleEndian.AppendUint32(b, uint32(p))
		}
	}
	return b
}
