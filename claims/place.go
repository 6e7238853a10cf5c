package claims

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/rpctl/rpctl/candidates"
	"github.com/rpctl/rpctl/flavors"
	"github.com/rpctl/rpctl/internal/nova"
)

// Placing a healed instance (issue 26). Nova's heal_allocations puts the
// whole flavor on the compute node's provider, which is right only when that
// provider holds every class: rpctl's nested layout puts VCPU and MEMORY_MB
// on NUMA children and --shared-storage puts DISK_GB on a sharing provider.
// So heal asks the built-in Placement core where the instance's resources
// are:
//
//   - the request is the instance's flavor request as `candidates --flavor`
//     builds it (flavors.Build, boot-from-volume from the instance), less
//     what only chooses a host (traits, root_required: the scheduler's
//     filters; the host is already chosen);
//   - the providers are the instance's compute node tree plus the sharing
//     providers of the node's aggregates, with their usage, including what
//     this heal has already written;
//   - of the candidates, the one on the fewest providers wins (an
//     instance's CPUs and memory then stay in one NUMA cell, as Nova's NUMA
//     fitting keeps them), then the one whose providers, in ascending
//     database id order, come first (the first NUMA cell before the
//     second), then the smaller amounts. The rule depends on nothing but
//     the providers and usage, so every run and both backends agree.
//
// A node whose tree is its own provider alone, with no sharing provider,
// has one possible answer, Nova's, which is written without a search
// (Placement's PUT checks its capacity, as it does for Nova's heal): the
// parity with heal_allocations on a flat cloud is exact, failures included.

// ProviderModel is the part of Placement the placement of healed instances
// reads: every provider with its inventories, usage, traits and
// aggregates, as the built-in core loads them.
type ProviderModel interface {
	PlacementModel(ctx context.Context) (*candidates.ModelInput, error)
}

// placer places instances on the trees of a model loaded once per heal.
type placer struct {
	in      *candidates.ModelInput
	byUUID  map[string]int     // provider uuid -> index in in.Providers
	byID    map[int64]int      // provider id -> index
	kids    map[int64][]int64  // parent id -> child ids
	invs    map[int64][]int    // provider id -> inventory rows
	traits  map[int64][]int64  // provider id -> trait ids
	aggs    map[int64][]int64  // provider id -> aggregate ids
	members map[int64][]int64  // aggregate id -> provider ids
	sharing map[int64]bool     // providers with MISC_SHARES_VIA_AGGREGATE
	used    map[[2]int64]int64 // (provider id, class id) -> used
	classID map[string]int64   // class name -> id
	scopes  map[string][]int64 // node uuid -> provider ids in scope
	named   map[int64]candidates.NamedRow
}

func newPlacer(in *candidates.ModelInput) *placer {
	p := &placer{in: in, byUUID: map[string]int{}, byID: map[int64]int{}, kids: map[int64][]int64{},
		invs: map[int64][]int{}, traits: map[int64][]int64{}, aggs: map[int64][]int64{}, members: map[int64][]int64{},
		sharing: map[int64]bool{}, used: map[[2]int64]int64{}, classID: map[string]int64{}, scopes: map[string][]int64{},
		named: map[int64]candidates.NamedRow{}}
	for i, r := range in.Providers {
		p.byUUID[r.UUID] = i
		p.byID[r.ID] = i
		if r.ParentID != 0 {
			p.kids[r.ParentID] = append(p.kids[r.ParentID], r.ID)
		}
	}
	for i, r := range in.Inventories {
		p.invs[r.ProviderID] = append(p.invs[r.ProviderID], i)
	}
	shares := int64(-1)
	for _, t := range in.Traits {
		p.named[t.ID] = t
		if t.Name == "MISC_SHARES_VIA_AGGREGATE" {
			shares = t.ID
		}
	}
	for _, l := range in.ProviderTraits {
		p.traits[l.ProviderID] = append(p.traits[l.ProviderID], l.OtherID)
		if l.OtherID == shares {
			p.sharing[l.ProviderID] = true
		}
	}
	for _, l := range in.ProviderAggregates {
		p.aggs[l.ProviderID] = append(p.aggs[l.ProviderID], l.OtherID)
		p.members[l.OtherID] = append(p.members[l.OtherID], l.ProviderID)
	}
	for _, u := range in.Usages {
		p.used[[2]int64{u.ProviderID, u.ResourceClassID}] += u.Used
	}
	for i, name := range candidates.StandardResourceClasses() {
		p.classID[name] = int64(i)
	}
	for _, c := range in.ResourceClasses {
		p.classID[c.Name] = c.ID
	}
	return p
}

