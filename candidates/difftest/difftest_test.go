package difftest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rpctl/rpctl/candidates"
	"github.com/rpctl/rpctl/candidates/internal/acbody"
	"github.com/rpctl/rpctl/internal/dsn"
	"github.com/rpctl/rpctl/internal/testdb"
	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/placementdb"
	"github.com/rpctl/rpctl/storage/schema"
)

// TestDifferential is the proof that the core answers like Placement 8.0.0:
// per seed, a random cloud is written through the real placement-api onto
// MariaDB, rpctl loads the same database through package storage, and random
// queries at every microversion the issue names go to both. Allocation
// requests are compared as multisets, provider summaries exactly, rejections
// by status and the whole error body. Queries with a limit are compared by
// count, and by every returned request and summary being one of the
// unlimited answer's (Placement's order within a limit is hash order).
// Every accepted query is also checked with the brute-force oracle, which
// is the only check where Placement crashes (docs/candidates.md). The run counts the
// queries whose amounts sit on a capacity boundary (and fails if there are
// too few): exactly int((total - reserved) * ratio) - used of some provider
// or one more, and among them those where the FLOAT ratio makes
// Placement's SQL filter and its Python capacity disagree.
//
// RPCTL_DIFF_SEEDS=1,2,3 or =random picks the clouds (default 1,2, two
// minutes or so); RPCTL_DIFF_QUERIES the queries per cloud (120). A failure
// prints the seed, microversion and query.
func TestDifferential(t *testing.T) {
	seeds := []uint64{1, 2}
	if s := os.Getenv("RPCTL_DIFF_SEEDS"); s != "" {
		seeds = nil
		for _, f := range strings.Split(s, ",") {
			if f == "random" {
				seeds = append(seeds, uint64(time.Now().UnixNano()))
				continue
			}
			n, err := strconv.ParseUint(f, 10, 64)
			if err != nil {
				t.Fatalf("RPCTL_DIFF_SEEDS: %v", err)
			}
			seeds = append(seeds, n)
		}
	}
	perCloud := 120
	if s := os.Getenv("RPCTL_DIFF_QUERIES"); s != "" {
		perCloud, _ = strconv.Atoi(s)
	}
	total := map[string]int{}
	for _, seed := range seeds {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			for k, v := range runCloud(t, seed, perCloud) {
				total[k] += v
			}
		})
	}
	t.Logf("outcomes over %d clouds: %v", len(seeds), total)
	// The boundary queries are the point of the generator: they must be a
	// good share of all queries, and many must have been answered.
	// The narrowed load must have left providers out often enough for its
	// comparison with the full one to prove something.
	if q := len(seeds) * perCloud; total["narrowed load"] < q/10 {
		t.Errorf("only %d of %d queries read fewer providers than the whole cloud: the narrowed load was hardly tested", total["narrowed load"], q)
	}
	if q := len(seeds) * perCloud; total["boundary query"] < q/8 || total["boundary query answered"] < q/40 {
		t.Errorf("only %d of %d queries on a capacity boundary (%d answered): the generator lost its edge",
			total["boundary query"], q, total["boundary query answered"])
	}
}

