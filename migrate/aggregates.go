package migrate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/rpctl/rpctl/internal/nova"
	"github.com/rpctl/rpctl/inventory"
)

// AggregatesName is the aggregate sync's name in the summary table.
const AggregatesName = "aggregates"

// The exit codes of `nova-manage placement sync_aggregates`, which `rpctl
// migrate aggregates` keeps.
const (
	AggExitOK              = 0
	AggExitTooManyComputes = 1 // a host has more than one compute node
	AggExitRetrieval       = 2 // a provider's aggregates could not be read
	AggExitUpdate          = 3 // a provider's aggregates could not be written
	AggExitUnmapped        = 4 // aggregate hosts without a host mapping
	AggExitNoCompute       = 5 // aggregate hosts without a compute node
	AggExitNoProvider      = 6 // hosts whose compute node has no provider
)

// aggAttempts is how often a generation conflict is retried: Nova's
// aggregate_add_host retries a ResourceProviderUpdateConflict up to four
// attempts.
const aggAttempts = 4

// AggregateAPI is the Nova API database as the aggregate sync reads it.
type AggregateAPI interface {
	// ListAggregates returns every host aggregate in id order, hosts in
	// aggregate_hosts id order.
	ListAggregates(ctx context.Context) ([]nova.Aggregate, error)
	// HostCells maps each host of host_mappings to its cell's name.
	HostCells(ctx context.Context) (map[string]string, error)
}

// AggregateCell is a cell database as the aggregate sync reads it.
type AggregateCell interface {
	Name() string
	// ComputeNodesByHost returns the uuids of every live compute node by
	// compute_nodes.host ("" for a NULL uuid).
	ComputeNodesByHost(ctx context.Context) (map[string][]string, error)
}

// AggregatePlacement is a Placement (database or API) as the aggregate sync
// reads and writes it: inventory.Store's calls of the same names.
type AggregatePlacement interface {
	ProviderAggregates(ctx context.Context, uuid string) (generation int64, aggregates []string, err error)
	SetProviderAggregates(ctx context.Context, uuid string, generation int64, aggregates []string) (int64, error)
	ListProviders(ctx context.Context, f inventory.ProviderFilter) ([]inventory.Provider, error)
}

// ProviderAggregates is one provider's generation and aggregates.
type ProviderAggregates struct {
	Generation int64
	Aggregates []string
}

// AggregateScanner is a Placement that reads every provider's aggregates at
// once (the database); without it the sync asks provider by provider, as
// Nova does through the API.
type AggregateScanner interface {
	AllProviderAggregates(ctx context.Context) (map[string]ProviderAggregates, error)
}

// AggregateWrite is one provider's change of its aggregates, decided at
// Generation: the aggregates to add and to remove.
type AggregateWrite struct {
	Provider    string
	Generation  int64
	Add, Remove []string
}

// AggregateBatchWriter is a Placement (the database) that writes many
// providers' aggregate changes in few round trips, each change in a
// transaction of its own that checks and increments its provider's
// generation once, as SetProviderAggregates does.
type AggregateBatchWriter interface {
	// WriteAggregates writes ws in order and stops at the first that
	// fails: done are written, err is ws[done]'s failure (nil when all
	// are written). ErrNoBatch, with nothing written, when the database
	// cannot send several statements per round trip.
	WriteAggregates(ctx context.Context, ws []AggregateWrite) (done int, err error)
}

// ErrNoBatch is an AggregateBatchWriter's answer when it cannot batch: the
// caller writes one change at a time.
var ErrNoBatch = errors.New("no batched writes on this database")

// aggBatch bounds the writes decided ahead and sent as one batch.
const aggBatch = 1000

