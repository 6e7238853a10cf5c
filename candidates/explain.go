package candidates

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ReasonKind classifies why a root provider yielded no candidate.
type ReasonKind string

// Reason kinds, roughly in the order the search applies its filters.
const (
	ReasonBadRequest         ReasonKind = "bad_request"
	ReasonRootRequired       ReasonKind = "root_required"
	ReasonNotInTree          ReasonKind = "not_in_tree"
	ReasonMissingClass       ReasonKind = "missing_class"
	ReasonCapacity           ReasonKind = "capacity"
	ReasonMinUnit            ReasonKind = "min_unit"
	ReasonMaxUnit            ReasonKind = "max_unit"
	ReasonStepSize           ReasonKind = "step_size"
	ReasonNotInAggregate     ReasonKind = "not_in_aggregate"
	ReasonForbiddenAggregate ReasonKind = "forbidden_aggregate"
	ReasonForbiddenTrait     ReasonKind = "forbidden_trait"
	ReasonMissingTrait       ReasonKind = "missing_trait"
	ReasonResourceless       ReasonKind = "resourceless_quirk"
	ReasonGroupUnsatisfied   ReasonKind = "group_unsatisfied"
	ReasonNoCombination      ReasonKind = "no_combination"
	ReasonIsolate            ReasonKind = "isolate_conflict"
	ReasonSameSubtree        ReasonKind = "same_subtree_conflict"
	ReasonMergedCapacity     ReasonKind = "merged_capacity"
	ReasonNestedBefore129    ReasonKind = "nested_before_1_29"
	ReasonSharingOnly        ReasonKind = "sharing_only"
	// ReasonIncomplete marks a host Explain gave up on (ExplainBudget):
	// whether it has a candidate is not known.
	ReasonIncomplete ReasonKind = "explanation_incomplete"
)

// ExplainBudget bounds the combinations of request groups Explain walks per
// host, in its search for a valid one and in its count of why they fail.
// Groups multiply (twenty groups of two providers each are a million
// combinations per host), so without a bound an explanation costs time
// exponential in the number of groups and same_subtree entries; with it,
// the cost is polynomial, and a host whose combinations run past the budget
// is reported as ReasonIncomplete instead of being guessed at.
const ExplainBudget = 20000

// Explanation says why one root provider yielded no allocation candidate.
type Explanation struct {
	RootUUID string
	RootName string
	// Group is the suffix of the group that rules the root out ("" for the
	// unsuffixed group, and for reasons about the whole request).
	Group   string
	Kind    ReasonKind
	Message string
}