// has reports whether Placement has a provider of this uuid.
func (p *placer) has(uuid string) bool {
	_, ok := p.byUUID[uuid]
	return ok
}

// scope returns the providers an instance on node may use: the node's
// tree, then the sharing providers of the root's aggregates; nil when the
// node has no provider.
func (p *placer) scope(node string) []int64 {
	if s, ok := p.scopes[node]; ok {
		return s
	}
	i, ok := p.byUUID[node]
	if !ok {
		p.scopes[node] = nil
		return nil
	}
	root := p.in.Providers[i]
	for root.ParentID != 0 {
		root = p.in.Providers[p.byID[root.ParentID]]
	}
	var out []int64
	var walk func(id int64)
	walk = func(id int64) {
		out = append(out, id)
		for _, k := range p.kids[id] {
			walk(k)
		}
	}
	walk(root.ID)
	seen := map[int64]bool{}
	for _, a := range p.aggs[root.ID] {
		for _, m := range p.members[a] {
			if p.sharing[m] && !seen[m] && !slices.Contains(out, m) {
				seen[m] = true
				out = append(out, m)
			}
		}
	}
	p.scopes[node] = out
	return out
}

// subModel is the core's model of the providers in scope, with the usage
// this heal has claimed so far.
func (p *placer) subModel(scope []int64) (*candidates.Model, error) {
	in := &candidates.ModelInput{Ratios: p.in.Ratios, ResourceClasses: p.in.ResourceClasses}
	inScope := map[int64]bool{}
	for _, id := range scope {
		inScope[id] = true
	}
	traitSeen, aggSeen := map[int64]bool{}, map[int64]bool{}
	for _, id := range scope {
		r := p.in.Providers[p.byID[id]]
		if !inScope[r.ParentID] {
			r.ParentID = 0 // a sharing provider's own tree is not in scope
		}
		in.Providers = append(in.Providers, r)
		for _, k := range p.invs[id] {
			inv := p.in.Inventories[k]
			in.Inventories = append(in.Inventories, inv)
			if u := p.used[[2]int64{id, inv.ResourceClassID}]; u != 0 {
				in.Usages = append(in.Usages, candidates.UsageRow{ProviderID: id, ResourceClassID: inv.ResourceClassID, Used: u})
			}
		}
		for _, t := range p.traits[id] {
			in.ProviderTraits = append(in.ProviderTraits, candidates.LinkRow{ProviderID: id, OtherID: t})
			if !traitSeen[t] {
				traitSeen[t] = true
				in.Traits = append(in.Traits, p.named[t])
			}
		}
		for _, a := range p.aggs[id] {
			in.ProviderAggregates = append(in.ProviderAggregates, candidates.LinkRow{ProviderID: id, OtherID: a})
			if !aggSeen[a] {
				aggSeen[a] = true
				in.Aggregates = append(in.Aggregates, candidates.NamedRow{ID: a, Name: fmt.Sprint("agg-", a)})
			}
		}
	}
	return candidates.NewModel(in)
}

// claim records an allocation this heal is about to write, so the next
// instances see it.
func (p *placer) claim(allocs map[string]ProviderAllocation, sign int64) {
	for rp, pa := range allocs {
		i, ok := p.byUUID[rp]
		if !ok {
			continue
		}
		id := p.in.Providers[i].ID
		for rc, n := range pa.Resources {
			if c, ok := p.classID[rc]; ok {
				p.used[[2]int64{id, c}] += sign * n
			}
		}
	}
}

// PlaceError is an instance the core finds no place for in its node's
// tree: what does not fit, and what to do.
type PlaceError struct {
	Instance, Host, Node string
	// Class is the resource class that does not fit ("" when every class
	// fits alone but not together).
	Class  string
	Reason string
	Advice string
}

func (e *PlaceError) Error() string {
	what := "its flavor's request"
	if e.Class != "" {
		what = e.Class
	}
	return fmt.Sprintf("instance %s on host %s cannot be placed: %s does not fit in the tree of compute node %s: %s; %s", e.Instance, e.Host, what, e.Node, e.Reason, e.Advice)
}

// place returns the allocation of an instance on node with resources res
// (its flavor's merged request): Nova's allocation on a one-provider tree,
// else the core's choice. cur is the allocation the instance already holds
// (forced rebuilds), released from the usage before the search.
func (p *placer) place(ctx context.Context, in *Instance, node string, f Flavor, bfv bool, res map[string]int64, cur *Allocations) (map[string]ProviderAllocation, error) {
	scope := p.scope(node)
	if len(scope) <= 1 {
		out := map[string]ProviderAllocation{node: {Resources: res}}
		p.claim(out, 1)
		return out, nil
	}
	if cur != nil {
		p.claim(cur.Allocations, -1)
	}
	out, err := p.search(ctx, in, node, f, bfv, scope)
	if err != nil {
		if cur != nil {
			p.claim(cur.Allocations, 1)
		}
		return nil, err
	}
	p.claim(out, 1)
	return out, nil
}

