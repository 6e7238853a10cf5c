package candidates

import (
	"context"
	"errors"
	"fmt"
	"slices"
)

// CheckExplain proves Explain against the search and the model rather than
// trusting its heuristics: the roots it names (sharing providers excepted)
// must be exactly the roots that anchor no candidate of the unlimited answer,
// and each reason's kind must hold when re-derived from the model by a
// brute-force search written independently of explain.go. It is exported
// so that the differential test can run it on the clouds it writes through
// the real placement-api; it returns the first inconsistency found.
func (m *Model) CheckExplain(req *Request) error {
	full := *req
	full.Limit = 0
	ex, exErr := m.Explain(context.Background(), &full, Options{})
	res, err := m.Search(context.Background(), &full, Options{})
	var ce *CeilingError
	var se *StepsError
	switch {
	case exErr != nil && err == nil:
		return fmt.Errorf("explain stopped (%v) where the search answered", exErr)
	case exErr != nil, errors.As(err, &ce), errors.As(err, &se):
		// Past a ceiling there is no full answer to check against.
		return nil
	}
	if err != nil {
		if len(ex) != 1 || ex[0].Kind != ReasonBadRequest {
			return fmt.Errorf("rejected request (%v) explained as %+v", err, ex)
		}
		return nil
	}
	got := map[string]*Explanation{}
	for i := range ex {
		e := &ex[i]
		if _, dup := got[e.RootUUID]; dup {
			return fmt.Errorf("root %s explained twice", e.RootName)
		}
		got[e.RootUUID] = e
	}
	for _, r := range m.roots {
		p := &m.providers[r]
		e, named := got[p.UUID]
		switch {
		case m.isSharing.has(r):
			if named {
				return fmt.Errorf("sharing provider %s explained: %s", p.Name, e.Message)
			}
		case named && e.Kind == ReasonIncomplete:
			// Explain gave up on this host (ExplainBudget) and says so;
			// either answer of the search is consistent with that.
		case res.anchors(r):
			if named {
				return fmt.Errorf("root %s anchors a candidate but is explained: [%s] %s", p.Name, e.Kind, e.Message)
			}
		case !named:
			return fmt.Errorf("root %s anchors no candidate but is not explained", p.Name)
		default:
			if err := m.checkReason(&full, r, e); err != nil {
				return fmt.Errorf("root %s: [%s] %q: %w", p.Name, e.Kind, e.Message, err)
			}
		}
		delete(got, p.UUID)
	}
	for _, e := range got {
		return fmt.Errorf("explanation for %s, which is not a root: %s", e.RootName, e.Message)
	}
	return nil
}

// groupLevel says whether a kind blames one group on its own (a switch, not
// a map: nothing is built at init).
func groupLevel(k ReasonKind) bool {
	switch k {
	case ReasonNotInTree, ReasonMissingClass, ReasonCapacity, ReasonMinUnit,
		ReasonMaxUnit, ReasonStepSize, ReasonNotInAggregate,
		ReasonForbiddenAggregate, ReasonForbiddenTrait, ReasonMissingTrait,
		ReasonResourceless, ReasonGroupUnsatisfied, ReasonSharingOnly:
		return true
	}
	return false
}

func (m *Model) checkReason(req *Request, r int32, e *Explanation) error {
	if e.Kind == ReasonRootRequired {
		if rootFails(m, req, r) {
			return nil
		}
		return fmt.Errorf("the root satisfies root_required")
	}
	if rootFails(m, req, r) {
		return fmt.Errorf("root_required rules the root out first")
	}
	if groupLevel(e.Kind) {
		g := req.Group(e.Group)
		if g == nil {
			return fmt.Errorf("no group %q in the request", e.Group)
		}
		bf := m.bruteGroup(r, g)
		if bf.servable {
			return fmt.Errorf("group %q can be served at this root on its own", e.Group)
		}
		for _, o := range req.Groups {
			if o.Suffix == g.Suffix {
				break
			}
			if !m.bruteGroup(r, &o).servable {
				return fmt.Errorf("an earlier group %q already fails here", o.Suffix)
			}
		}
		return bf.backs(e.Kind)
	}
	// A reason about the combination: every group must be servable alone.
	for i := range req.Groups {
		if !m.bruteGroup(r, &req.Groups[i]).servable {
			return fmt.Errorf("blames the combination, but group %q fails on its own", req.Groups[i].Suffix)
		}
	}
	switch e.Kind {
	case ReasonNoCombination, ReasonMergedCapacity:
	case ReasonIsolate:
		if req.GroupPolicy != "isolate" {
			return fmt.Errorf("group_policy is not isolate")
		}
	case ReasonSameSubtree:
		if len(req.SameSubtree) == 0 {
			return fmt.Errorf("no same_subtree in the request")
		}
	case ReasonNestedBefore129:
		if req.Microversion >= 29 || !m.hasTrees {
			return fmt.Errorf("the pre-1.29 exclusion does not apply")
		}
	default:
		return fmt.Errorf("unknown kind")
	}
	return nil
}

