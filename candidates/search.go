package candidates

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"sync/atomic"
)

// Options tune the search beyond what Placement 8.0.0's API exposes. They
// correspond to later Placement's [placement]max_allocation_candidates,
// allocation_candidates_generation_strategy and
// randomize_allocation_candidates.
type Options struct {
	// MaxCandidates stops generation once that many distinct candidates
	// exist (0 = unlimited). It applies before Request.Limit and, below
	// microversion 1.29 on a cloud with trees, before the candidates that
	// use two providers of one tree are dropped: those count toward it, as
	// in Placement 13 (see merge).
	MaxCandidates int
	// Strategy is "depth-first" (default: all candidates of one anchor, then
	// the next) or "breadth-first" (one candidate per anchor per turn), which
	// spreads a capped result over more hosts.
	Strategy string
	// Randomize returns a random sample of Limit candidates (or a shuffle of
	// all of them), drawn from a generator seeded with Seed.
	Randomize bool
	Seed      int64
	// Ceiling bounds the allocation requests one answer may hold (0 =
	// DefaultCeiling, NoLimit = none). Unlike MaxCandidates it does not cut
	// the answer short: one candidate more fails the search with a
	// *CeilingError, so that a request that would exhaust memory is refused
	// rather than answered wrongly. Candidates are counted as they are
	// generated, and so are their bytes (CeilingBytes).
	Ceiling int
	// CeilingBytes bounds the memory the answer's allocation requests take
	// (0 = DefaultCeilingBytes, NoLimit = none): a candidate of 200 groups
	// is a hundred times the size of one of two, so a count alone bounds
	// nothing.
	CeilingBytes int64
	// MaxSteps bounds the steps of the walk (0 = DefaultMaxSteps, NoLimit
	// = none): a request whose groups cannot all fit on a host is refused
	// only after every combination was tried, which for 129 groups is
	// more than the age of the universe; past MaxSteps the search fails
	// with a *StepsError.
	MaxSteps int64
	// Shared, when not nil, is a memory budget several searches draw on
	// at once (their answers are held together): CeilingBytes bounds their
	// sum rather than each.
	Shared *Budget
}

// Budget is the bytes of candidates several searches have built.
type Budget struct {
	used atomic.Int64
	// ReleaseFailed: a search that fails gives its bytes back (its answer
	// is dropped), for a caller that keeps the other searches' answers
	// when one fails. Without it a failed search's bytes stay counted, so
	// that searches that all fail together stop early.
	ReleaseFailed bool
}

// The bounds every search has unless its caller lifts them by name. They
// are defaults of Options' zero value, so that no caller can forget them.
const (
	// DefaultCeiling is the most allocation requests one answer holds.
	DefaultCeiling = 100000
	// DefaultCeilingBytes is the most memory one answer's allocation
	// requests take: with the search's own working set it keeps a search
	// under 512 MB of peak RSS.
	DefaultCeilingBytes = 256 << 20
	// DefaultMaxSteps is the most steps one search walks: a few seconds of
	// one core, two hundred times what an answer at DefaultCeiling takes
	// (about three steps per candidate), and ten thousand hosts' worth of
	// Explain's per-host budget.
	DefaultMaxSteps = 200_000_000
	// NoLimit lifts one bound of Options.
	NoLimit = -1
)

// limits resolves Options' zero values to the defaults and NoLimit to 0
// (none), the form the searcher tests.
func (o Options) limits() (ceiling int, bytes, steps int64) {
	pick := func(v, def int64) int64 {
		switch {
		case v == 0:
			return def
		case v < 0:
			return 0
		}
		return v
	}
	return int(pick(int64(o.Ceiling), DefaultCeiling)), pick(o.CeilingBytes, DefaultCeilingBytes), pick(o.MaxSteps, DefaultMaxSteps)
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
	// Steps is the work the search did (see Options.MaxSteps).
	Steps uint64
	// requested are the resource classes named by any group, for the
	// pre-1.27 summaries.
	requested []int32
	// anchored marks every root that anchors a valid combination, before
	// duplicates are dropped: a sharing-only candidate equal to another
	// anchor's is still a place the request can land, which Explain needs.
	anchored bitset
	// undecided marks the roots whose walk Explain's search gave up
	// (ExplainBudget) before it found a valid combination or ran out.
	undecided bitset
}