// healRequest is the flavor's request as `candidates --flavor` builds it,
// without what only chooses a host.
func healRequest(f Flavor, bfv, noPinning bool) (*candidates.Request, bool, error) {
	nf := &nova.Flavor{Name: f.Name, VCPUs: f.VCPUs, MemoryMB: f.MemoryMB, RootGB: f.RootGB, EphemeralGB: f.EphemeralGB, Swap: f.Swap, ExtraSpecs: f.ExtraSpecs}
	r, err := flavors.Build(nf, nil, flavors.Options{BootFromVolume: bfv, NoPinningTranslate: noPinning})
	if err != nil {
		return nil, false, err
	}
	req, err := r.Candidates()
	if err != nil {
		return nil, false, err
	}
	req.RootRequired, req.RootForbidden = nil, nil
	for i := range req.Groups {
		req.Groups[i].RequiredTraits, req.Groups[i].ForbiddenTraits = nil, nil
	}
	return req, r.CPUPinningRequested, nil
}

// search runs the core on the instance's scope and applies the rule.
func (p *placer) search(ctx context.Context, in *Instance, node string, f Flavor, bfv bool, scope []int64) (map[string]ProviderAllocation, error) {
	m, err := p.subModel(scope)
	if err != nil {
		return nil, err
	}
	req, pinned, err := healRequest(f, bfv, false)
	if err != nil {
		return nil, fmt.Errorf("instance %s: %w", in.UUID, err)
	}
	res, err := searchTree(ctx, m, req)
	if err != nil {
		return nil, fmt.Errorf("instance %s: %w", in.UUID, err)
	}
	if len(res.Candidates) == 0 && pinned {
		// Nova asks again with VCPU for hosts not reporting PCPU yet.
		if req2, _, err := healRequest(f, bfv, true); err == nil {
			if res2, err := searchTree(ctx, m, req2); err == nil && len(res2.Candidates) > 0 {
				req, res = req2, res2
			}
		}
	}
	if len(res.Candidates) == 0 {
		return nil, p.noFit(ctx, m, req, in, node)
	}
	best := 0
	for i := 1; i < len(res.Candidates); i++ {
		if betterCandidate(m, &res.Candidates[i], &res.Candidates[best]) {
			best = i
		}
	}
	out := map[string]ProviderAllocation{}
	for _, part := range res.View(best).Parts {
		pa := out[part.ProviderUUID]
		if pa.Resources == nil {
			pa.Resources = map[string]int64{}
		}
		pa.Resources[part.ResourceClass] += part.Amount
		out[part.ProviderUUID] = pa
	}
	return out, nil
}

// searchTree is heal's one call into the core's search, Model.Search with
// its default bounds (context, candidate, memory and step ceilings): a
// tree rpctl wrote is far below them.
func searchTree(ctx context.Context, m *candidates.Model, req *candidates.Request) (*candidates.Result, error) {
	return m.Search(ctx, req, candidates.Options{})
}

// betterCandidate is the documented rule: fewer providers, then providers
// earlier in database id order, then smaller amounts.
func betterCandidate(m *candidates.Model, a, b *candidates.Candidate) bool {
	pa, pb := candidateProviders(m, a), candidateProviders(m, b)
	if len(pa) != len(pb) {
		return len(pa) < len(pb)
	}
	if c := slices.Compare(pa, pb); c != 0 {
		return c < 0
	}
	return slices.CompareFunc(a.Resources, b.Resources, func(x, y candidates.Amount) int {
		if c := cmp.Compare(x.Provider, y.Provider); c != 0 {
			return c
		}
		if c := cmp.Compare(x.Class, y.Class); c != 0 {
			return c
		}
		return cmp.Compare(x.Amount, y.Amount)
	}) < 0
}

