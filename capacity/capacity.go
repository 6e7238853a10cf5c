// Package capacity answers "how many more of each flavor fit?" per host, per
// aggregate and in total, by claiming through the built-in Placement core
// (package candidates) — its capacity rules (allocation ratios, reserved,
// min/max_unit, step_size, traits, nested trees, sharing providers) decide,
// not a formula.
//
// The count is the scheduler's greedy one: claim the first candidate the
// core returns, again and again, until none is left. Two facts make that
// cheap: the core's order of candidates does not depend on usage, and more
// usage only ever removes candidates. So the first candidate stays first
// for exactly as many claims as it has Room for, and after it the next one
// in the original answer is the first again: one search per flavor, then a
// walk over each host's candidates.
package capacity

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/rpctl/rpctl/candidates"
	"github.com/rpctl/rpctl/flavors"
	"github.com/rpctl/rpctl/internal/nova"
)

// Flavor is one flavor's Placement request(s): Nova asks Request and, for
// pinned CPUs, also Fallback (VCPU instead of PCPU), merging the answers
// with Request's first.
type Flavor struct {
	Name     string
	Request  *candidates.Request
	Fallback *candidates.Request
}

// Mode is how flavors share the cloud.
type Mode string

// The modes.
const (
	// Independent counts each flavor alone on the cloud as it is.
	Independent Mode = "independent"
	// Pack fills the cloud greedily with a mix of flavors.
	Pack Mode = "pack"
)

// Options select what is counted.
type Options struct {
	Mode Mode
	// Mix weighs the flavors for Pack (index-aligned with the flavors;
	// nil: one of each). A weight of 0 leaves a flavor out of the mix.
	Mix []int
	// Aggregate, when not "", keeps only the hosts in that aggregate UUID.
	Aggregate string
	// Bounds are the ceilings of every flavor's search (zero values: the
	// core's defaults); all flavors' answers are held at once, so their
	// memory counts against one CeilingBytes.
	Bounds candidates.Options
}

// perSearch is the options of each flavor's search: o's bounds, and one
// memory budget for all of them.
func (o Options) perSearch() candidates.Options {
	return candidates.Options{Ceiling: o.Bounds.Ceiling, CeilingBytes: o.Bounds.CeilingBytes,
		MaxSteps: o.Bounds.MaxSteps, Shared: &candidates.Budget{}}
}

// Host is one host's free slots per flavor.
type Host struct {
	UUID       string
	Name       string
	Aggregates []string
	// Free[i] is flavor i: in Independent mode how many fit on this host
	// alone; in Pack mode how many the cloud-wide fill put here.
	Free []int64
}

// Aggregate is the free slots of the hosts of one aggregate, filled
// together (sharing providers are then shared, not counted per host).
type Aggregate struct {
	UUID string
	// Name is the Nova host aggregate's name, when the caller knows it.
	Name  string
	Hosts int
	Free  []int64
}

// Result is the answer for every flavor.
type Result struct {
	Mode       Mode
	Flavors    []string
	Hosts      []Host
	Aggregates []Aggregate
	Total      []int64
	// Notes say why a flavor fits nowhere when Placement itself would
	// refuse its query on this cloud (an unknown trait or class).
	Notes []string
}

// plan is one flavor's candidates. The core answers depth-first, anchors
// ascending, so each host's candidates are one run of its answer: spans
// index them by provider, without a map or a pointer per candidate.
type plan struct {
	primary, fallback []candidates.Candidate
	// primarySpan[p] and fallbackSpan[p] are host p's runs (empty when p
	// anchors none).
	primarySpan, fallbackSpan []span
	// alone[p]: host p's candidates use its own tree only, and no other
	// host's candidate uses that tree. Such a host's share of a fill over
	// any set of hosts is its count on its own (it takes nothing from the
	// others and they take nothing from it), so a set's count is the sum
	// of those shares plus a fill over the other hosts alone.
	alone []bool
}