// AggregateSync mirrors Nova's host aggregates into Placement the way
// `nova-manage placement sync_aggregates` does, and with Prune removes the
// memberships it never removes.
type AggregateSync struct {
	API       AggregateAPI
	Cells     []AggregateCell
	Placement AggregatePlacement
	// Out gets --verbose's progress lines, Err the problems; both are
	// Nova's sentences.
	Out, Err io.Writer
	Verbose  bool
	DryRun   bool
	Prune    bool
	// Progress, when set, is told how many of Nova's memberships the sync
	// has looked at, of how many (issue 35: on 100,000 nodes the phase
	// ran for minutes without a word). It is called for every
	// membership; the caller throttles what it draws.
	Progress func(done, total int)
	// SkipHosts (migrate all) skips a host whose compute node has no uuid
	// or no resource provider, recording it in the result's Skipped, and
	// goes on with the other hosts: one bad compute node row must not keep
	// the other cells' hosts out of their aggregates. Without it the sync
	// stops there, as nova-manage placement sync_aggregates does (and
	// rpctl migrate aggregates, its port, with its exit codes).
	SkipHosts bool
	// Skipped is the run's SkipLog: a skipped host whose row the inventory
	// step skipped as bad is reported with that row and its bad columns.
	Skipped *SkipLog
}

// Membership is one provider's membership of one aggregate.
type Membership struct {
	Host      string
	Provider  string
	Aggregate string // uuid
	Name      string // the Nova aggregate's name, "" when Nova has none
}

// AggregateResult is what a sync did (or, with DryRun, would do).
type AggregateResult struct {
	Exit    int
	Added   []Membership
	Removed []Membership
	// Missing counts the memberships the sync found missing: added, or
	// not added because the run stopped.
	Missing int
	// Elsewhere counts missing memberships another writer added while
	// this run was deciding (a generation conflict, then found present).
	Elsewhere int
	// Skipped are the hosts SkipHosts skipped, each with why.
	Skipped RowErrors
}

// hostKey is a host name as Nova's queries compare it on MySQL:
// HostMapping.get_by_host, ComputeNodeList.get_all_by_host and
// AggregateList.get_by_host (HostAZ) match
// `host = ?` under the databases' utf8 general_ci collation, which ignores
// case and trailing spaces, so an aggregate's "CMP1-00020" or
// "cmp1-00021 " is the host cmp1-00020 / cmp1-00021 (issue 37 row 14).
// Accents, which that collation also folds, are not.
func hostKey(h string) string { return strings.ToLower(strings.TrimRight(h, " ")) }

// novaView is Nova's side: the aggregates and, per host, the cell and its
// compute nodes.
type novaView struct {
	aggs      []nova.Aggregate
	hostCell  map[string]string   // hostKey -> cell
	nodes     map[string][]string // hostKey -> live compute node uuids (its mapped cell's)
	computeRP map[string]string   // compute node uuid -> host
}

func (s *AggregateSync) loadNova(ctx context.Context) (*novaView, error) {
	v := &novaView{nodes: map[string][]string{}, computeRP: map[string]string{}}
	var err error
	if v.aggs, err = s.API.ListAggregates(ctx); err != nil {
		return nil, err
	}
	cells, err := s.API.HostCells(ctx)
	if err != nil {
		return nil, err
	}
	v.hostCell = make(map[string]string, len(cells))
	for h, c := range cells {
		v.hostCell[hostKey(h)] = c
	}
	// A host's nodes are looked up in its mapped cell, as Nova does; a cell
	// known only by its database name (no cell mapping of that name) still
	// answers for hosts no named cell has.
	byCell := map[string]map[string][]string{}
	for _, c := range s.Cells {
		m, err := c.ComputeNodesByHost(ctx)
		if err != nil {
			return nil, err
		}
		byHost := make(map[string][]string, len(m))
		for h, us := range m {
			byHost[hostKey(h)] = append(byHost[hostKey(h)], us...)
		}
		byCell[c.Name()] = byHost
		for h, us := range m {
			for _, u := range us {
				if u != "" {
					v.computeRP[u] = h
				}
			}
		}
	}
	for h, cell := range v.hostCell {
		if m, ok := byCell[cell]; ok {
			if us := m[h]; len(us) > 0 {
				v.nodes[h] = us
			}
			continue
		}
		for _, c := range s.Cells {
			if us := byCell[c.Name()][h]; len(us) > 0 {
				v.nodes[h] = us
				break
			}
		}
	}
	return v, nil
}