func rootFails(m *Model, req *Request, r int32) bool {
	for _, n := range req.RootRequired {
		if t, ok := m.traitIndex[n]; !ok || !m.providers[r].hasTrait(t) {
			return true
		}
	}
	for _, n := range req.RootForbidden {
		if t, ok := m.traitIndex[n]; ok && m.providers[r].hasTrait(t) {
			return true
		}
	}
	return false
}

// bruteFacts is what a brute-force search of one group at one root found
// out: whether it can be served, and every reason kind that truly holds
// (several can: one class may be missing while another lacks room).
type bruteFacts struct {
	servable bool
	kinds    map[ReasonKind]bool
}

func (f *bruteFacts) backs(k ReasonKind) error {
	ok := f.kinds[k]
	if k == ReasonGroupUnsatisfied || k == ReasonSharingOnly {
		// Only "the group fails here", which servable already checked;
		// but no plainer reason may be available.
		ok = len(f.kinds) == 0
	}
	if !ok {
		return fmt.Errorf("the model does not back it (true kinds: %v)", f.kinds)
	}
	return nil
}

// bruteGroup searches group g at root r from first principles: which
// providers can contribute, and whether any assignment of its classes to
// them satisfies every constraint. It records every filter that, on its
// own stage, leaves nothing (for the multi-provider path: for some class).
func (m *Model) bruteGroup(r int32, g *RequestGroup) bruteFacts {
	f := bruteFacts{kinds: map[ReasonKind]bool{}}
	treeRoot := int32(-1)
	if g.InTree != "" {
		p, ok := m.byUUID[g.InTree]
		if !ok {
			f.kinds[ReasonNotInTree] = true
			return f
		}
		treeRoot = m.providers[p].Root
	}
	single := g.UseSameProvider() || len(g.Resources) == 0 || (len(m.sharing) == 0 && !m.hasTrees)
	// Scope: r's tree, plus sharing providers that share an aggregate with
	// some provider of r's tree.
	var scope []int32
	for i := range m.providers {
		p := &m.providers[i]
		inTree := p.Root == r
		shared := false
		if !inTree && m.isSharing.has(int32(i)) && (single || treeRoot < 0) {
			for _, a := range p.Aggregates {
				for _, q := range m.aggProviders[a] {
					if m.providers[q].Root == r {
						shared = true
					}
				}
			}
		}
		if !inTree && !shared {
			continue
		}
		if single && len(g.Resources) > 0 && !g.UseSameProvider() && int32(i) != r {
			continue // flat deployment: the unsuffixed group is the root alone
		}
		scope = append(scope, int32(i))
	}
	if treeRoot >= 0 && len(g.Resources) > 0 {
		scope = slices.DeleteFunc(scope, func(p int32) bool { return m.providers[p].Root != treeRoot })
		if len(scope) == 0 {
			f.kinds[ReasonNotInTree] = true
			return f
		}
	}
	if len(g.Resources) == 0 && len(g.RequiredTraits) == 0 && len(g.MemberOf) == 0 {
		f.kinds[ReasonResourceless] = true
		return f
	}
	inAll := func(p int32, sets [][]string) bool {
		for _, set := range sets {
			ok := false
			for _, u := range set {
				if a, known := m.aggIndex[u]; known && m.providers[p].inAgg(a) {
					ok = true
				}
			}
			if !ok {
				return false
			}
		}
		return true
	}
	inAny := func(p int32, us []string) bool {
		for _, u := range us {
			if a, known := m.aggIndex[u]; known && m.providers[p].inAgg(a) {
				return true
			}
		}
		return false
	}
	holds := func(p int32, set []string) bool {
		for _, n := range set {
			if t, ok := m.traitIndex[n]; ok && m.providers[p].hasTrait(t) {
				return true
			}
		}
		return false
	}
	forbiddenTrait := func(p int32) bool {
		for _, n := range g.ForbiddenTraits {
			if t, ok := m.traitIndex[n]; ok && m.providers[p].hasTrait(t) {
				return true
			}
		}
		return false
	}
	// The aggregate filters: a granular (single-provider) group needs the
	// provider itself; the multi-provider path also accepts the root for a
	// provider of r's own tree (a sharing provider must be in it itself).
	aggOK := func(p int32) bool {
		if len(g.MemberOf) == 0 || inAll(p, g.MemberOf) {
			return true
		}
		return !single && m.providers[p].Root == r && inAll(r, g.MemberOf)
	}
	badAgg := func(p int32) bool {
		return inAny(p, g.ForbiddenAggs) || (!single && inAny(r, g.ForbiddenAggs))
	}
	// stage applies the filters after capacity in Explain's order and
	// records the one that empties the set.
	stage := func(ps []int32) []int32 {
		steps := []struct {
			kind ReasonKind
			keep func(int32) bool
		}{
			{ReasonNotInAggregate, aggOK},
			{ReasonForbiddenAggregate, func(p int32) bool { return !badAgg(p) }},
			{ReasonForbiddenTrait, func(p int32) bool { return !forbiddenTrait(p) }},
		}
		for _, st := range steps {
			var kept []int32
			for _, p := range ps {
				if st.keep(p) {
					kept = append(kept, p)
				}
			}
			if len(kept) == 0 && len(ps) > 0 {
				f.kinds[st.kind] = true
				return nil
			}
			ps = kept
		}
		return ps
	}
	names := make([]string, 0, len(g.Resources))
	for n := range g.Resources {
		names = append(names, n)
	}
	slices.Sort(names)
	unitsOK := func(inv *Inventory, n int64) bool {
		return inv.MinUnit <= n && inv.MaxUnit >= n && inv.StepSize > 0 && n%inv.StepSize == 0
	}
	noteUnits := func(inv *Inventory, n int64) {
		switch {
		case inv.MinUnit > n:
			f.kinds[ReasonMinUnit] = true
		case inv.MaxUnit < n:
			f.kinds[ReasonMaxUnit] = true
		case inv.StepSize <= 0 || n%inv.StepSize != 0:
			f.kinds[ReasonStepSize] = true
		}
	}
	if single {
		var fit []int32
		have := m.holdingAll(scope, names)
		if len(have) == 0 && len(names) > 0 {
			f.kinds[ReasonMissingClass] = true
			return f
		}
		for _, p := range have {
			units, room := true, true
			for _, n := range names {
				inv := m.providers[p].inventory(m.classIndex[n])
				if !unitsOK(inv, g.Resources[n]) {
					units = false
				} else if g.Resources[n] > inv.Room() {
					room = false
				}
			}
			if units && room {
				fit = append(fit, p)
			}
		}
		if len(fit) == 0 && len(names) > 0 {
			// Capacity holds if some provider is ruled out by room alone,
			// for all classes or for one.
			for _, p := range have {
				for _, n := range names {
					inv := m.providers[p].inventory(m.classIndex[n])
					if unitsOK(inv, g.Resources[n]) && g.Resources[n] > inv.Room() {
						f.kinds[ReasonCapacity] = true
					}
					noteUnits(inv, g.Resources[n])
				}
			}
			return f
		}
		if len(names) == 0 {
			fit = scope
		}
		kept := stage(fit)
		if kept == nil {
			return f
		}
		for _, set := range g.RequiredTraits {
			if !slices.ContainsFunc(kept, func(p int32) bool { return holds(p, set) }) {
				f.kinds[ReasonMissingTrait] = true
			}
		}
		for _, p := range kept {
			all := true
			for _, set := range g.RequiredTraits {
				all = all && holds(p, set)
			}
			if all {
				f.servable = true
			}
		}
		if !f.servable {
			f.kinds[ReasonMissingTrait] = true
		}
		return f
	}
	// Multi-provider: every class from one provider of the scope.
	lists := make([][]int32, len(names))
	failed := false
	for ci, n := range names {
		c, ok := m.classIndex[n]
		if !ok {
			f.kinds[ReasonMissingClass] = true
			failed = true
			continue
		}
		var have, fit []int32
		for _, p := range scope {
			inv := m.providers[p].inventory(c)
			if inv == nil {
				continue
			}
			have = append(have, p)
			if unitsOK(inv, g.Resources[n]) && g.Resources[n] <= inv.Room() {
				fit = append(fit, p)
			}
		}
		if len(have) == 0 {
			f.kinds[ReasonMissingClass] = true
		}
		if len(fit) == 0 {
			// Capacity or units: this class alone cannot be served here.
			for _, p := range have {
				inv := m.providers[p].inventory(c)
				if unitsOK(inv, g.Resources[n]) {
					f.kinds[ReasonCapacity] = true
				}
				noteUnits(inv, g.Resources[n])
			}
			failed = true
			continue
		}
		lists[ci] = stage(fit)
		failed = failed || lists[ci] == nil
	}
	if failed {
		return f
	}
	var contributors []int32
	for _, l := range lists {
		contributors = append(contributors, l...)
	}
	for _, set := range g.RequiredTraits {
		if !slices.ContainsFunc(contributors, func(p int32) bool { return holds(p, set) }) {
			f.kinds[ReasonMissingTrait] = true
			return f
		}
	}
	// The product, bounded: the clouds the tests draw are small.
	pick := make([]int32, len(lists))
	budget := 200000
	var rec func(ci int) bool
	rec = func(ci int) bool {
		if budget--; budget < 0 {
			return true // give up: assume servable, the weaker claim
		}
		if ci == len(lists) {
			for _, set := range g.RequiredTraits {
				if !slices.ContainsFunc(pick, func(p int32) bool { return holds(p, set) }) {
					return false
				}
			}
			return true
		}
		for _, p := range lists[ci] {
			pick[ci] = p
			if rec(ci + 1) {
				return true
			}
		}
		return false
	}
	f.servable = rec(0)
	return f
}