func runCloud(t *testing.T, seed uint64, n int) map[string]int {
	ctx := context.Background()
	my, db := newPlacementDB(t)
	// The narrowed read goes through the connection `rpctl candidates`
	// opens (several statements per query), the full one through Open's
	// (a UNION per query): each read is compared with the other.
	scripts := openReadScripts(t, my)
	base := testdb.PlacementAPI(t, my.URL)
	c := newCloud(seed)
	start := time.Now()
	c.write(t, base)
	t.Logf("seed %d: %d providers, %d consumers written through placement-api in %v", seed, len(c.providers), len(c.allocs), time.Since(start).Round(time.Millisecond))
	in, err := placementdb.LoadPlacementModel(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	model, err := candidates.NewModel(in)
	if err != nil {
		t.Fatal(err)
	}
	d := &differ{t: t, base: base, model: model, sharing: map[string]bool{}}
	for _, p := range c.providers {
		if p.sharing {
			d.sharing[p.uuid] = true
		}
	}
	g := &gen{r: rand.New(rand.NewPCG(seed, 0x5eed)), c: c}
	outcomes := map[string]int{}
	failures := 0
	start = time.Now()
	for i := range n {
		mv, q := g.next(i)
		out, err := d.compare(q, mv)
		if err != nil {
			failures++
			t.Errorf("seed %d, query %d at 1.%d: GET /allocation_candidates?%s\n%v", seed, i, mv, q, err)
			if failures >= 8 {
				t.Fatalf("stopping after %d differences (seed %d)", failures, seed)
			}
			continue
		}
		outcomes[out]++
		if g.boundary {
			outcomes["boundary query"]++
			if out != "same (empty)" && !strings.HasPrefix(out, "rejected") {
				outcomes["boundary query answered"]++
			}
		}
		if g.floatEdge {
			outcomes["FLOAT boundary query"]++
		}
		if g.invalid {
			outcomes["deliberately invalid query"]++
		}
		// Explain is proven on the same database-loaded model, and the
		// search against the brute-force oracle: on every accepted query,
		// so also where Placement crashed.
		if req, err := candidates.ParseQuery(q, candidates.Microversion(mv)); err == nil {
			if err := d.model.CheckExplain(req); err != nil {
				failures++
				t.Errorf("seed %d, query %d at 1.%d: explain: GET /allocation_candidates?%s\n%v", seed, i, mv, q, err)
			}
			if err := agreeWithOracle(in, d.model, req); err != nil {
				failures++
				t.Errorf("seed %d, query %d at 1.%d: oracle: GET /allocation_candidates?%s\n%v", seed, i, mv, q, err)
			} else if out == placementCrashed {
				outcomes["Placement 500, rpctl agrees with the oracle"]++
			}
			// The narrowed read (what `rpctl candidates` loads) answers
			// byte for byte as the full one, and agrees with the oracle
			// over the whole cloud.
			narrowed, err := sameNarrowed(ctx, scripts, d.model, req)
			if err == nil {
				err = agreeWithOracle(in, narrowed, req)
				if narrowed.NumProviders() < d.model.NumProviders() {
					outcomes["narrowed load"]++
				}
			}
			if err != nil {
				failures++
				t.Errorf("seed %d, query %d at 1.%d: narrowed load: GET /allocation_candidates?%s\n%v", seed, i, mv, q, err)
			}
		}
		if out != "same (empty)" && !strings.HasPrefix(out, "rejected") {
			for _, f := range features(q, mv) {
				outcomes["answered with "+f]++
			}
		}
	}
	t.Logf("seed %d: %d queries in %v: %v", seed, n, time.Since(start).Round(time.Millisecond), outcomes)
	return outcomes
}

type differ struct {
	t       *testing.T
	base    string
	model   *candidates.Model
	sharing map[string]bool
}

type answer struct {
	status int
	body   []byte
}

func (d *differ) placement(q string, mv int) answer {
	status, body := testdb.PlacementGet(d.t, d.base, "/allocation_candidates?"+q, fmt.Sprintf("1.%d", mv))
	return answer{status, body}
}

func (d *differ) ours(q string, mv int, requestID string) (answer, *candidates.Request) {
	req, err := candidates.ParseQuery(q, candidates.Microversion(mv))
	var res *candidates.Result
	if err == nil {
		res, err = d.model.Search(context.Background(), req, candidates.Options{})
	}
	if err != nil {
		var ae *candidates.APIError
		if !errors.As(err, &ae) {
			return answer{500, []byte(err.Error())}, req
		}
		return answer{ae.Status, ae.Body(candidates.Microversion(mv), requestID)}, req
	}
	b, err := res.MarshalPlacement(candidates.Microversion(mv))
	if err != nil {
		return answer{500, []byte(err.Error())}, req
	}
	return answer{200, b}, req
}

// compare returns the kind of agreement, or what differs.
func (d *differ) compare(q string, mv int) (string, error) {
	theirs := d.placement(q, mv)
	var rid string
	if theirs.status != 200 {
		var e struct {
			Errors []struct {
				RequestID string `json:"request_id"`
			} `json:"errors"`
		}
		if json.Unmarshal(theirs.body, &e) == nil && len(e.Errors) > 0 {
			rid = e.Errors[0].RequestID
		}
	}
	ours, req := d.ours(q, mv, rid)
	if theirs.status == 500 && (ours.status == 200 || ours.status == 400) {
		// Placement crashed: rpctl answers (candidates, or the 400 a later
		// group's unknown trait or class would have given), and runCloud
		// checks that answer with the oracle instead. Only the crash the
		// docs/candidates.md documents is accepted.
		if sig := crashSignature(testdb.PlacementLog(d.base)); sig != knownCrash {
			return "", fmt.Errorf("Placement 500 with an undocumented crash %q\nours: %.600s", sig, ours.body)
		}
		return placementCrashed, nil
	}
	if ours.status != theirs.status {
		return "", fmt.Errorf("status %d, Placement %d\nours:      %.600s\nPlacement: %.600s", ours.status, theirs.status, ours.body, theirs.body)
	}
	if theirs.status != 200 {
		if bytes.Equal(ours.body, theirs.body) {
			return fmt.Sprintf("rejected %d", theirs.status), nil
		}
		if setOrder(ours.body, q) == setOrder(theirs.body, q) {
			return fmt.Sprintf("rejected %d (Python set order)", theirs.status), nil
		}
		return "", fmt.Errorf("error bodies differ\nours:      %s\nPlacement: %s", ours.body, theirs.body)
	}
	o, p := parse(ours.body), parse(theirs.body)
	if req.Limit > 0 {
		return d.compareLimited(q, mv, req, o, p)
	}
	om, pm := multiset(o.AllocationRequests), multiset(p.AllocationRequests)
	os, ps := summaries(o.ProviderSummaries), summaries(p.ProviderSummaries)
	kind := "same"
	if len(om) == 0 {
		kind = "same (empty)"
	}
	if !reflect.DeepEqual(om, pm) {
		k, err := d.deliberate(req, om, pm)
		if err != nil {
			return "", fmt.Errorf("%v\nours:\n%s\nPlacement:\n%s", err, acbody.Dump(om, 12), acbody.Dump(pm, 12))
		}
		kind = k
		// The extra candidates bring their trees' summaries along.
		for u, v := range ps {
			if !reflect.DeepEqual(os[u], v) {
				return "", fmt.Errorf("%s, but provider summary %s differs\nours:      %v\nPlacement: %v", k, u, os[u], v)
			}
		}
		return kind, nil
	}
	if !reflect.DeepEqual(os, ps) {
		return "", fmt.Errorf("provider_summaries differ\nours:      %s\nPlacement: %s", jsonOf(os), jsonOf(ps))
	}
	return kind, nil
}

// compareLimited checks a limited answer against the unlimited ones (which
// are compared in full first).
func (d *differ) compareLimited(q string, mv int, req *candidates.Request, o, p acbody.Body) (string, error) {
	var keep []string
	for _, kv := range strings.Split(q, "&") {
		if !strings.HasPrefix(kv, "limit=") {
			keep = append(keep, kv)
		}
	}
	unl := strings.Join(keep, "&")
	if _, err := d.compare(unl, mv); err != nil {
		return "", fmt.Errorf("unlimited query %s: %w", unl, err)
	}
	all := parse(d.placement(unl, mv).body)
	if len(o.AllocationRequests) != len(p.AllocationRequests) {
		// With the sharing quirk Placement may have fewer in total.
		if len(p.AllocationRequests) < req.Limit && len(o.AllocationRequests) > len(p.AllocationRequests) {
			return "deliberate: sharing-only unsuffixed group (limited)", nil
		}
		return "", fmt.Errorf("limit %d: %d requests, Placement %d", req.Limit, len(o.AllocationRequests), len(p.AllocationRequests))
	}
	am := multiset(all.AllocationRequests)
	allS := summaries(all.ProviderSummaries)
	extra := 0
	for k := range multiset(o.AllocationRequests) {
		if am[k] == 0 {
			extra++
		}
	}
	for u, v := range summaries(o.ProviderSummaries) {
		if w, ok := allS[u]; ok && !reflect.DeepEqual(v, w) {
			return "", fmt.Errorf("limited summary of %s: ours %v, Placement's unlimited %v", u, v, w)
		}
	}
	if extra > 0 {
		return "deliberate: sharing-only unsuffixed group (limited)", nil
	}
	return "same (limited)", nil
}

// deliberate classifies a difference as one docs/candidates.md documents, or
// returns an error.
func (d *differ) deliberate(req *candidates.Request, om, pm map[string]int) (string, error) {
	// §3.8: Placement inflates amounts when a class is asked for by the
	// unsuffixed and a suffixed group and group_policy is not "none".
	if req.GroupPolicy != "none" {
		if u := req.Group(""); u != nil {
			overlap := false
			for _, g := range req.Groups {
				for rc := range g.Resources {
					if g.Suffix != "" && u.Resources[rc] > 0 {
						overlap = true
					}
				}
			}
			// The inflated amounts can also exceed capacity, so Placement
			// then drops candidates: its shapes are a subset of ours.
			if overlap && subset(shapes(pm), shapes(om)) {
				return "deliberate: §3.8 inflated amounts", nil
			}
		}
	}
	// Sharing-only unsuffixed group: Placement keeps such a candidate for one
	// arbitrary anchor, we keep it for every one; so ours ⊇ Placement's and
	// each extra request uses a sharing provider.
	for k, n := range pm {
		if om[k] < n {
			return "", fmt.Errorf("Placement has a request we lack: %s", k)
		}
	}
	for k, n := range om {
		if n > pm[k] && !d.usesSharing(k) {
			return "", fmt.Errorf("we have an extra request without a sharing provider: %s", k)
		}
	}
	return "deliberate: sharing-only unsuffixed group", nil
}

func (d *differ) usesSharing(canon string) bool {
	for u := range d.sharing {
		if strings.Contains(canon, u) {
			return true
		}
	}
	return false
}

func parse(b []byte) acbody.Body {
	var a acbody.Body
	_ = json.Unmarshal(b, &a)
	return a
}

// multiset keys every request by acbody.Canon; one that does not decode
// stands as itself, so that it differs from any valid one.
func multiset(reqs []json.RawMessage) map[string]int {
	m := map[string]int{}
	for _, r := range reqs {
		k, err := acbody.Canon(r)
		if err != nil {
			k = "invalid: " + string(r)
		}
		m[k]++
	}
	return m
}

// shapes drops the amounts: which providers and mappings a request uses.
func shapes(m map[string]int) map[string]int {
	out := map[string]int{}
	for k, n := range m {
		var v map[string]any
		_ = json.Unmarshal([]byte(k), &v)
		if a, ok := v["allocations"].(map[string]any); ok {
			for u, r := range a {
				res := r.(map[string]any)["resources"].(map[string]any)
				for rc := range res {
					res[rc] = 0
				}
				a[u] = r
			}
		}
		b, _ := json.Marshal(v)
		out[string(b)] += n
	}
	return out
}

// summaries is acbody.Summaries; an entry that does not decode stands as
// nil, which differs from any valid one.
func summaries(in map[string]json.RawMessage) map[string]any {
	out, _ := acbody.Summaries(in)
	return out
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func subset(a, b map[string]int) bool {
	for k, n := range a {
		if b[k] < n {
			return false
		}
	}
	return true
}

// placementCrashed is compare's outcome when Placement answered 500.
const placementCrashed = "Placement 500 (crash)"

// knownCrash is the one Placement 8.0.0 crash the random clouds reach (the
// docs/candidates.md says when): _alloc_candidates_multiple_providers looks up the
// summary of a sharing provider whose own tree was filtered out.
const knownCrash = "KeyError in _alloc_candidates_multiple_providers"

var (
	logPrefixRE = regexp.MustCompile(`^\S+ \S+ \d+ ERROR placement\.fault_wrap ?`)
	frameRE     = regexp.MustCompile(`^\s+File ".*", line \d+, in (\w+)$`)
	exceptionRE = regexp.MustCompile(`^([A-Za-z_][\w.]*): `)
)

// crashSignature names the last traceback placement-api logged (oslo.log
// prefixes every line) by its exception and innermost function.
func crashSignature(log []byte) string {
	sig, fn := "no traceback in the log", ""
	for _, line := range strings.Split(string(log), "\n") {
		loc := logPrefixRE.FindStringIndex(line)
		if loc == nil {
			continue
		}
		line = line[loc[1]:]
		if m := frameRE.FindStringSubmatch(line); m != nil {
			fn = m[1]
		} else if m := exceptionRE.FindStringSubmatch(line); m != nil && fn != "" {
			sig, fn = m[1]+" in "+fn, ""
		}
	}
	return sig
}

var (
	badGroupsRE = regexp.MustCompile(`bad group\(s\) - \[([^\]]*)\]`)
	noTraitRE   = regexp.MustCompile(`No such trait\(s\): ([A-Za-z0-9_]+)\.`)
)

// setOrder erases what Placement takes from iterating a Python set, whose
// order changes with every placement-api process (PYTHONHASHSEED): the list
// of resourceless groups missing from same_subtree, and which one of several
// unknown traits "No such trait(s)" names (any trait the query names will
// do).
func setOrder(body []byte, q string) string {
	s := badGroupsRE.ReplaceAllStringFunc(string(body), func(m string) string {
		items := strings.Split(badGroupsRE.FindStringSubmatch(m)[1], ", ")
		sort.Strings(items)
		return "bad group(s) - [" + strings.Join(items, ", ") + "]"
	})
	return noTraitRE.ReplaceAllStringFunc(s, func(m string) string {
		name := noTraitRE.FindStringSubmatch(m)[1]
		if strings.Contains(q, name) {
			return "No such trait(s): <one of the query's>."
		}
		return m
	})
}

var featureRE = []struct {
	name string
	re   *regexp.Regexp
}{
	{"required", regexp.MustCompile(`(^|&)required[^=]*=`)},
	{"forbidden trait", regexp.MustCompile(`required[^=]*=([^&]*,)?!`)},
	{"any-of trait", regexp.MustCompile(`required[^=]*=in:`)},
	{"member_of", regexp.MustCompile(`member_of[^=]*=[^!]`)},
	{"forbidden aggregate", regexp.MustCompile(`member_of[^=]*=!`)},
	{"in_tree", regexp.MustCompile(`in_tree`)},
	{"granular group", regexp.MustCompile(`resources[^=]+=`)},
	{"isolate", regexp.MustCompile(`group_policy=isolate`)},
	{"root_required", regexp.MustCompile(`root_required`)},
	{"same_subtree", regexp.MustCompile(`same_subtree`)},
	{"limit", regexp.MustCompile(`limit=`)},
}

// features names the parameters a query uses, to show what the non-empty
// comparisons covered.
func features(q string, mv int) []string {
	out := []string{fmt.Sprintf("1.%d", mv)}
	for _, f := range featureRE {
		if f.re.MatchString(q) {
			out = append(out, f.name)
		}
	}
	return out
}

// openReadScripts opens my's database as `rpctl candidates` does
// (storage.OpenReadScripts), closed when the test ends.
func openReadScripts(tb testing.TB, my *testdb.MySQL) *storage.DB {
	tb.Helper()
	tg, err := dsn.Parse(my.DSN)
	if err != nil {
		tb.Fatal(err)
	}
	db, err := storage.OpenReadScripts(context.Background(), tg, storage.RolePlacement, "")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	if !db.ReadsScripts() {
		tb.Fatal("OpenReadScripts: not ReadsScripts")
	}
	return db
}

// sameNarrowed loads the model placementdb.LoadPlacementModelFor reads for req
// with narrowing forced (these clouds are far below placementdb.NarrowFrom,
// where `rpctl candidates` reads everything) and checks that it answers req
// exactly as full, the model of everything: the same body (or the same
// error), the same summaries. It returns the narrowed model.
func sameNarrowed(ctx context.Context, db *storage.DB, full *candidates.Model, req *candidates.Request) (*candidates.Model, error) {
	in, err := placementdb.LoadPlacementModelFor(ctx, db, req, 0)
	if err != nil {
		return nil, err
	}
	m, err := candidates.NewModel(in)
	if err != nil {
		return nil, err
	}
	answer := func(m *candidates.Model) string {
		res, err := m.Search(ctx, req, candidates.Options{})
		if err != nil {
			return "error: " + err.Error()
		}
		b, err := res.MarshalPlacement(req.Microversion)
		if err != nil {
			return "marshal error: " + err.Error()
		}
		return string(b)
	}
	if got, want := answer(m), answer(full); got != want {
		return nil, fmt.Errorf("narrowed to %d of %d providers, the answer differs:\nnarrowed %.600s\nfull     %.600s", m.NumProviders(), full.NumProviders(), got, want)
	}
	return m, nil
}

// newPlacementDB is a fresh MariaDB database with Placement's schema, open
// through storage and closed when the test ends.
func newPlacementDB(tb testing.TB) (*testdb.MySQL, *storage.DB) {
	tb.Helper()
	ctx := context.Background()
	my := testdb.NewMySQL(tb)
	tg, err := dsn.Parse(my.DSN)
	if err != nil {
		tb.Fatal(err)
	}
	db, err := storage.Open(ctx, tg, storage.RolePlacement, "")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	if _, err := schema.Init(ctx, db, schema.PartPlacement); err != nil {
		tb.Fatal(err)
	}
	return my, db
}