func candidateProviders(m *candidates.Model, c *candidates.Candidate) []int64 {
	var ids []int64
	for _, a := range c.Resources {
		id := m.Provider(a.Provider).ID
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// noFit explains, with the core's own explanation, why the instance's tree
// has no candidate.
func (p *placer) noFit(ctx context.Context, m *candidates.Model, req *candidates.Request, in *Instance, node string) error {
	e := &PlaceError{Instance: in.UUID, Host: deref(in.Host), Node: node,
		Reason: "the core finds no allocation candidate", Advice: placeAdvice("", "")}
	exps, err := m.Explain(ctx, req, candidates.Options{})
	if err != nil {
		return err
	}
	idx, _ := m.ProviderIndex(node)
	for m.Provider(idx).Parent >= 0 {
		idx = m.Provider(idx).Parent
	}
	root := m.Provider(idx).UUID
	for _, x := range exps {
		if x.RootUUID != root {
			continue
		}
		e.Reason = x.Message
		e.Class = classNamed(x.Message, req)
		e.Advice = placeAdvice(x.Kind, e.Class)
		break
	}
	return e
}

// placeAdvice says what an operator does about an instance that does not
// fit its tree.
func placeAdvice(kind candidates.ReasonKind, class string) string {
	ratio := map[string]string{"VCPU": "--cpu-allocation-ratio", "MEMORY_MB": "--ram-allocation-ratio", "DISK_GB": "--disk-allocation-ratio"}[class]
	switch kind {
	case candidates.ReasonCapacity, candidates.ReasonMergedCapacity:
		if ratio != "" {
			return fmt.Sprintf("the host's instances need more %s than its inventory offers: raise its allocation ratio (rpctl migrate inventory %s, or rpctl inventory set) or move instances off the host, then run the heal again", class, ratio)
		}
		return "the host's instances need more than its inventory offers: raise the inventory (rpctl inventory set) or move instances off the host, then run the heal again"
	case candidates.ReasonMaxUnit:
		if class == "DISK_GB" {
			return "the instance is larger than DISK_GB max_unit: run rpctl migrate inventory without --disk-max-unit available-least (max_unit = local_gb, as Nova writes it), then run the heal again"
		}
		return "the instance is larger than the class's max_unit: raise it (rpctl inventory set), then run the heal again"
	case candidates.ReasonMissingClass:
		return "no provider of the node's tree or of its sharing providers has the class: run rpctl migrate inventory with the --layout and --shared-storage the node was migrated with, then run the heal again"
	}
	return "see why with rpctl candidates --flavor FLAVOR --in-tree NODE --explain, then run the heal again"
}

// classNamed picks the requested class an explanation names.
func classNamed(msg string, req *candidates.Request) string {
	var classes []string
	for _, g := range req.Groups {
		for rc := range g.Resources {
			classes = append(classes, rc)
		}
	}
	slices.SortFunc(classes, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	for _, rc := range classes {
		if strings.Contains(msg, rc) {
			return rc
		}
	}
	return ""
}

// recount makes the model count a consumer whose write did not happen as
// Placement holds it now (cur, nil for nothing), no longer as the write
// it was to get (w): after a consumer generation conflict the instance is
// decided again and that decision claims its own placement, so the first
// one's claim must not stay counted beside it; after a refused write the
// room it claimed is free again.
func (r *healRun) recount(w Write, cur *Allocations) {
	if r.placer == nil {
		return // nothing claimed yet: the model, when read, is Placement's
	}
	r.placer.claim(w.Alloc.Allocations, -1)
	if cur != nil {
		r.placer.claim(cur.Allocations, 1)
	}
}

// placeFor is the placement of a healed instance's resources, the model
// being read the first time an instance needs one. A Placement backend that
// cannot show its providers gets Nova's allocation.
func (r *healRun) placeFor(ctx context.Context, in *Instance, node string, f Flavor, bfv bool, res map[string]int64, held *Allocations) (map[string]ProviderAllocation, error) {
	if err := r.loadPlacer(ctx); err != nil {
		return nil, err
	}
	if r.placer == nil {
		return map[string]ProviderAllocation{node: {Resources: res}}, nil
	}
	return r.placer.place(ctx, in, node, f, bfv, res, held)
}

// loadPlacer reads the model the first time it is needed; the placer stays
// nil for a Placement backend that cannot show its providers.
func (r *healRun) loadPlacer(ctx context.Context) error {
	if r.placer != nil {
		return nil
	}
	pm, ok := r.Placement.(ProviderModel)
	if !ok {
		return nil
	}
	mi, err := pm.PlacementModel(ctx)
	if err != nil {
		return fmt.Errorf("read Placement's providers to place healed instances: %w", err)
	}
	r.placer = newPlacer(mi)
	return nil
}

// byName returns the uuid of the provider named name.
func (p *placer) byName(name string) (string, bool) {
	for _, r := range p.in.Providers {
		if r.Name == name {
			return r.UUID, true
		}
	}
	return "", false
}