// anchors reports whether root r anchors a valid combination.
func (r *Result) anchors(root int32) bool { return r.anchored != nil && r.anchored.has(root) }

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
	anchorsOnly bool
	// Candidates' slices are carved from chunks: a thousand-candidate
	// answer is then a few dozen allocations rather than thousands, which
	// is most of what the garbage collector would otherwise chase.
	amounts slab[Amount]
	ints    slab[int32]
	maps    slab[Mapping]
	lists   slab[[]int32]
	subtree []int32 // sameSubtreeOK's scratch
	// ctx is polled every few thousand steps of a walk; err is why the
	// search stopped early (cancelled, or above a ceiling).
	ctx   context.Context
	steps uint64
	err   error
	// The resolved bounds (0 = none) and the bytes of candidates built.
	ceiling  int
	maxBytes int64
	maxSteps int64
	bytes    int64
	flushed  int64 // of bytes, what opt.Shared already counts
	// undecided: see Result.undecided (anchorsOnly walks only).
	undecided bitset
}

// searchDone, when a test sets it, is told how many steps each search
// walked (calls of stopped): the work it did, counted without a clock.
var searchDone func(steps uint64)

// stopped reports, every 4096th call, whether the context was cancelled,
// and keeps the reason in s.err; a search then unwinds at once. Every call
// is a step, those after the search stopped too.
func (s *searcher) stopped() bool {
	s.steps++
	if s.err != nil {
		return true
	}
	if s.steps&4095 != 0 {
		return false
	}
	if s.maxSteps > 0 && s.steps > uint64(s.maxSteps) {
		s.err = &StepsError{Steps: s.maxSteps}
		return true
	}
	if s.ctx == nil {
		return false
	}
	if err := context.Cause(s.ctx); err != nil {
		s.err = err
		return true
	}
	return false
}

// slab hands out slices of chunks it allocates, growing the chunk size up
// to 64Ki elements. The slices are never appended to.
type slab[T any] struct{ buf []T }

func (s *slab[T]) take(n int) []T {
	if len(s.buf)+n > cap(s.buf) {
		c := max(64, n, min(2*cap(s.buf), 1<<16))
		s.buf = make([]T, 0, c)
	}
	lo := len(s.buf)
	s.buf = s.buf[:lo+n]
	return s.buf[lo : lo+n : lo+n]
}

func emptyResult(m *Model) *Result { return &Result{model: m} }

// Search answers GET /allocation_candidates for req, following Placement
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
//
// Search is the one way into the core: every search is bounded (Options'
// ceilings, whose zero values are the defaults) and stops, with the
// context's cause as its error, soon after ctx is cancelled (a signal, a
// deadline): within 4096 steps.
func (m *Model) Search(ctx context.Context, req *Request, opt Options) (*Result, error) {
	return m.search(ctx, req, opt, false)
}

// search is Search; with anchorsOnly it stops walking an anchor at its
// first valid combination, which is all Explain needs to know.
func (m *Model) search(ctx context.Context, req *Request, opt Options, anchorsOnly bool) (*Result, error) {
	s := newSearcher(ctx, m, req, opt)
	s.anchorsOnly = anchorsOnly
	if searchDone != nil {
		defer func() { searchDone(s.steps) }()
	}
	if anchorsOnly {
		s.undecided = newBitset(len(m.providers))
	}
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
	multi := make([]multiTrees, len(req.Groups))
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
		if s.isMulti(gc) {
			// Only the per-class lists are built here; the product is
			// walked lazily by the merge, so a limit stops it early.
			multi[i] = s.multiLists(gc)
			if !s.multiAny(gc, multi[i]) {
				return emptyResult(m), nil
			}
			continue
		}
		if per[i] = s.singleProvider(gc); len(per[i]) == 0 {
			return emptyResult(m), nil
		}
	}
	res := s.merge(ctxs, per, multi)
	if s.err != nil {
		// The answer is dropped: its bytes leave the shared budget, so a
		// failed search does not starve the searches beside it.
		if s.opt.Shared != nil && s.opt.Shared.ReleaseFailed {
			s.opt.Shared.used.Add(-s.flushed)
			s.flushed = 0
		}
		return nil, s.err
	}
	res.requested = requestedClasses(ctxs)
	res.Steps = s.steps
	return res, nil
}

func newSearcher(ctx context.Context, m *Model, req *Request, opt Options) *searcher {
	s := &searcher{m: m, req: req, opt: opt, nestedAware: req.Microversion >= 29, ctx: ctx}
	s.ceiling, s.maxBytes, s.maxSteps = opt.limits()
	return s
}