type span struct{ lo, hi int32 }

// size is the candidates pack walks: primary, then fallback.
func (p *plan) size() int { return len(p.primary) + len(p.fallback) }

// at is pack's k-th candidate.
func (p *plan) at(k int) *candidates.Candidate {
	if k < len(p.primary) {
		return &p.primary[k]
	}
	return &p.fallback[k-len(p.primary)]
}

// search answers req unlimited. A request Placement refuses on this cloud
// only (a trait or class nobody defined) fits nowhere: note says why.
func search(ctx context.Context, m *candidates.Model, req *candidates.Request, lim candidates.Options) (cs []candidates.Candidate, note string, err error) {
	if req == nil {
		return nil, "", nil
	}
	r, err := m.Search(ctx, req, lim)
	var ae *candidates.APIError
	if errors.As(err, &ae) {
		return nil, fmt.Sprintf("Placement answers 400 (%s), so it fits nowhere", ae.Message), nil
	}
	if err != nil {
		return nil, "", err
	}
	return r.Candidates, "", nil
}

func makePlan(ctx context.Context, m *candidates.Model, f *Flavor, lim candidates.Options, notes *[]string) (*plan, error) {
	prim, note, err := search(ctx, m, f.Request, lim)
	if err != nil {
		return nil, fmt.Errorf("flavor %s: %w", f.Name, err)
	}
	if note != "" {
		*notes = append(*notes, fmt.Sprintf("flavor %s: %s", f.Name, note))
	}
	fb, note, err := search(ctx, m, f.Fallback, lim)
	if err != nil {
		return nil, fmt.Errorf("flavor %s (VCPU fallback): %w", f.Name, err)
	}
	if note != "" {
		*notes = append(*notes, fmt.Sprintf("flavor %s (VCPU fallback query): %s", f.Name, note))
	}
	n := m.NumProviders()
	p := &plan{primary: prim, fallback: fb, primarySpan: spans(prim, n), fallbackSpan: spans(fb, n), alone: make([]bool, n)}
	for i := range p.alone {
		p.alone[i] = true
	}
	for _, cs := range [][]candidates.Candidate{prim, fb} {
		for i := range cs {
			c := &cs[i]
			for _, a := range c.Resources {
				if r := m.Provider(a.Provider).Root; r != c.Anchor {
					p.alone[c.Anchor] = false
					p.alone[r] = false
				}
			}
		}
	}
	return p, nil
}

// spans are each anchor's run of cs, by provider index.
func spans(cs []candidates.Candidate, n int) []span {
	out := make([]span, n)
	for i := 0; i < len(cs); {
		j := i + 1
		for j < len(cs) && cs[j].Anchor == cs[i].Anchor {
			j++
		}
		out[cs[i].Anchor] = span{int32(i), int32(j)}
		i = j
	}
	return out
}

// claim is one Claim made, to undo.
type claim struct {
	c *candidates.Candidate
	k int64
}

// fill claims every candidate of list to exhaustion, in order, and returns
// how many instances that made.
func fill(m *candidates.Model, list []candidates.Candidate, log *[]claim) int64 {
	var n int64
	for i := range list {
		c := &list[i]
		if k := m.Room(c); k > 0 {
			m.Claim(c, k)
			*log = append(*log, claim{c, k})
			n += k
		}
	}
	return n
}

func undo(m *candidates.Model, log []claim) {
	for _, cl := range log {
		m.Claim(cl.c, -cl.k)
	}
}

// fillHosts is the greedy scheduler over a set of hosts: every primary
// candidate first (hosts in the core's order), then the fallback ones, as
// Nova merges the two answers.
func fillHosts(m *candidates.Model, p *plan, hosts []int32, log *[]claim) int64 {
	var total int64
	for _, run := range []struct {
		cs    []candidates.Candidate
		spans []span
	}{{p.primary, p.primarySpan}, {p.fallback, p.fallbackSpan}} {
		for _, h := range hosts {
			sp := run.spans[h]
			total += fill(m, run.cs[sp.lo:sp.hi], log)
		}
	}
	return total
}