// placementView reads provider aggregates from a bulk scan when the store
// offers one, else provider by provider.
//
// With a batch writer, the writes a run is about to make are decided ahead
// (upcoming) against a shadow of the providers, sent in batches, and then
// taken by the set calls in order: a run makes the same calls, prints the
// same lines and stops where it would writing one by one, and no write is
// sent past the first that fails (a failed one is done again one by one,
// which gives its own error and retries).
type placementView struct {
	p     AggregatePlacement
	all   map[string]ProviderAggregates // nil without a scanner
	read  map[string]*ProviderAggregates
	batch AggregateBatchWriter // nil without one, or once it said ErrNoBatch
	pre   []preWrite           // written ahead, for the next set calls in order
}

// preWrite is a write sent ahead: want at generation gen, and its outcome
// (nil: committed).
type preWrite struct {
	uuid string
	gen  int64
	want []string
	err  error
}

// aggChange is a write a run will make if nothing changes before it: the
// provider and how its aggregates change (nil: no write).
type aggChange struct {
	uuid   string
	change func(have []string) []string
}

var errNoProvider = errors.New("no such provider")

func newPlacementView(ctx context.Context, p AggregatePlacement) (*placementView, error) {
	v := &placementView{p: p, read: map[string]*ProviderAggregates{}}
	v.batch, _ = p.(AggregateBatchWriter)
	if sc, ok := p.(AggregateScanner); ok {
		all, err := sc.AllProviderAggregates(ctx)
		if err != nil {
			return nil, err
		}
		v.all = all
	}
	return v, nil
}

// get returns a provider's aggregates: errNoProvider when it does not exist.
func (v *placementView) get(ctx context.Context, uuid string) (*ProviderAggregates, error) {
	if pa, ok := v.read[uuid]; ok {
		return pa, nil
	}
	if v.all != nil {
		pa, ok := v.all[uuid]
		if !ok {
			return nil, errNoProvider
		}
		v.read[uuid] = &pa
		return &pa, nil
	}
	return v.refresh(ctx, uuid)
}

// refresh re-reads one provider (after a generation conflict).
func (v *placementView) refresh(ctx context.Context, uuid string) (*ProviderAggregates, error) {
	gen, aggs, err := v.p.ProviderAggregates(ctx, uuid)
	if errors.Is(err, inventory.ErrNotFound) {
		return nil, errNoProvider
	}
	if err != nil {
		return nil, err
	}
	pa := &ProviderAggregates{Generation: gen, Aggregates: aggs}
	v.read[uuid] = pa
	return pa, nil
}

// set writes a provider's aggregates at the generation read, re-reading
// and re-deciding (change) on a conflict, up to aggAttempts times. change
// returns the new list, or nil when nothing is to be written. upcoming
// lists this write and the ones the run makes after it if all succeed.
func (v *placementView) set(ctx context.Context, uuid string, change func(have []string) []string, upcoming func() []aggChange) (wrote bool, err error) {
	if len(v.pre) == 0 && v.batch != nil {
		if err := v.writeAhead(ctx, upcoming()); err != nil {
			return false, err
		}
	}
	if len(v.pre) > 0 {
		w := v.pre[0]
		v.pre = v.pre[1:]
		pa := v.read[uuid]
		if w.uuid != uuid || pa == nil || pa.Generation != w.gen || !slices.Equal(change(pa.Aggregates), w.want) {
			// The run asked for another write than was decided ahead: a
			// bug, and what was written ahead is no longer accounted for.
			return false, fmt.Errorf("internal error: aggregate write of provider %s was decided ahead as %s at generation %d", uuid, w.uuid, w.gen)
		}
		if w.err == nil {
			pa.Generation, pa.Aggregates = w.gen+1, w.want
			return true, nil
		}
		// Written one by one, it gets its own error, or a retry after a
		// conflict as below.
	}
	return v.setEach(ctx, uuid, change)
}