// isMulti reports whether the group's resources may come from several
// providers: the unsuffixed group with resources, once trees or sharing
// providers exist.
func (s *searcher) isMulti(gc *groupCtx) bool {
	return !gc.suffixed && (len(s.m.sharing) > 0 || s.m.hasTrees) && len(gc.classes) > 0
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
			return nil, badRequest(DefaultErrorCode, fmt.Sprintf("No such trait(s): %s.", n))
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
		if p.holdsAll(req) && !p.holdsAny(forb) {
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
			return nil, badRequest(DefaultErrorCode, fmt.Sprintf(
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

func (gc *groupCtx) hasForbiddenTrait(p *Provider) bool { return p.holdsAny(gc.forbidden) }

func (gc *groupCtx) holdsRequired(p *Provider) bool {
	for _, set := range gc.required {
		if !p.holdsAny(set) {
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
	out := make([]gcand, 0, len(base))
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
		res := s.amounts.take(len(gc.classes))
		for k, c := range gc.classes {
			res[k] = Amount{Provider: pi, Class: c, Amount: gc.amounts[k]}
		}
		provs := s.ints.take(1)
		provs[0] = pi
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

// multiTrees is the search space of the unsuffixed group when trees or
// sharing providers exist: per anchor (ascending), per class of the group
// (class-id order), the providers (ascending) that may give that class.
// The group's candidates are the product of the lists, less the
// combinations that miss a required trait; they are walked lazily.
type multiTrees struct {
	anchors []int32
	lists   [][][]int32
}

// multiLists is get_trees_matching_all for the unsuffixed group: each class
// comes wholly from one provider of the anchor's tree or from a sharing
// provider anchored to it; member_of and forbidden aggregates look at the
// provider or its (anchor) root; a provider with a forbidden trait can never
// contribute. An anchor must offer every class (merge_common_trees).
func (s *searcher) multiLists(gc *groupCtx) multiTrees {
	m := s.m
	nc := len(gc.classes)
	// slot[anchor] is 1 + the anchor's index in found, 0 if not seen; the
	// per-class lists are carved from slabs, so a thousand trees cost a
	// handful of allocations rather than thousands.
	slot := make([]int32, len(m.providers))
	var found []int32
	var lists [][][]int32
	var alive []bool
	var cnt []int32
	type pair struct{ a, p int32 }
	var pairs []pair
	for ci := range gc.classes {
		pairs = pairs[:0]
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
			if ci > 0 && (slot[anchor] == 0 || !alive[slot[anchor]-1]) {
				return // not a common tree
			}
			if gc.hasForbiddenTrait(&m.providers[p]) {
				return
			}
			pairs = append(pairs, pair{anchor, p})
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
		if ci == 0 {
			for _, pr := range pairs {
				if slot[pr.a] == 0 {
					found = append(found, pr.a)
					slot[pr.a] = int32(len(found))
				}
			}
			lists = make([][][]int32, len(found))
			for i := range lists {
				lists[i] = s.lists.take(nc)
			}
			alive = make([]bool, len(found))
			for i := range alive {
				alive[i] = true
			}
			cnt = make([]int32, len(found))
		}
		clear(cnt)
		for _, pr := range pairs {
			cnt[slot[pr.a]-1]++
		}
		live := false
		for i := range found {
			if !alive[i] {
				continue
			}
			if cnt[i] == 0 {
				alive[i] = false
				continue
			}
			lists[i][ci] = s.ints.take(int(cnt[i]))[:0]
			live = true
		}
		if !live {
			return multiTrees{}
		}
		for _, pr := range pairs {
			i := slot[pr.a] - 1
			lists[i][ci] = append(lists[i][ci], pr.p)
		}
	}
	var anchors []int32
	for i, a := range found {
		if alive[i] {
			anchors = append(anchors, a)
		}
	}
	slices.Sort(anchors)
	out := multiTrees{anchors: anchors, lists: make([][][]int32, len(anchors))}
	for k, a := range anchors {
		l := lists[slot[a]-1]
		for ci := range l {
			// A tree's own providers come first, then sharing ones.
			slices.Sort(l[ci])
			l[ci] = slices.Compact(l[ci])
		}
		out.lists[k] = l
	}
	return out
}

// multiTraitsOK reports whether the providers picked for the group's
// classes hold its required traits between them: traits are judged on the
// contributing providers only.
func (s *searcher) multiTraitsOK(gc *groupCtx, pick []int32) bool {
	for _, set := range gc.required {
		if !s.pickHolds(pick, set) {
			return false
		}
	}
	return true
}

// multiProduct walks the product of one anchor's class lists in odometer
// order (first class outermost), calling f for every pick that holds the
// required traits until f returns false. It returns false if f stopped it.
func (s *searcher) multiProduct(gc *groupCtx, lists [][]int32, f func(pick []int32) bool) bool {
	pick := make([]int32, len(lists))
	// later[ci][k]: some provider of lists[ci:] holds required set k, so a
	// partial pick missing a set that no later class can bring is pruned.
	var later [][]bool
	if len(gc.required) > 0 {
		later = make([][]bool, len(lists)+1)
		later[len(lists)] = make([]bool, len(gc.required))
		for ci := len(lists) - 1; ci >= 0; ci-- {
			later[ci] = slices.Clone(later[ci+1])
			for k, set := range gc.required {
				for _, p := range lists[ci] {
					if later[ci][k] {
						break
					}
					later[ci][k] = s.m.providers[p].holdsAny(set)
				}
			}
		}
		for _, ok := range later[0] {
			if !ok {
				return true
			}
		}
	}
	var rec func(ci int) bool
	rec = func(ci int) bool {
		if ci == len(lists) {
			if s.multiTraitsOK(gc, pick) {
				return f(pick)
			}
			return true
		}
		if later != nil && ci > 0 {
			for k, set := range gc.required {
				if !later[ci][k] && !s.pickHolds(pick[:ci], set) {
					return true
				}
			}
		}
		for _, p := range lists[ci] {
			pick[ci] = p
			if !rec(ci + 1) {
				return false
			}
		}
		return true
	}
	return rec(0)
}

func (p *Provider) holdsAny(set []int32) bool {
	for _, t := range set {
		if p.hasTrait(t) {
			return true
		}
	}
	return false
}

func (p *Provider) holdsAll(ts []int32) bool {
	for _, t := range ts {
		if !p.hasTrait(t) {
			return false
		}
	}
	return true
}

func (s *searcher) pickHolds(pick []int32, set []int32) bool {
	for _, p := range pick {
		if s.m.providers[p].holdsAny(set) {
			return true
		}
	}
	return false
}

// multiAny reports whether the group has any candidate at all, which
// Placement checks before it looks at the next group. Without required
// traits every pick qualifies; with them the walk stops at the first hit.
func (s *searcher) multiAny(gc *groupCtx, mt multiTrees) bool {
	if len(gc.required) == 0 {
		return len(mt.anchors) > 0
	}
	for _, lists := range mt.lists {
		if !s.multiProduct(gc, lists, func([]int32) bool { return false }) {
			return true
		}
	}
	return false
}

// multiProvider materialises the candidates of the unsuffixed group on
// trees or with sharing providers (_alloc_candidates_multiple_providers),
// at most perAnchor per anchor (0: all). The search walks them lazily
// instead; Explain wants a bounded sample of them per host.
func (s *searcher) multiProvider(gc *groupCtx, perAnchor int) []gcand {
	mt := s.multiLists(gc)
	var out []gcand
	for i, a := range mt.anchors {
		n := 0
		s.multiProduct(gc, mt.lists[i], func(pick []int32) bool {
			out = append(out, s.buildMulti(gc, a, pick))
			n++
			return perAnchor == 0 || n < perAnchor
		})
	}
	return out
}

// buildMulti turns one pick (a provider per class) into the group's
// allocation request.
func (s *searcher) buildMulti(gc *groupCtx, anchor int32, pick []int32) gcand {
	res := s.amounts.take(len(pick))
	for ci, p := range pick {
		res[ci] = Amount{Provider: p, Class: gc.classes[ci], Amount: gc.amounts[ci]}
	}
	provs := s.ints.take(len(pick))
	copy(provs, pick)
	if len(pick) > 1 {
		slices.Sort(provs)
		provs = slices.Compact(provs)
		sortAmounts(res)
	}
	return gcand{anchor: anchor, res: res, provs: provs}
}

func amountLess(a, b *Amount) bool {
	return a.Provider < b.Provider || (a.Provider == b.Provider && a.Class < b.Class)
}

// sortAmounts orders by provider, then class. A candidate has a handful of
// amounts, where an inlined insertion sort beats the generic sort
// (BenchmarkSortAmounts: 2-3x at 4 to 12).
func sortAmounts(res []Amount) {
	if len(res) > 12 {
		slices.SortFunc(res, func(a, b Amount) int {
			if a.Provider != b.Provider {
				return int(a.Provider - b.Provider)
			}
			return int(a.Class - b.Class)
		})
		return
	}
	for i := 1; i < len(res); i++ {
		for j := i; j > 0 && amountLess(&res[j], &res[j-1]); j-- {
			res[j], res[j-1] = res[j-1], res[j]
		}
	}
}

// level is one step of an anchor's depth-first walk: a single-provider
// group chooses one of its candidates there; a multi-provider group takes
// one level per resource class and chooses a provider for it, so a partial
// pick that already breaks capacity is pruned before the group's product is
// ever built.
type level struct {
	cands []*gcand // single-provider group: its candidates at the anchor
	provs []int32  // multi-provider group: the providers for class ci
	gi    int32    // request group
	ci    int32
	first int32 // multi-provider group: level of its first class
	last  bool  // multi-provider group: its last class
}

// anchorGen lazily walks the combinations of one anchor depth-first,
// pruning a partial combination as soon as the summed amounts exceed
// capacity or max_unit, or group_policy=isolate is broken. Both checks only
// get worse as levels are added, so pruning never loses a result and turns
// the product into the valid set's size; a limit stops the walk early.
type anchorGen struct {
	s      *searcher
	ctxs   []*groupCtx
	levels []level
	idx    []int
	pick   []int32 // provider chosen at each multi-provider level
	depth  int
	acc    []accEntry
	undo   [][]undoRec
	owner  []int32 // provider held by each suffixed group's level, or -1
	combo  []*gcand
	multi  []gcand   // the multi-provider groups' requests of the current combination
	recs   []undoRec // backing of undo
	done   bool
	anchor int32
	steps  int // this anchor's, for Explain's budget
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

func (g *anchorGen) add(recs []undoRec, a Amount) ([]undoRec, bool) {
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
	return recs, e.inv.Used+e.sum <= e.inv.Capacity && e.sum <= e.inv.MaxUnit
}

func (g *anchorGen) push(d int) bool {
	lv := &g.levels[d]
	gc := g.ctxs[lv.gi]
	recs := g.undo[d][:0] // reuses the buffer of the last visit at this depth
	ok := true
	if lv.cands != nil {
		c := lv.cands[g.idx[d]]
		if gc.suffixed && g.s.req.GroupPolicy == "isolate" {
			p := c.provs[0]
			for k := 0; k < d; k++ {
				if g.owner[k] == p {
					return false
				}
			}
		}
		for _, a := range c.res {
			var fit bool
			recs, fit = g.add(recs, a)
			ok = ok && fit
		}
		if gc.suffixed && len(c.provs) == 1 {
			g.owner[d] = c.provs[0]
		} else {
			g.owner[d] = -1
		}
	} else {
		p := lv.provs[g.idx[d]]
		g.pick[d] = p
		recs, ok = g.add(recs, Amount{Provider: p, Class: gc.classes[lv.ci], Amount: gc.amounts[lv.ci]})
		g.owner[d] = -1
		if ok && lv.last && len(gc.required) > 0 {
			ok = g.s.multiTraitsOK(gc, g.pick[lv.first:d+1])
		}
	}
	g.undo[d] = recs
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

func (lv *level) size() int {
	if lv.cands != nil {
		return len(lv.cands)
	}
	return len(lv.provs)
}

// next returns the next combination (one request per group, valid until the
// following call) that passes the per-path checks and same_subtree, or
// false when the anchor is exhausted.
func (g *anchorGen) next() ([]*gcand, bool) {
	n := len(g.levels)
	for !g.done {
		if g.s.stopped() {
			g.done = true
			return nil, false
		}
		if g.s.anchorsOnly {
			// Explain only needs to know whether the anchor has a
			// combination; an anchor whose groups multiply into more than
			// the budget is left undecided rather than walked for ever.
			if g.steps++; g.steps > ExplainBudget {
				g.done = true
				g.s.undecided.set(g.anchor)
				return nil, false
			}
		}
		d := g.depth
		if g.idx[d] >= g.levels[d].size() {
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
		if !g.push(d) {
			g.idx[d]++
			continue
		}
		if d+1 < n {
			g.depth++
			continue
		}
		mi := 0
		for k := range g.levels {
			lv := &g.levels[k]
			switch {
			case lv.cands != nil:
				g.combo[lv.gi] = lv.cands[g.idx[k]]
			case lv.last:
				g.multi[mi] = g.s.buildMulti(g.ctxs[lv.gi], g.anchor, g.pick[lv.first:k+1])
				g.combo[lv.gi] = &g.multi[mi]
				mi++
			}
		}
		g.pop(d)
		g.idx[d]++
		if g.s.sameSubtreeOK(g.ctxs, g.combo) {
			return g.combo, true
		}
	}
	return nil, false
}

func (s *searcher) sameSubtreeOK(ctxs []*groupCtx, combo []*gcand) bool {
	m := s.m
	for _, set := range s.req.SameSubtree {
		ps := s.subtree[:0]
		for _, suf := range set {
			for gi, gc := range ctxs {
				if gc.g.Suffix == suf {
					ps = append(ps, combo[gi].provs...)
				}
			}
		}
		s.subtree = ps // keep the grown buffer for the next combination
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
func (s *searcher) merge(ctxs []*groupCtx, per [][]gcand, multi []multiTrees) *Result {
	m := s.m
	ng := len(ctxs)
	// Per group, the anchors in ascending order, each with the group's
	// candidates there (single-provider groups; a stable sort keeps each
	// anchor's own order) or its per-class provider lists (multi-provider).
	type run struct {
		anchor int32
		items  []*gcand
		lists  [][]int32
	}
	runs := make([][]run, ng)
	for gi := range ctxs {
		if s.isMulti(ctxs[gi]) {
			mt := multi[gi]
			runs[gi] = make([]run, len(mt.anchors))
			for k, a := range mt.anchors {
				runs[gi][k] = run{anchor: a, lists: mt.lists[k]}
			}
			continue
		}
		ptrs := make([]*gcand, len(per[gi]))
		for k := range per[gi] {
			ptrs[k] = &per[gi][k]
		}
		slices.SortStableFunc(ptrs, func(a, b *gcand) int { return cmp.Compare(a.anchor, b.anchor) })
		nr := 0
		for k := range ptrs {
			if k == 0 || ptrs[k].anchor != ptrs[k-1].anchor {
				nr++
			}
		}
		runs[gi] = make([]run, 0, nr)
		for lo := 0; lo < len(ptrs); {
			hi := lo + 1
			for hi < len(ptrs) && ptrs[hi].anchor == ptrs[lo].anchor {
				hi++
			}
			runs[gi] = append(runs[gi], run{anchor: ptrs[lo].anchor, items: ptrs[lo:hi:hi]})
			lo = hi
		}
	}
	nl, nm := 0, 0 // levels per anchor, multi-provider groups
	for _, gc := range ctxs {
		if s.isMulti(gc) {
			nl += len(gc.classes)
			nm++
		} else {
			nl++
		}
	}
	// Anchors every group has, by merge-joining the runs; per anchor the
	// run index of every group.
	anchors := make([]int32, 0, len(runs[0]))
	runAt := make([]int32, 0, len(runs[0])*ng)
	pos := make([]int, ng)
	for r0i, r0 := range runs[0] {
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
		runAt = append(runAt, int32(r0i))
		for gi := 1; gi < ng; gi++ {
			runAt = append(runAt, int32(pos[gi]))
		}
	}
	// A combination holds at most one amount per class of every group, so
	// the running sums and undo records fit in preallocated room.
	k := 0
	for _, gc := range ctxs {
		k += len(gc.classes)
	}
	// newGens allocates n walkers, one backing array per field.
	newGens := func(n int) []anchorGen {
		gens := make([]anchorGen, n)
		levels := make([]level, n*nl)
		idx := make([]int, n*nl)
		undo := make([][]undoRec, n*nl)
		owner := make([]int32, n*nl)
		pick := make([]int32, n*nl)
		combos := make([]*gcand, n*ng)
		multis := make([]gcand, n*nm)
		accs := make([]accEntry, n*k)
		recs := make([]undoRec, n*k)
		for i := range gens {
			lo, hi := i*nl, (i+1)*nl
			gens[i] = anchorGen{s: s, ctxs: ctxs, levels: levels[lo:hi:hi], idx: idx[lo:hi:hi],
				undo: undo[lo:hi:hi], owner: owner[lo:hi:hi], pick: pick[lo:hi:hi],
				combo: combos[i*ng : (i+1)*ng : (i+1)*ng], multi: multis[i*nm : (i+1)*nm : (i+1)*nm],
				acc: accs[i*k : i*k : (i+1)*k]}
			g := &gens[i]
			off := i * k
			for d := range g.undo {
				g.undo[d] = recs[off:off:off]
			}
			g.recs = recs[i*k : (i+1)*k : (i+1)*k]
		}
		return gens
	}
	// reset points walker g at anchor i, ready to walk it from the start.
	reset := func(g *anchorGen, i int) {
		g.anchor, g.depth, g.done, g.acc, g.steps = anchors[i], 0, false, g.acc[:0], 0
		d, off := 0, 0
		for gi := range ng {
			r := &runs[gi][runAt[i*ng+gi]]
			if r.items != nil {
				n := len(ctxs[gi].classes)
				g.levels[d] = level{gi: int32(gi), cands: r.items}
				g.undo[d] = g.recs[off : off : off+n]
				off += n
				d++
				continue
			}
			first := int32(d)
			for ci, l := range r.lists {
				g.levels[d] = level{gi: int32(gi), provs: l, ci: int32(ci), first: first, last: ci == len(r.lists)-1}
				g.undo[d] = g.recs[off : off : off+1]
				off++
				d++
			}
		}
		for d := range g.idx {
			g.idx[d], g.owner[d] = 0, -1
		}
	}

	// The order of Placement's stages (AllocationCandidates._get_by_requests,
	// placement/objects/allocation_candidate.py:134-181 in Placement 13.0.0):
	//  1. _merge_candidates (:741) generates the merged candidates into a
	//     set, depth- or breadth-first (_generate_areq_lists, :722), and
	//     stops once the set holds [placement] max_allocation_candidates
	//     (:822, checked after each add);
	//  2. below microversion 1.29 on a cloud with trees,
	//     RequestWideSearchContext.exclude_nested_providers
	//     (research_context.py:259) drops every candidate using two
	//     providers of one tree, and the summaries of providers no kept
	//     candidate uses;
	//  3. limit_results (research_context.py:291) applies ?limit=.
	// So a candidate step 2 drops has already counted toward step 1's
	// bound: below 1.29 on trees Placement may return fewer than
	// max_allocation_candidates, even none, where other candidates would
	// have passed. nestedCut says that case is on: dropped candidates are
	// then kept in the set (they count, once each, as Placement's set
	// holds them) and removed after generation. Without a bound the order
	// of 1 and 2 changes nothing, and they are dropped as they come.
	excludeNested := !s.nestedAware && m.hasTrees
	nestedCut := excludeNested && s.opt.MaxCandidates > 0
	limit := s.req.Limit
	stop := 0
	if limit > 0 && !s.opt.Randomize && !excludeNested {
		stop = limit
	}
	if s.opt.MaxCandidates > 0 && (stop == 0 || s.opt.MaxCandidates < stop) {
		stop = s.opt.MaxCandidates
	}
	// dropped marks, when nestedCut, the candidates of out that step 2
	// removes.
	var dropped []bool

	// Duplicates (AllocationRequest equality) are found by a 64-bit hash of
	// the candidate's key, confirmed on the rare collision by comparing the
	// keys, so no key string is allocated per candidate.
	seen := make(map[uint64]int32, len(anchors))
	// Room for one candidate per anchor (or the cap) avoids most regrowth.
	want := len(anchors)
	if stop > 0 {
		want = min(want, stop)
	}
	chain := make([]int32, 0, want) // next candidate with the same hash, -1 ends
	out := make([]Candidate, 0, want)
	anchored := newBitset(len(m.providers))
	emit := func(anchor int32, combo []*gcand) bool {
		c := s.consolidate(anchor, ctxs, combo)
		drop := excludeNested && usesTwoOfOneTree(m, c.Resources)
		if drop && !nestedCut {
			return true
		}
		if !drop {
			anchored.set(anchor)
		}
		h := candidateHash(&c)
		head, ok := seen[h]
		if ok {
			for i := head; i >= 0; i = chain[i] {
				if sameCandidate(&c, &out[i]) {
					return true
				}
			}
		} else {
			head = -1
		}
		if s.ceiling > 0 && len(out) >= s.ceiling {
			s.err = &CeilingError{Ceiling: s.ceiling}
			return false
		}
		if s.maxBytes > 0 && s.spent() > s.maxBytes {
			s.err = &CeilingError{Bytes: s.maxBytes}
			return false
		}
		seen[h] = int32(len(out))
		chain = append(chain, head)
		out = append(out, c)
		if nestedCut {
			dropped = append(dropped, drop)
		}
		return stop == 0 || len(out) < stop
	}
	if s.opt.Strategy == "breadth-first" {
		// Every anchor's walker is live at once.
		backing := newGens(len(anchors))
		live := make([]*anchorGen, len(anchors))
		for i := range backing {
			reset(&backing[i], i)
			live[i] = &backing[i]
		}
		for len(live) > 0 && s.err == nil {
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
		// One anchor at a time: a single walker is reused.
		g := &newGens(1)[0]
	outer:
		for i := range anchors {
			if s.err != nil {
				break
			}
			reset(g, i)
			for {
				combo, ok := g.next()
				if !ok {
					break
				}
				if !emit(g.anchor, combo) {
					break outer
				}
				if s.anchorsOnly && anchored.has(g.anchor) {
					break
				}
			}
		}
	}

	if nestedCut {
		// Step 2 after step 1's bound: the generated candidates that use
		// two providers of one tree go now.
		k := 0
		for i := range out {
			if !dropped[i] {
				out[k] = out[i]
				k++
			}
		}
		clear(out[k:])
		out = out[:k]
	}
	// Pre-1.29 summaries only list providers used by some (pre-limit)
	// kept candidate; remember them before limiting.
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
	res := &Result{model: m, Candidates: out, anchored: anchored, undecided: s.undecided}
	roots := newBitset(len(m.providers))
	for i := range out {
		for _, a := range out[i].Resources {
			roots.set(m.providers[a.Provider].Root)
		}
	}
	inSummary := func(i int) bool {
		return roots.has(m.providers[i].Root) && (usedBefore == nil || usedBefore.has(int32(i)))
	}
	n := 0
	for i := range m.providers {
		if inSummary(i) {
			n++
		}
	}
	res.Summaries = make([]int32, 0, n)
	for i := range m.providers {
		if inSummary(i) {
			res.Summaries = append(res.Summaries, int32(i))
		}
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

func (s *searcher) consolidate(anchor int32, ctxs []*groupCtx, combo []*gcand) Candidate {
	if len(combo) == 1 {
		// One group's request is already sorted and consolidated; results
		// are read-only, so it can be shared rather than copied.
		c := combo[0]
		maps := s.maps.take(1)
		maps[0] = Mapping{Suffix: ctxs[0].g.Suffix, Providers: c.provs}
		s.bytes += candidateBytes + mappingBytes
		return Candidate{Anchor: anchor, Resources: c.res, Mappings: maps}
	}
	n := 0
	for _, c := range combo {
		n += len(c.res)
	}
	res := s.amounts.take(n)[:0]
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
	maps := s.maps.take(len(combo))
	s.bytes += candidateBytes + int64(n)*amountBytes + int64(len(combo))*mappingBytes
	for gi, c := range combo {
		maps[gi] = Mapping{Suffix: ctxs[gi].g.Suffix, Providers: c.provs}
	}
	return Candidate{Anchor: anchor, Resources: res[:k], Mappings: maps}
}

// spent is the bytes of candidates this search (and, with opt.Shared, the
// others) built. The shared count is brought up to date every 64 KiB, so
// searches on other cores seldom meet on it.
func (s *searcher) spent() int64 {
	if s.opt.Shared == nil {
		return s.bytes
	}
	if d := s.bytes - s.flushed; d >= 1<<16 {
		s.opt.Shared.used.Add(d)
		s.flushed = s.bytes
	}
	return s.opt.Shared.used.Load() + s.bytes - s.flushed
}

// The bytes one candidate takes: its struct with the index entries that
// find duplicates, each Amount, each Mapping (the providers it names are
// the group's, shared).
const (
	candidateBytes = 56 + 16
	amountBytes    = 16
	mappingBytes   = 40
)

// candidateHash hashes what AllocationRequest.__eq__ compares: the
// resources and the mappings, not the anchor. Mappings are in request group
// order, the same for every candidate of a request, so only their providers
// are mixed in; sameCandidate settles collisions.
func candidateHash(c *Candidate) uint64 {
	h := uint64(len(c.Resources))
	mix := func(v uint64) {
		h ^= v
		h *= 0x9e3779b97f4a7c15
		h ^= h >> 29
	}
	for _, a := range c.Resources {
		mix(uint64(uint32(a.Provider))<<32 | uint64(uint32(a.Class)))
		mix(uint64(a.Amount))
	}
	for _, mp := range c.Mappings {
		mix(uint64(len(mp.Providers)))
		for _, p := range mp.Providers {
			mix(uint64(uint32(p)))
		}
	}
	return h
}

func sameCandidate(a, b *Candidate) bool {
	if !slices.Equal(a.Resources, b.Resources) || len(a.Mappings) != len(b.Mappings) {
		return false
	}
	for i := range a.Mappings {
		if a.Mappings[i].Suffix != b.Mappings[i].Suffix || !slices.Equal(a.Mappings[i].Providers, b.Mappings[i].Providers) {
			return false
		}
	}
	return true
}