// Plans are the flavors' searches on one model, made once: every count of
// them (either mode, any mix, any aggregate) walks the same answers.
type Plans struct {
	m       *candidates.Model
	flavors []Flavor
	plans   []*plan
	notes   []string
}

// Search runs every flavor's searches on m within bounds (zero values: the
// core's defaults; all the answers count against one CeilingBytes).
func Search(ctx context.Context, m *candidates.Model, fl []Flavor, bounds candidates.Options) (*Plans, error) {
	ps := &Plans{m: m, flavors: fl, plans: make([]*plan, len(fl))}
	notes := make([][]string, len(fl))
	lim := Options{Bounds: bounds}.perSearch()
	// The searches only read the model: they spread over the CPUs.
	if err := parallel(len(fl), func(_, i int) error {
		var err error
		ps.plans[i], err = makePlan(ctx, m, &fl[i], lim, &notes[i])
		return err
	}); err != nil {
		return nil, err
	}
	for _, n := range notes {
		ps.notes = append(ps.notes, n...)
	}
	return ps, nil
}

// FlavorError is one flavor whose search failed, by its index in the
// flavors given to SearchEach.
type FlavorError struct {
	Index int
	Err   error
}

func (e FlavorError) Error() string { return e.Err.Error() }

// SearchEach is Search for a caller that would rather count the other
// flavors than none (the exporter): a flavor whose search fails (the
// candidate, memory or step ceiling) is left out of the Plans and its error
// returned, so that one pathological flavor never takes the others' counts
// down. kept are the indices (into fl) of the flavors the Plans count, in
// order. A failed search's answer is not held, so its bytes leave the
// shared memory budget; a flavor that failed on that budget while another
// was filling it is searched again once the parallel searches are done,
// alone, and left out only if it fails again. err is the context's, when
// it is done.
func SearchEach(ctx context.Context, m *candidates.Model, fl []Flavor, bounds candidates.Options) (ps *Plans, kept []int, failed []FlavorError, err error) {
	plans := make([]*plan, len(fl))
	notes := make([][]string, len(fl))
	errs := make([]error, len(fl))
	lim := Options{Bounds: bounds}.perSearch()
	lim.Shared.ReleaseFailed = true
	parallel(len(fl), func(_, i int) error {
		plans[i], errs[i] = makePlan(ctx, m, &fl[i], lim, &notes[i])
		return nil
	})
	for i, e := range errs {
		var ce *candidates.CeilingError
		if errors.As(e, &ce) && ce.Bytes > 0 && ctx.Err() == nil {
			notes[i] = nil
			plans[i], errs[i] = makePlan(ctx, m, &fl[i], lim, &notes[i])
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, nil, err
	}
	ps = &Plans{m: m}
	for i := range fl {
		if errs[i] != nil {
			failed = append(failed, FlavorError{Index: i, Err: errs[i]})
			continue
		}
		kept = append(kept, i)
		ps.flavors = append(ps.flavors, fl[i])
		ps.plans = append(ps.plans, plans[i])
		ps.notes = append(ps.notes, notes[i]...)
	}
	return ps, kept, failed, nil
}

// Count answers for every flavor on a copy of m (m itself is not changed).
func Count(ctx context.Context, m *candidates.Model, fl []Flavor, o Options) (*Result, error) {
	if err := o.check(len(fl)); err != nil {
		return nil, err
	}
	ps, err := Search(ctx, m, fl, o.Bounds)
	if err != nil {
		return nil, err
	}
	return ps.Count(o)
}

func (o *Options) check(flavors int) error {
	if o.Mode == "" {
		o.Mode = Independent
	}
	if o.Mode != Independent && o.Mode != Pack {
		return fmt.Errorf("unknown mode %q: choose independent or pack", o.Mode)
	}
	if o.Mode == Pack && o.Mix != nil && len(o.Mix) != flavors {
		return fmt.Errorf("the mix names %d flavors, %d given", len(o.Mix), flavors)
	}
	return nil
}

// Count answers o (its Bounds are the searches' own, made already) on a
// copy of the model.
func (ps *Plans) Count(o Options) (*Result, error) {
	fl, m := ps.flavors, ps.m
	if err := o.check(len(fl)); err != nil {
		return nil, err
	}
	res := &Result{Mode: o.Mode, Notes: slices.Clone(ps.notes)}
	hosts, aggHosts := selectHosts(m, o.Aggregate)
	for _, f := range fl {
		res.Flavors = append(res.Flavors, f.Name)
	}
	res.Hosts = make([]Host, len(hosts))
	free := make([]int64, len(hosts)*len(fl))
	for i, h := range hosts {
		p := m.Provider(h)
		res.Hosts[i] = Host{UUID: p.UUID, Name: p.Name, Free: free[i*len(fl) : (i+1)*len(fl) : (i+1)*len(fl)]}
		if len(p.Aggregates) > 0 {
			res.Hosts[i].Aggregates = make([]string, len(p.Aggregates))
			for k, a := range p.Aggregates {
				res.Hosts[i].Aggregates[k] = m.AggregateUUID(a)
			}
		}
	}
	aggUUIDs := slices.Sorted(maps.Keys(aggHosts))
	for _, u := range aggUUIDs {
		res.Aggregates = append(res.Aggregates, Aggregate{UUID: u, Hosts: len(aggHosts[u]), Free: make([]int64, len(fl))})
	}
	res.Total = make([]int64, len(fl))
	plans := ps.plans
	if o.Mode == Independent {
		// Every flavor claims on a copy of its own worker's, undoing each
		// count: one copy per CPU, not one per flavor.
		work := make([]*candidates.Model, runtime.NumCPU())
		hostIndex := make(map[int32]int, len(hosts))
		for hi, h := range hosts {
			hostIndex[h] = hi
		}
		err := parallel(len(fl), func(w, i int) error {
			if work[w] == nil {
				work[w] = m.Clone()
			}
			m, p := work[w], plans[i]
			var log []claim
			one := make([]int32, 1)
			for hi, h := range hosts {
				log = log[:0]
				one[0] = h
				res.Hosts[hi].Free[i] = fillHosts(m, p, one, &log)
				undo(m, log)
			}
			// A set's count: the hosts alone add their own, the others
			// are filled together.
			set := func(members []int32) int64 {
				var n int64
				var rest []int32
				for _, h := range members {
					if p.alone[h] {
						n += res.Hosts[hostIndex[h]].Free[i]
					} else {
						rest = append(rest, h)
					}
				}
				log = log[:0]
				n += fillHosts(m, p, rest, &log)
				undo(m, log)
				return n
			}
			for ai, u := range aggUUIDs {
				res.Aggregates[ai].Free[i] = set(aggHosts[u])
			}
			res.Total[i] = set(hosts)
			return nil
		})
		return res, err
	}
	work := m.Clone()
	mix := o.Mix
	if mix == nil {
		mix = make([]int, len(fl))
		for i := range mix {
			mix[i] = 1
		}
	}
	index := make(map[int32]int, len(hosts))
	for i, h := range hosts {
		index[h] = i
	}
	var log []claim
	placed := pack(work, plans, mix, hostMask(m.NumProviders(), hosts), &log, func(fi int, anchor int32) {
		if hi, ok := index[anchor]; ok {
			res.Hosts[hi].Free[fi]++
		}
	})
	copy(res.Total, placed)
	undo(work, log)
	for ai, u := range aggUUIDs {
		log = log[:0]
		res.Aggregates[ai].Free = pack(work, plans, mix, hostMask(m.NumProviders(), aggHosts[u]), &log, nil)
		undo(work, log)
	}
	return res, nil
}

// parallel runs f(worker, 0..n-1) on one goroutine per CPU (worker is the
// goroutine's number; no more than GOMAXPROCS, which a server may set
// above the CPUs to keep a P free for its requests) and returns the first
// error.
func parallel(n int, f func(worker, i int) error) error {
	workers := min(runtime.GOMAXPROCS(0), runtime.NumCPU(), n)
	errs := make([]error, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				errs[i] = f(w, i)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// hostMask is hosts as a mask by provider index, for pack's inner loop.
func hostMask(n int, hosts []int32) []bool {
	s := make([]bool, n)
	for _, h := range hosts {
		s[h] = true
	}
	return s
}

// pack places the mix round after round (weight w: w instances of that
// flavor per round, in flavor order), each on the first candidate the
// core would return among the allowed hosts, until no flavor of the mix
// fits any more. A flavor that no longer fits leaves the mix; the others
// go on.
func pack(m *candidates.Model, plans []*plan, mix []int, allowed []bool, log *[]claim, placedOn func(fi int, anchor int32)) []int64 {
	placed := make([]int64, len(plans))
	next := make([]int, len(plans)) // first candidate not yet known full
	alive := 0
	live := make([]bool, len(plans))
	for i, w := range mix {
		if w > 0 {
			live[i] = true
			alive++
		}
	}
	for alive > 0 {
		for i, w := range mix {
			for k := 0; k < w && live[i]; k++ {
				p := plans[i]
				for next[i] < p.size() {
					if c := p.at(next[i]); allowed[c.Anchor] && m.Room(c) > 0 {
						break
					}
					next[i]++
				}
				if next[i] == p.size() {
					live[i] = false
					alive--
					break
				}
				c := p.at(next[i])
				m.Claim(c, 1)
				*log = append(*log, claim{c, 1})
				placed[i]++
				if placedOn != nil {
					placedOn(i, c.Anchor)
				}
			}
		}
	}
	return placed
}

// selectHosts returns the hosts (non-sharing roots) to count, ascending,
// and the hosts of each aggregate they belong to.
func selectHosts(m *candidates.Model, only string) ([]int32, map[string][]int32) {
	var hosts []int32
	aggs := map[string][]int32{}
	for _, r := range m.Roots() {
		p := m.Provider(r)
		in := only == ""
		for _, a := range p.Aggregates {
			if m.AggregateUUID(a) == only {
				in = true
			}
		}
		if !in {
			continue
		}
		hosts = append(hosts, r)
		for _, a := range p.Aggregates {
			u := m.AggregateUUID(a)
			aggs[u] = append(aggs[u], r)
		}
	}
	return hosts, aggs
}

// NewFlavor builds what Nova's scheduler asks Placement for one flavor,
// without a limit (every candidate counts): its query and, for pinned CPUs,
// the VCPU fallback query. The warnings are the extra specs Nova ignores.
// Errors are *flavors.NovaError for a flavor Nova refuses, or
// *candidates.APIError (with the query) for one Placement would refuse.
func NewFlavor(fl *nova.Flavor, img *flavors.Image, opt flavors.Options) (Flavor, []string, error) {
	opt.Limit = 0
	f := Flavor{Name: fl.Name}
	r, err := flavors.Build(fl, img, opt)
	if err != nil {
		return f, nil, err
	}
	if f.Request, err = r.Candidates(); err != nil {
		return f, r.Warnings, fmt.Errorf("%s: %w", r.QueryString(), err)
	}
	if r.CPUPinningRequested {
		opt.NoPinningTranslate = true
		fb, err := flavors.Build(fl, img, opt)
		if err != nil {
			return f, r.Warnings, err
		}
		if f.Fallback, err = fb.Candidates(); err != nil {
			return f, r.Warnings, fmt.Errorf("%s: %w", fb.QueryString(), err)
		}
	}
	return f, r.Warnings, nil
}