// writeAhead decides the writes of next on a shadow of the providers and
// sends them as batches, keeping their outcomes in v.pre: the committed
// ones, then the one that failed. It stops deciding at a provider it
// cannot read (the run stops there).
func (v *placementView) writeAhead(ctx context.Context, next []aggChange) error {
	shadow := map[string]*ProviderAggregates{}
	var ws []AggregateWrite
	var pre []preWrite
	for _, c := range next {
		if len(ws) == aggBatch {
			break
		}
		pa, ok := shadow[c.uuid]
		if !ok {
			cur, err := v.get(ctx, c.uuid)
			if err != nil {
				break
			}
			pa = &ProviderAggregates{Generation: cur.Generation, Aggregates: cur.Aggregates}
			shadow[c.uuid] = pa
		}
		want := c.change(pa.Aggregates)
		if want == nil {
			continue
		}
		w := AggregateWrite{Provider: c.uuid, Generation: pa.Generation}
		for _, a := range want {
			if !slices.Contains(pa.Aggregates, a) {
				w.Add = append(w.Add, a)
			}
		}
		for _, a := range pa.Aggregates {
			if !slices.Contains(want, a) {
				w.Remove = append(w.Remove, a)
			}
		}
		ws = append(ws, w)
		pre = append(pre, preWrite{uuid: c.uuid, gen: pa.Generation, want: want})
		pa.Generation, pa.Aggregates = pa.Generation+1, want
	}
	if len(ws) == 0 {
		return nil
	}
	done, err := v.batch.WriteAggregates(ctx, ws)
	if errors.Is(err, ErrNoBatch) {
		v.batch = nil
		return nil
	}
	if err != nil {
		pre[done].err = err
		done++
	}
	v.pre = pre[:done]
	return nil
}

// setEach is set one write at a time.
func (v *placementView) setEach(ctx context.Context, uuid string, change func(have []string) []string) (wrote bool, err error) {
	for attempt := 1; ; attempt++ {
		pa, err := v.get(ctx, uuid)
		if err != nil {
			return false, err
		}
		want := change(pa.Aggregates)
		if want == nil {
			return false, nil
		}
		gen, err := v.p.SetProviderAggregates(ctx, uuid, pa.Generation, want)
		if err == nil {
			pa.Generation, pa.Aggregates = gen, want
			return true, nil
		}
		if !errors.Is(err, inventory.ErrGeneration) || attempt == aggAttempts {
			return false, err
		}
		if _, err := v.refresh(ctx, uuid); err != nil {
			return false, err
		}
	}
}

// load reads Nova's side, then Placement's.
func (s *AggregateSync) load(ctx context.Context) (*novaView, *placementView, error) {
	nv, err := s.loadNova(ctx)
	if err != nil {
		return nil, nil, err
	}
	pv, err := newPlacementView(ctx, s.Placement)
	if err != nil {
		return nil, nil, err
	}
	return nv, pv, nil
}

// Run syncs, then prunes when asked. The exit code is Nova's; an error is
// a failure of a database or of Placement before anything could be decided.
func (s *AggregateSync) Run(ctx context.Context) (*AggregateResult, error) {
	nv, pv, err := s.load(ctx)
	if err != nil {
		return nil, err
	}
	res := &AggregateResult{}
	if s.Prune {
		// Listed (or removed) first: the removals are the part an operator
		// reviews with --dry-run before trusting them.
		if err := s.prune(ctx, nv, pv, res); err != nil {
			return res, err
		}
	}
	res.Exit = s.sync(ctx, nv, pv, res)
	return res, nil
}

func (s *AggregateSync) say(format string, args ...any) {
	if s.Verbose {
		fmt.Fprintf(s.Out, format+"\n", args...)
	}
}

// sync is Nova's loop: aggregates in order, hosts in order, one write per
// missing membership, stopping at the first failure Nova stops at.
// hostOutcome is what the sync makes of an aggregate host.
type hostOutcome int

const (
	hostProvider  hostOutcome = iota // its compute node's provider
	hostUnmapped                     // no host mapping: skipped
	hostNoCompute                    // no compute node: skipped
	hostTooMany                      // several compute nodes: the sync stops
	hostNoUUID                       // a compute node without uuid: the sync stops
)