// Explain returns, for every root provider (sharing providers excepted, they
// only anchor themselves) that anchors no candidate, the first reason that
// rules it out: request-wide filters first, then each group in request order,
// then the combination of groups. A request Placement rejects yields a
// single ReasonBadRequest explanation.
//
// It is bounded as Search is (opt's ceilings, the defaults when zero) and
// stops soon after ctx is cancelled, with the context's cause as its error.
func (m *Model) Explain(ctx context.Context, req *Request, opt Options) ([]Explanation, error) {
	full := *req
	full.Limit = 0
	opt = Options{Ceiling: opt.Ceiling, CeilingBytes: opt.CeilingBytes, MaxSteps: opt.MaxSteps}
	res, err := m.search(ctx, &full, opt, true)
	var ce *CeilingError
	var se *StepsError
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return nil, context.Cause(ctx)
	case errors.As(err, &ce), errors.As(err, &se):
		return nil, err
	default:
		return []Explanation{{Kind: ReasonBadRequest, Message: err.Error()}}, nil
	}
	s := newSearcher(ctx, m, &full, opt)
	if len(full.RootRequired) > 0 || len(full.RootForbidden) > 0 {
		s.anchorOK, _ = s.anchorRoots()
		if s.anchorOK == nil {
			s.anchorOK = newBitset(len(m.providers))
		}
	}
	// Per-group candidates from the real search, bucketed by anchor.
	ctxs := make([]*groupCtx, len(full.Groups))
	byAnchor := make([]map[int32][]*gcand, len(full.Groups))
	for i := range full.Groups {
		gc, _ := s.resolveGroup(&full.Groups[i])
		ctxs[i] = gc
		b := map[int32][]*gcand{}
		if gc != nil {
			var cands []gcand
			if s.isMulti(gc) {
				// A sample per host is enough to name the reason.
				cands = s.multiProvider(gc, explainSample)
			} else {
				cands = s.singleProvider(gc)
			}
			for k := range cands {
				b[cands[k].anchor] = append(b[cands[k].anchor], &cands[k])
			}
		}
		byAnchor[i] = b
	}

	var out []Explanation
	for _, r := range m.roots {
		if err := context.Cause(ctx); err != nil {
			return nil, err
		}
		if s.err != nil {
			return nil, s.err
		}
		if res.anchors(r) || m.isSharing.has(r) {
			continue
		}
		root := &m.providers[r]
		e := Explanation{RootUUID: root.UUID, RootName: root.Name}
		if res.undecided != nil && res.undecided.has(r) {
			e.Kind = ReasonIncomplete
			e.Message = fmt.Sprintf("explanation incomplete: its request groups combine in more than %d ways here and none of the first %d was valid; whether a later one is was not worked out", ExplainBudget, ExplainBudget)
			out = append(out, e)
			continue
		}
		if !s.anchorAllowed(r) {
			e.Kind, e.Message = ReasonRootRequired, m.rootRequiredMessage(r, &full)
			out = append(out, e)
			continue
		}
		done := false
		for gi := range full.Groups {
			if len(byAnchor[gi][r]) > 0 {
				continue
			}
			g := &full.Groups[gi]
			e.Group = g.Suffix
			e.Kind, e.Message = s.explainGroup(r, g)
			e.Message = groupLabel(g.Suffix) + ": " + e.Message
			done = true
			break
		}
		if !done {
			lists := make([][]*gcand, len(full.Groups))
			for gi := range lists {
				lists[gi] = byAnchor[gi][r]
			}
			e.Kind, e.Message = s.explainMerge(r, ctxs, lists)
		}
		out = append(out, e)
	}
	if err := context.Cause(ctx); err != nil {
		return nil, err
	}
	if s.err != nil {
		return nil, s.err
	}
	return out, nil
}

// explainSample bounds how many of a group's candidates per host Explain
// looks at when it must say why they do not combine.
const explainSample = 1000

func groupLabel(suffix string) string {
	if suffix == "" {
		return "unsuffixed group"
	}
	return fmt.Sprintf("group %q", suffix)
}

func (m *Model) rootRequiredMessage(r int32, req *Request) string {
	p := &m.providers[r]
	var missing, present []string
	for _, n := range req.RootRequired {
		if t, ok := m.traitIndex[n]; !ok || !p.hasTrait(t) {
			missing = append(missing, n)
		}
	}
	for _, n := range req.RootForbidden {
		if t, ok := m.traitIndex[n]; ok && p.hasTrait(t) {
			present = append(present, n)
		}
	}
	var parts []string
	if len(missing) > 0 {
		parts = append(parts, "lacks "+strings.Join(missing, ", "))
	}
	if len(present) > 0 {
		parts = append(parts, "has forbidden "+strings.Join(present, ", "))
	}
	return fmt.Sprintf("root_required: root %s %s", p.Name, strings.Join(parts, " and "))
}

// treeOf returns the providers of root r's tree, root first.
func (m *Model) treeOf(r int32) []int32 {
	out := []int32{r}
	for i := 0; i < len(out); i++ {
		out = append(out, m.providers[out[i]].Children...)
	}
	return out
}

func (m *Model) sharingFor(r int32) []int32 {
	var out []int32
	for i, sp := range m.sharing {
		if m.providers[sp].Root == r {
			continue
		}
		if _, ok := slices.BinarySearch(m.sharingAnchors[i], r); ok {
			out = append(out, sp)
		}
	}
	return out
}