// resolveHost is Nova's lookup of an aggregate host's provider, cached in
// hostRP as Nova caches it.
func resolveHost(nv *novaView, hostRP map[string]string, host string) (string, hostOutcome) {
	if rp, ok := hostRP[host]; ok {
		return rp, hostProvider
	}
	if _, mapped := nv.hostCell[hostKey(host)]; !mapped {
		return "", hostUnmapped
	}
	nodes := nv.nodes[hostKey(host)]
	switch {
	case len(nodes) == 0:
		return "", hostNoCompute
	case len(nodes) > 1:
		return "", hostTooMany
	case nodes[0] == "":
		return "", hostNoUUID
	}
	hostRP[host] = nodes[0]
	return nodes[0], hostProvider
}

// memberships lists the memberships sync looks at, in its order, up to
// where it stops: what it will write if nothing else does.
func memberships(nv *novaView, skipHosts bool) []Membership {
	hostRP := map[string]string{}
	var out []Membership
	for _, a := range nv.aggs {
		for _, host := range a.Hosts {
			rp, o := resolveHost(nv, hostRP, host)
			switch {
			case o == hostProvider:
				out = append(out, Membership{Host: host, Provider: rp, Aggregate: a.UUID, Name: a.Name})
			case o == hostNoUUID && skipHosts:
				// SkipHosts: the sync goes past it.
			case o == hostTooMany, o == hostNoUUID:
				return out
			}
		}
	}
	return out
}

// addTo is the sync's change: the aggregate added unless present.
func addTo(agg string) func(have []string) []string {
	return func(have []string) []string {
		if slices.Contains(have, agg) {
			return nil
		}
		return append(slices.Clone(have), agg)
	}
}

func (s *AggregateSync) sync(ctx context.Context, nv *novaView, pv *placementView, res *AggregateResult) int {
	s.say("Filling in missing placement aggregates")
	hostRP := map[string]string{}
	unmapped, noCompute, skipped := map[string]bool{}, map[string]bool{}, map[string]bool{}
	var all []Membership // memberships(nv), when a write needs them
	cursor := 0          // where in all the sync is
	total, looked := 0, 0
	for _, a := range nv.aggs {
		total += len(a.Hosts)
	}
	progress := func() {
		if s.Progress != nil {
			s.Progress(looked, total)
		}
	}
	for _, a := range nv.aggs {
		s.say("Processing aggregate: %s", a.Name)
		for _, host := range a.Hosts {
			// The hosts before this one are done, whichever way out of
			// the iteration (continue) each took.
			progress()
			looked++
			s.say("Processing host: %s", host)
			if skipped[host] {
				continue
			}
			rp, o := resolveHost(nv, hostRP, host)
			switch o {
			case hostUnmapped:
				unmapped[host] = true
				continue
			case hostNoCompute:
				noCompute[host] = true
				continue
			case hostTooMany:
				fmt.Fprintf(s.Err, "Unexpected number of compute node records (%d) found for host %s. There should only be a one-to-one mapping.\n", len(nv.nodes[hostKey(host)]), host)
				return AggExitTooManyComputes
			case hostNoUUID:
				// Nova would generate and store a uuid here and then find
				// no provider for it; rpctl writes uuids only in the
				// inventory migration.
				if s.skip(res, nv, skipped, host, errors.New("not placed in its aggregates: its compute node has no uuid yet; rpctl migrate inventory gives it one")) {
					continue
				}
				fmt.Fprintf(s.Err, "The compute node of host %s has no uuid yet: %s.\n", host, s.noUUIDHint(host))
				return AggExitRetrieval
			}
			m := Membership{Host: host, Provider: rp, Aggregate: a.UUID, Name: a.Name}
			pa, err := pv.get(ctx, rp)
			if errors.Is(err, errNoProvider) && s.skip(res, nv, skipped, host, fmt.Errorf("not placed in its aggregates: its compute node's resource provider %s does not exist; rpctl migrate inventory creates it", rp)) {
				continue
			}
			if err != nil {
				// A missing provider fails the read of its aggregates, which
				// Nova reports as a retrieval failure and stops (its
				// "provider not found" list is never reached that way).
				fmt.Fprintf(s.Err, "Failed to get aggregates for resource provider with UUID %s\n", rp)
				return AggExitRetrieval
			}
			if slices.Contains(pa.Aggregates, a.UUID) {
				s.say("Successfully added host (%s) and provider (%s) to aggregate (%s).", host, rp, a.UUID)
				continue
			}
			res.Missing++
			if s.DryRun {
				fmt.Fprintf(s.Out, "Would add host (%s) and provider (%s) to aggregate (%s).\n", host, rp, a.UUID)
				res.Added = append(res.Added, m)
				pa.Aggregates = append(slices.Clone(pa.Aggregates), a.UUID)
				continue
			}
			wrote, err := pv.set(ctx, rp, addTo(a.UUID), func() []aggChange {
				if all == nil {
					all = memberships(nv, s.SkipHosts)
				}
				// This membership and the ones after it, in the sync's
				// order; the hosts skipped so far are left out (their
				// providers are missing: the batch would stop at each).
				for cursor < len(all) && (all[cursor].Host != host || all[cursor].Aggregate != a.UUID) {
					cursor++
				}
				next := make([]aggChange, 0, len(all)-cursor)
				for _, m := range all[min(cursor, len(all)):] {
					if !skipped[m.Host] {
						next = append(next, aggChange{m.Provider, addTo(m.Aggregate)})
					}
				}
				return next
			})
			if errors.Is(err, errNoProvider) && s.skip(res, nv, skipped, host, fmt.Errorf("not placed in its aggregates: its compute node's resource provider %s does not exist; rpctl migrate inventory creates it", rp)) {
				continue
			}
			if errors.Is(err, errNoProvider) {
				fmt.Fprintf(s.Err, "Failed to get aggregates for resource provider with UUID %s\n", rp)
				return AggExitRetrieval
			}
			if err != nil {
				fmt.Fprintf(s.Err, "Failed updating provider aggregates for host (%s), provider (%s) and aggregate (%s). Error: %v\n", host, rp, a.UUID, err)
				return AggExitUpdate
			}
			if wrote {
				res.Added = append(res.Added, m)
			} else {
				res.Elsewhere++
			}
			s.say("Successfully added host (%s) and provider (%s) to aggregate (%s).", host, rp, a.UUID)
		}
	}
	progress()
	code := AggExitOK
	if len(unmapped) > 0 {
		fmt.Fprintf(s.Err, "The following hosts were found in nova host aggregates but no host mappings were found in the nova API DB. Run \"nova-manage cell_v2 discover_hosts\" and then retry. Missing: %s\n", strings.Join(sortedSet(unmapped), ","))
		code = AggExitUnmapped
	}
	if len(noCompute) > 0 {
		fmt.Fprintf(s.Err, "Unable to find matching compute_nodes record entries in the cell database for the following hosts; does the nova-compute service on each host need to be restarted? Missing: %s\n", strings.Join(sortedSet(noCompute), ","))
		code = AggExitNoCompute
	}
	return code
}

// skip records host as skipped (SkipHosts), once, and reports whether it
// was: the reason is the inventory step's skipped row when this run's
// inventory migration skipped the host's compute node as bad, else why.
func (s *AggregateSync) skip(res *AggregateResult, nv *novaView, skipped map[string]bool, host string, why error) bool {
	if !s.SkipHosts {
		return false
	}
	skipped[host] = true
	if re := s.Skipped.host(host); re != nil {
		why = skippedBecause(re)
	}
	var aggs []string
	for _, a := range nv.aggs {
		for _, h := range a.Hosts {
			if h == host {
				aggs = append(aggs, a.Name)
				break
			}
		}
	}
	res.Skipped = append(res.Skipped, &RowError{Unfit: true, Migration: AggregatesName, Cell: nv.hostCell[hostKey(host)],
		What: fmt.Sprintf("host %s (aggregates %s)", host, strings.Join(aggs, ", ")), Err: why})
	return true
}

// noUUIDHint is what to do about a host whose compute node has no uuid:
// fix its row when this run's inventory step skipped it as bad, else run
// that step.
func (s *AggregateSync) noUUIDHint(host string) string {
	if re := s.Skipped.host(host); re != nil {
		return fmt.Sprintf("%s skipped its row as bad (compute node id=%d: %s); fix that row and run again", re.Migration, re.ID, badColumns(re))
	}
	return "rpctl migrate inventory gives it one, unless it skips the row as bad (then fix what it names for that row)"
}