func (m *Model) names(ps []int32) string {
	n := make([]string, len(ps))
	for i, p := range ps {
		n[i] = m.providers[p].Name
	}
	if len(n) > 4 {
		n = append(n[:4], fmt.Sprintf("and %d more", len(ps)-4))
	}
	return strings.Join(n, ", ")
}

// noneOf phrases a negative about providers for a person: "numa0 does not
// have" for one, "none of numa0, numa1 has" for several.
func (m *Model) noneOf(ps []int32, one, many string) string {
	if len(ps) == 1 {
		return m.providers[ps[0]].Name + " " + one
	}
	return "none of " + m.names(ps) + " " + many
}

// explainGroup walks the filters one group applies at root r, in the order
// Placement applies them, and reports the first that leaves nothing.
func (s *searcher) explainGroup(r int32, g *RequestGroup) (ReasonKind, string) {
	m := s.m
	tr := int32(-1) // root of the in_tree provider's tree
	if g.InTree != "" {
		p, ok := m.byUUID[g.InTree]
		if !ok {
			return ReasonNotInTree, fmt.Sprintf("in_tree provider %s does not exist", g.InTree)
		}
		// A granular group may still reach r through a sharing provider
		// of the in_tree tree.
		tr = m.providers[p].Root
		viaSharing := g.UseSameProvider() && slices.ContainsFunc(m.sharingFor(r), func(s int32) bool { return m.providers[s].Root == tr })
		if tr != r && len(g.Resources) > 0 && !viaSharing {
			return ReasonNotInTree, fmt.Sprintf("in_tree=%s confines it to the tree of %s", m.providers[p].Name, m.providers[tr].Name)
		}
	}
	multi := !g.UseSameProvider() && len(g.Resources) > 0 && (len(m.sharing) > 0 || m.hasTrees)
	scope := m.treeOf(r)
	if g.UseSameProvider() || (multi && g.InTree == "") {
		scope = append(scope, m.sharingFor(r)...)
	}
	if !g.UseSameProvider() && !multi {
		scope = []int32{r}
	}
	if tr >= 0 && len(g.Resources) > 0 {
		// Every provider looked at below is then in the in_tree tree.
		scope = slices.DeleteFunc(scope, func(p int32) bool { return m.providers[p].Root != tr })
	}
	// Aggregates: a provider qualifies if it is in every member_of set
	// itself, or (multi-provider path, own tree only) if the root is: a
	// sharing provider must be in the aggregates itself.
	inAllSets := func(p int32) bool {
		for _, set := range g.MemberOf {
			ok := false
			for _, u := range set {
				if a, known := m.aggIndex[u]; known && m.providers[p].inAgg(a) {
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
	inAggs := func(p int32) bool {
		return inAllSets(p) || (multi && m.providers[p].Root == r && inAllSets(r))
	}
	badAgg := func(p int32) bool {
		for _, u := range g.ForbiddenAggs {
			if a, ok := m.aggIndex[u]; ok && (m.providers[p].inAgg(a) || (multi && m.providers[r].inAgg(a))) {
				return true
			}
		}
		return false
	}
	forbidden := func(p int32) string {
		for _, n := range g.ForbiddenTraits {
			if t, ok := m.traitIndex[n]; ok && m.providers[p].hasTrait(t) {
				return n
			}
		}
		return ""
	}
	if len(g.Resources) == 0 {
		if len(g.RequiredTraits) == 0 && len(g.MemberOf) == 0 {
			return ReasonResourceless, "a resourceless group with only forbidden traits or in_tree matches nothing in Placement 8.0.0"
		}
	}
	names := make([]string, 0, len(g.Resources))
	for n := range g.Resources {
		names = append(names, n)
	}
	slices.Sort(names)
	cands := scope
	if !multi && len(names) > 1 {
		// One provider must hold every class: first say whether any has
		// them all, then whether one has room for them all.
		haveAll := m.holdingAll(scope, names)
		if len(haveAll) == 0 {
			for _, n := range names {
				c, ok := m.classIndex[n]
				if !ok {
					return ReasonMissingClass, fmt.Sprintf("resource class %s does not exist", n)
				}
				if !slices.ContainsFunc(scope, func(p int32) bool { return m.providers[p].inventory(c) != nil }) {
					return ReasonMissingClass, fmt.Sprintf("no provider in tree has %s inventory", n)
				}
			}
			return ReasonMissingClass, fmt.Sprintf("no single provider has inventory of all of %s (a granular group takes them from one provider)", strings.Join(names, ", "))
		}
		cands = haveAll
	}
	var perClass [][]int32
	for _, n := range names {
		amount := g.Resources[n]
		c, ok := m.classIndex[n]
		if !ok {
			return ReasonMissingClass, fmt.Sprintf("resource class %s does not exist", n)
		}
		pool := cands
		if multi {
			pool = scope
		}
		var have, fit []int32
		for _, p := range pool {
			if inv := m.providers[p].inventory(c); inv != nil {
				have = append(have, p)
				if inv.fits(amount) {
					fit = append(fit, p)
				}
			}
		}
		if len(have) == 0 {
			if g.UseSameProvider() && len(perClass) > 0 {
				return ReasonMissingClass, fmt.Sprintf("no provider that can give %s also has %s inventory", strings.Join(names[:len(perClass)], ", "), n)
			}
			return ReasonMissingClass, fmt.Sprintf("no provider in tree has %s inventory", n)
		}
		if len(fit) == 0 {
			return m.unitReason(have, c, n, amount)
		}
		if !multi {
			cands = fit
		}
		perClass = append(perClass, fit)
	}
	filter := func(ps []int32, keep func(int32) bool) []int32 {
		var out []int32
		for _, p := range ps {
			if keep(p) {
				out = append(out, p)
			}
		}
		return out
	}
	if !multi {
		// cands is scope itself for a resourceless group.
		perClass = [][]int32{cands}
	}
	for i, ps := range perClass {
		if len(g.MemberOf) > 0 {
			kept := filter(ps, inAggs)
			if len(kept) == 0 {
				return ReasonNotInAggregate, fmt.Sprintf("%s in the member_of aggregates%s", m.noneOf(ps, "is not", "is"), aggHint(multi))
			}
			ps = kept
		}
		if len(g.ForbiddenAggs) > 0 {
			kept := filter(ps, func(p int32) bool { return !badAgg(p) })
			if len(kept) == 0 {
				return ReasonForbiddenAggregate, fmt.Sprintf("%s %s in a forbidden aggregate", m.names(ps), isAre(len(ps)))
			}
			ps = kept
		}
		if len(g.ForbiddenTraits) > 0 {
			kept := filter(ps, func(p int32) bool { return forbidden(p) == "" })
			if len(kept) == 0 {
				return ReasonForbiddenTrait, fmt.Sprintf("%s %s forbidden trait %s", m.names(ps), hasHave(len(ps)), forbidden(ps[0]))
			}
			ps = kept
		}
		perClass[i] = ps
	}
	// Required traits: on one provider for the single-provider path, on the
	// union of contributing providers for the multi-provider path.
	for _, set := range g.RequiredTraits {
		found := false
		for _, ps := range perClass {
			for _, p := range ps {
				if m.holdsAny(p, set) {
					found = true
				}
			}
		}
		if !found {
			var all []int32
			for _, ps := range perClass {
				all = append(all, ps...)
			}
			slices.Sort(all)
			all = slices.Compact(all)
			return ReasonMissingTrait, fmt.Sprintf("%s trait %s", m.noneOf(all, "does not have", "has"), strings.Join(set, " or "))
		}
	}
	if !multi && len(g.RequiredTraits) > 0 {
		if len(filter(perClass[0], func(p int32) bool {
			for _, set := range g.RequiredTraits {
				if !m.holdsAny(p, set) {
					return false
				}
			}
			return true
		})) == 0 {
			return ReasonMissingTrait, fmt.Sprintf("no single provider among %s has all of the required traits", m.names(perClass[0]))
		}
	}
	if multi && len(scope) > 0 {
		onlySharing := true
		for _, ps := range perClass {
			for _, p := range ps {
				if m.providers[p].Root == r {
					onlySharing = false
				}
			}
		}
		if onlySharing {
			return ReasonSharingOnly, "only sharing providers can serve it here"
		}
	}
	if multi && len(g.RequiredTraits) > 0 {
		// Each required trait is somewhere among the providers that could
		// give a class, but no one pick of a provider per class carries
		// them all: say who holds what.
		var holders []string
		for _, set := range g.RequiredTraits {
			var hs []int32
			for _, ps := range perClass {
				for _, p := range ps {
					if m.holdsAny(p, set) && !slices.Contains(hs, p) {
						hs = append(hs, p)
					}
				}
			}
			holders = append(holders, fmt.Sprintf("%s on %s", strings.Join(set, " or "), m.names(hs)))
		}
		return ReasonGroupUnsatisfied, fmt.Sprintf("each resource class comes from one provider, and no choice of them carries all the required traits together (%s)", strings.Join(holders, "; "))
	}
	return ReasonGroupUnsatisfied, "no combination of providers satisfies all of its resources and traits together"
}

func aggHint(multi bool) string {
	if multi {
		return " (neither itself nor the root)"
	}
	return " (granular groups need the provider itself in the aggregate)"
}

func isAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}

func hasHave(n int) string {
	if n == 1 {
		return "has"
	}
	return "have"
}

func (m *Model) holdsAny(p int32, set []string) bool {
	for _, n := range set {
		if t, ok := m.traitIndex[n]; ok && m.providers[p].hasTrait(t) {
			return true
		}
	}
	return false
}

// unitReason explains why none of have can give amount of class c, naming
// the provider that came closest.
func (m *Model) unitReason(have []int32, c int32, name string, amount int64) (ReasonKind, string) {
	best := have[0]
	bestFree := int64(-1 << 62)
	capOnly := false
	for _, p := range have {
		inv := m.providers[p].inventory(c)
		free := inv.Room()
		if inv.unitsOK(amount) && (!capOnly || free > bestFree) {
			best, bestFree, capOnly = p, free, true
		} else if !capOnly && free > bestFree {
			best, bestFree = p, free
		}
	}
	inv := m.providers[best].inventory(c)
	pn := m.providers[best].Name
	switch {
	case capOnly:
		return ReasonCapacity, fmt.Sprintf("no provider in tree has %s with %d free (best: %s has %d of %d free%s)",
			name, amount, pn, inv.Room(), inv.Capacity, m.sqlBoundNote(inv))
	case inv.MinUnit > amount:
		return ReasonMinUnit, fmt.Sprintf("%s %d is below min_unit %d on %s", name, amount, inv.MinUnit, pn)
	case inv.MaxUnit < amount:
		return ReasonMaxUnit, fmt.Sprintf("%s %d is above max_unit %d on %s", name, amount, inv.MaxUnit, pn)
	default:
		return ReasonStepSize, fmt.Sprintf("%s %d is not a multiple of step_size %d on %s", name, amount, inv.StepSize, pn)
	}
}

// sqlBoundNote says why an inventory has less room than capacity minus used
// suggests, when Placement's SQL filter, multiplying by the FLOAT column's
// widened value, is the stricter of its two capacity checks.
func (m *Model) sqlBoundNote(inv *Inventory) string {
	if inv.SQLLimit >= inv.Capacity {
		return ""
	}
	return fmt.Sprintf(": Placement's SQL filter multiplies by allocation_ratio as MySQL's 4-byte FLOAT stores it, (%d - %d) * %v = %v, so used + amount may reach only %d",
		inv.Total, inv.Reserved, inv.SQLRatio, float64(inv.Total-inv.Reserved)*inv.SQLRatio, inv.SQLLimit)
}

// explainMerge enumerates (a bounded number of) combinations of the groups'
// candidates at r and reports which final check rejects them.
func (s *searcher) explainMerge(r int32, ctxs []*groupCtx, lists [][]*gcand) (ReasonKind, string) {
	m := s.m
	// Each combination is consolidated to be checked, which costs more
	// than a step of the search: a tenth of the budget says as much.
	const budget = ExplainBudget / 10
	counts := map[ReasonKind]int{}
	var capDetail string
	combo := make([]*gcand, len(lists))
	seen := 0
	var rec func(d int)
	rec = func(d int) {
		if seen >= budget || s.stopped() {
			return
		}
		if d < len(lists) {
			for _, c := range lists[d] {
				combo[d] = c
				rec(d + 1)
			}
			return
		}
		seen++
		if s.req.GroupPolicy == "isolate" {
			used := map[int32]bool{}
			for gi, c := range combo {
				if ctxs[gi].suffixed {
					if used[c.provs[0]] {
						counts[ReasonIsolate]++
						return
					}
					used[c.provs[0]] = true
				}
			}
		}
		if !s.sameSubtreeOK(ctxs, combo) {
			counts[ReasonSameSubtree]++
			return
		}
		cand := s.consolidate(r, ctxs, combo)
		for _, a := range cand.Resources {
			inv := m.providers[a.Provider].inventory(a.Class)
			if inv.Used+a.Amount > inv.Capacity || a.Amount > inv.MaxUnit {
				counts[ReasonMergedCapacity]++
				if capDetail == "" {
					capDetail = fmt.Sprintf("%s would need %d %s (used %d, capacity %d, max_unit %d)",
						m.providers[a.Provider].Name, a.Amount, m.classes[a.Class].name, inv.Used, inv.Capacity, inv.MaxUnit)
				}
				return
			}
		}
		if !s.nestedAware && m.hasTrees && usesTwoOfOneTree(m, cand.Resources) {
			counts[ReasonNestedBefore129]++
		}
	}
	rec(0)
	kind, most := ReasonNoCombination, 0
	for _, k := range []ReasonKind{ReasonIsolate, ReasonSameSubtree, ReasonMergedCapacity, ReasonNestedBefore129} {
		if counts[k] > most {
			kind, most = k, counts[k]
		}
	}
	var parts []string
	if n := counts[ReasonIsolate]; n > 0 {
		parts = append(parts, fmt.Sprintf("%d put two isolated groups on one provider", n))
	}
	if n := counts[ReasonSameSubtree]; n > 0 {
		parts = append(parts, fmt.Sprintf("%d break same_subtree", n))
	}
	if n := counts[ReasonMergedCapacity]; n > 0 {
		parts = append(parts, fmt.Sprintf("%d exceed capacity once groups are added up (e.g. %s)", n, capDetail))
	}
	if n := counts[ReasonNestedBefore129]; n > 0 {
		parts = append(parts, fmt.Sprintf("%d use two providers of one tree, which microversions before 1.29 exclude", n))
	}
	if len(parts) == 0 {
		return kind, "every group fits on its own but no combination survives"
	}
	if seen >= budget {
		// Not every combination was looked at: say so.
		return kind, fmt.Sprintf("every group fits on its own, but the first %d combinations fail (explanation incomplete: the rest were not looked at): %s", seen, strings.Join(parts, "; "))
	}
	return kind, fmt.Sprintf("every group fits on its own, but all %d combinations fail: %s", seen, strings.Join(parts, "; "))
}

// holdingAll returns the providers of scope that have an inventory of every
// class named (the candidates for a group whose classes one provider must
// hold together).
func (m *Model) holdingAll(scope []int32, names []string) []int32 {
	var out []int32
	for _, p := range scope {
		all := true
		for _, n := range names {
			c, ok := m.classIndex[n]
			if !ok || m.providers[p].inventory(c) == nil {
				all = false
				break
			}
		}
		if all {
			out = append(out, p)
		}
	}
	return out
}