func sortedSet(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// AggregateDiff is where Nova and Placement disagree.
type AggregateDiff struct {
	// Missing are memberships Nova has and Placement lacks, for hosts
	// with one compute node whose provider exists.
	Missing []Membership
	// Unresolved are aggregate hosts the sync cannot place: unmapped, no
	// compute node, several, or a compute node without a provider.
	Unresolved []Membership
	// Stray are compute-node provider memberships no Nova aggregate
	// explains (what --prune removes).
	Stray []Membership
}

// Diff compares Nova's aggregates with Placement's memberships, writing
// nothing.
func (s *AggregateSync) Diff(ctx context.Context) (*AggregateDiff, error) {
	nv, pv, err := s.load(ctx)
	if err != nil {
		return nil, err
	}
	d := &AggregateDiff{}
	for _, a := range nv.aggs {
		for _, host := range a.Hosts {
			m := Membership{Host: host, Aggregate: a.UUID, Name: a.Name}
			nodes := nv.nodes[hostKey(host)]
			if len(nodes) != 1 || nodes[0] == "" {
				d.Unresolved = append(d.Unresolved, m)
				continue
			}
			m.Provider = nodes[0]
			pa, err := pv.get(ctx, m.Provider)
			if errors.Is(err, errNoProvider) {
				d.Unresolved = append(d.Unresolved, m)
				continue
			}
			if err != nil {
				return nil, err
			}
			if !slices.Contains(pa.Aggregates, a.UUID) {
				d.Missing = append(d.Missing, m)
			}
		}
	}
	if d.Stray, err = s.strays(ctx, nv, pv); err != nil {
		return nil, err
	}
	return d, nil
}

// strays lists the memberships --prune removes. Only the providers of
// hosts with exactly one compute node are looked at (Nova's aggregates
// speak for no others, e.g. ironic nodes). A membership is explained when
// a Nova aggregate of that uuid has the host; an aggregate Nova does not
// know is also kept when a provider that is not a compute node is in it
// (a sharing provider's aggregate, which the operator made on purpose).
func (s *AggregateSync) strays(ctx context.Context, nv *novaView, pv *placementView) ([]Membership, error) {
	novaHas := map[string]map[string]bool{} // aggregate uuid -> hosts
	names := map[string]string{}
	for _, a := range nv.aggs {
		if novaHas[a.UUID] == nil {
			novaHas[a.UUID] = map[string]bool{}
		}
		names[a.UUID] = a.Name
		for _, h := range a.Hosts {
			novaHas[a.UUID][hostKey(h)] = true
		}
	}
	hosts := make([]string, 0, len(nv.nodes))
	for h, us := range nv.nodes {
		if len(us) == 1 && us[0] != "" {
			hosts = append(hosts, h)
		}
	}
	sort.Strings(hosts)
	shared := map[string]bool{} // unknown aggregates: kept for a non-compute member
	var out []Membership
	for _, h := range hosts {
		rp := nv.nodes[h][0]
		pa, err := pv.get(ctx, rp)
		if errors.Is(err, errNoProvider) {
			continue
		}
		if err != nil {
			return nil, err
		}
		for _, agg := range pa.Aggregates {
			if hs, known := novaHas[agg]; known {
				if !hs[h] {
					out = append(out, Membership{Host: h, Provider: rp, Aggregate: agg, Name: names[agg]})
				}
				continue
			}
			keep, seen := shared[agg]
			if !seen {
				if keep, err = s.sharedAggregate(ctx, nv, pv, agg); err != nil {
					return nil, err
				}
				shared[agg] = keep
			}
			if !keep {
				out = append(out, Membership{Host: h, Provider: rp, Aggregate: agg})
			}
		}
	}
	return out, nil
}

// sharedAggregate says whether a provider other than a compute node's is
// in the aggregate.
func (s *AggregateSync) sharedAggregate(ctx context.Context, nv *novaView, pv *placementView, agg string) (bool, error) {
	if pv.all != nil {
		for u, pa := range pv.all {
			if _, compute := nv.computeRP[u]; !compute && slices.Contains(pa.Aggregates, agg) {
				return true, nil
			}
		}
		return false, nil
	}
	ps, err := s.Placement.ListProviders(ctx, inventory.ProviderFilter{MemberOf: []string{agg}})
	if err != nil {
		return false, err
	}
	for _, p := range ps {
		if _, compute := nv.computeRP[p.UUID]; !compute {
			return true, nil
		}
	}
	return false, nil
}

// prune removes (or, with DryRun, lists) the stray memberships, one
// generation-checked write per provider.
func (s *AggregateSync) prune(ctx context.Context, nv *novaView, pv *placementView, res *AggregateResult) error {
	strays, err := s.strays(ctx, nv, pv)
	if err != nil {
		return err
	}
	byRP := map[string][]Membership{}
	var order []string
	for _, m := range strays {
		if _, ok := byRP[m.Provider]; !ok {
			order = append(order, m.Provider)
		}
		byRP[m.Provider] = append(byRP[m.Provider], m)
	}
	removeFrom := func(rp string) func(have []string) []string {
		drop := map[string]bool{}
		for _, m := range byRP[rp] {
			drop[m.Aggregate] = true
		}
		return func(have []string) []string {
			keep := slices.DeleteFunc(slices.Clone(have), func(a string) bool { return drop[a] })
			if len(keep) == len(have) {
				return nil
			}
			return keep
		}
	}
	for i, rp := range order {
		ms := byRP[rp]
		verb := "Would remove"
		if !s.DryRun {
			verb = "Removed"
			_, err := pv.set(ctx, rp, removeFrom(rp), func() []aggChange {
				next := make([]aggChange, 0, len(order)-i)
				for _, rp := range order[i:] {
					next = append(next, aggChange{rp, removeFrom(rp)})
				}
				return next
			})
			if err != nil {
				return fmt.Errorf("remove provider %s (host %s) from aggregates: %w", rp, ms[0].Host, err)
			}
		}
		for _, m := range ms {
			why := "no Nova aggregate has this uuid"
			if m.Name != "" {
				why = fmt.Sprintf("Nova's aggregate %s does not have the host", m.Name)
			}
			fmt.Fprintf(s.Out, "%s host (%s) and provider (%s) from aggregate (%s): %s.\n", verb, m.Host, m.Provider, m.Aggregate, why)
			res.Removed = append(res.Removed, m)
		}
	}
	return nil
}

// AggregatesMigration is the aggregate sync as a step of `migrate all`: one
// pass does everything (it is not batched), so later batches find nothing.
type AggregatesMigration struct {
	Sync      *AggregateSync
	ran       bool
	elsewhere int
}

// DoneElsewhere implements SharedWork: memberships another run added while
// this one was deciding.
func (m *AggregatesMigration) DoneElsewhere() int { return m.elsewhere }

// Name implements Migration.
func (m *AggregatesMigration) Name() string { return AggregatesName }

// Run implements Migration: found counts the memberships to add or remove,
// done those written. A run Nova would end with a non-zero code is an error
// (its problems were printed on Sync.Err).
func (m *AggregatesMigration) Run(ctx context.Context, _ int) (found, done int, err error) {
	if m.ran {
		return 0, 0, nil
	}
	m.ran = true
	// In migrate all, a host whose compute node could not be migrated is
	// skipped, named, and the others are synced.
	m.Sync.SkipHosts = true
	res, err := m.Sync.Run(ctx)
	if res != nil {
		found, done = res.Missing+len(res.Removed), len(res.Added)+len(res.Removed)+res.Elsewhere
		m.elsewhere = res.Elsewhere
	}
	if err != nil {
		return found, done, err
	}
	if res.Exit != AggExitOK {
		return found, done, fmt.Errorf("the sync stopped or left hosts out (nova-manage placement sync_aggregates' exit code %d); see the messages above", res.Exit)
	}
	if len(res.Skipped) > 0 {
		return found, done, res.Skipped
	}
	return found, done, nil
}
