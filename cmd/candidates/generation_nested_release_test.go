package candidates_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/cmd/internal/cmdtest"
	"github.com/rpctl/rpctl/internal/candcompare"
	"github.com/rpctl/rpctl/internal/placementtest"
	"github.com/rpctl/rpctl/internal/testdb"
)

// nestedCloud builds, through a Placement API at base, the trees of
// TestGenerationNestedPlacement13 and returns each provider's root:
//   - three "T" trees: a root without inventory over two children with
//     VCPU:4 each (two granular VCPU groups give, per tree, A+A, A+B, B+A,
//     B+B: the middle two use two providers of the tree);
//   - three "M" trees: a root with CUSTOM_MCPU:4 and CUSTOM_MMEM:4 over a
//     child with CUSTOM_MMEM:4 (the unsuffixed group gives R+R and R+C);
//   - a sharing provider with DISK_GB:100 in one aggregate with every root.
func nestedCloud(t *testing.T, base string) map[string]string {
	t.Helper()
	do := func(method, path, body string) []byte {
		t.Helper()
		st, b := testdb.PlacementDo(t, method, base, path, "1.39", body)
		if st >= 300 {
			t.Fatalf("%s %s: %d %s", method, path, st, b)
		}
		return b
	}
	for _, rc := range []string{"CUSTOM_MCPU", "CUSTOM_MMEM"} {
		do("PUT", "/resource_classes/"+rc, "")
	}
	rootOf := map[string]string{}
	n := 0
	provider := func(parent string, inv string) string {
		t.Helper()
		n++
		uuid := fmt.Sprintf("b0000000-0000-4000-8000-%012d", n)
		body := fmt.Sprintf(`{"name": "rp%d", "uuid": %q}`, n, uuid)
		rootOf[uuid] = uuid
		if parent != "" {
			body = fmt.Sprintf(`{"name": "rp%d", "uuid": %q, "parent_provider_uuid": %q}`, n, uuid, parent)
			rootOf[uuid] = rootOf[parent]
		}
		do("POST", "/resource_providers", body)
		if inv != "" {
			do("PUT", "/resource_providers/"+uuid+"/inventories", `{"resource_provider_generation": 0, "inventories": {`+inv+`}}`)
		}
		return uuid
	}
	var roots []string
	for range 3 {
		r := provider("", "")
		provider(r, `"VCPU": {"total": 4}`)
		provider(r, `"VCPU": {"total": 4}`)
		roots = append(roots, r)
	}
	for range 3 {
		r := provider("", `"CUSTOM_MCPU": {"total": 4}, "CUSTOM_MMEM": {"total": 4}`)
		provider(r, `"CUSTOM_MMEM": {"total": 4}`)
		roots = append(roots, r)
	}
	s := provider("", `"DISK_GB": {"total": 100}`)
	do("PUT", "/resource_providers/"+s+"/traits", `{"resource_provider_generation": 1, "traits": ["MISC_SHARES_VIA_AGGREGATE"]}`)
	const agg = "a9000000-0000-4000-8000-000000000001"
	for _, r := range append(roots, s) {
		var p struct {
			Generation int `json:"generation"`
		}
		json.Unmarshal(do("GET", "/resource_providers/"+r, ""), &p)
		do("PUT", "/resource_providers/"+r+"/aggregates", fmt.Sprintf(`{"resource_provider_generation": %d, "aggregates": [%q]}`, p.Generation, agg))
	}
	return rootOf
}

// acAnswer is what the checks read of a GET /allocation_candidates body
// (1.12 on: allocations keyed by provider).
type acAnswer struct {
	AllocationRequests []struct {
		Allocations map[string]any `json:"allocations"`
	} `json:"allocation_requests"`
	ProviderSummaries map[string]any `json:"provider_summaries"`
}

func parseAnswer(t *testing.T, body []byte) acAnswer {
	t.Helper()
	var a acAnswer
	if err := json.Unmarshal(body, &a); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	return a
}

// used is the providers the answer's candidates allocate from.
func (a acAnswer) used() map[string]bool {
	u := map[string]bool{}
	for _, ar := range a.AllocationRequests {
		for p := range ar.Allocations {
			u[p] = true
		}
	}
	return u
}

func (a acAnswer) hosts(rootOf map[string]string) int {
	h := map[string]bool{}
	for p := range a.used() {
		h[rootOf[p]] = true
	}
	return len(h)
}

// TestGenerationNestedPlacement13: Placement 13.0.0's own placement-api
// (the 2025.1 chroot), one per placement.conf ([placement]
// max_allocation_candidates 1, 2, 4, 5, 10 depth-first and 1, 2, 5, 10
// breadth-first, and none), against rpctl candidates --release 2025.1
// reading the same file, on nested trees at microversions 1.17, 1.25, 1.28
// (below 1.29: Placement drops, after generation, the candidates that use
// two providers of one tree) and 1.29, with and without limit, with a
// sharing provider. Placement bounds generation before it drops
// (_merge_candidates, then exclude_nested_providers, then limit_results),
// so below 1.29 it returns fewer than the bound where filtering first
// would fill it; the counts each case wants are Placement's, derived from
// the trees' shape, and hold whatever order Placement's sets give.
//
// Placement generates in the order of Python sets (hash order), so when
// the bound or limit cuts, which candidates it keeps is its own: the
// answers are then compared by count, hosts (where the shape fixes them),
// and validity: every candidate and provider summary is one of
// Placement's unbounded answer, and the summaries are those the kept
// candidates call for. Where nothing is cut the answers must be equal
// (candcompare.Diff, the comparison of the Zed differential).
//
// Zed's Placement 8 has no such option: rpctl --release zed, reading a
// placement.conf that sets it, gives Placement 8's own answer.
func TestGenerationNestedPlacement13(t *testing.T) {
	chroot := testdb.ReleaseChroot(t, "2025.1")
	pl := testdb.NewMySQL(t)
	chroot.DBSync(t, nil, nil, pl)
	unbounded := chroot.PlacementAPI(t, pl.URL, "")
	rootOf := nestedCloud(t, unbounded)
	dir := chroot.TempDir(t)

	type conf struct{ name, text string }
	confs := []conf{{"unbounded", ""}}
	for _, m := range []int{1, 2, 4, 5, 10} {
		confs = append(confs, conf{fmt.Sprintf("df%d", m), fmt.Sprintf("max_allocation_candidates = %d\n", m)})
	}
	for _, m := range []int{1, 2, 5, 10} {
		confs = append(confs, conf{fmt.Sprintf("bf%d", m), fmt.Sprintf("max_allocation_candidates = %d\nallocation_candidates_generation_strategy = breadth-first\n", m)})
	}
	const (
		granular = "resources1=VCPU:1&resources2=VCPU:1&group_policy=none"
		unsuff   = "resources=CUSTOM_MCPU:1,CUSTOM_MMEM:1"
		anyN     = -1 // Placement's count depends on its set order
	)
	// Per tree T gives K D D K (kept, dropped below 1.29) whatever order
	// Placement's set gives the two children: depth-first takes the trees
	// one after the other, breadth-first one candidate of each tree per
	// turn. Per tree M gives K and D in Placement's set order.
	tCut := map[string]int{"unbounded": 6, "df1": 1, "df2": 1, "df4": 2, "df5": 3, "df10": 5, "bf1": 1, "bf2": 2, "bf5": 3, "bf10": 4}
	mCut := map[string]int{"unbounded": 3, "df1": anyN, "df2": 1, "df4": 2, "df5": anyN, "df10": 3, "bf1": anyN, "bf2": anyN, "bf5": anyN, "bf10": 3}
	// Where the order decides, the counts it allows: depth-first 5 is two
	// whole trees and one candidate of the third; breadth-first 5 one
	// candidate of each tree, then the second of the first two (K after
	// D, D after K: one kept each).
	mRange := map[string][2]int{"df1": {0, 1}, "df5": {2, 3}, "bf1": {0, 1}, "bf2": {0, 2}, "bf5": {2, 3}}
	bounded := func(n int) map[string]int {
		w := map[string]int{"unbounded": n}
		for _, c := range confs[1:] {
			var m int
			fmt.Sscanf(c.name[2:], "%d", &m)
			w[c.name] = min(m, n)
		}
		return w
	}
	limited := func(w map[string]int, l int) map[string]int {
		out := map[string]int{}
		for k, v := range w {
			out[k] = v
			if v != anyN {
				out[k] = min(v, l)
			}
		}
		return out
	}
	zero := map[string]int{}
	for _, c := range confs {
		zero[c.name] = 0
	}
	cases := []struct {
		mv, query string
		want      map[string]int
	}{
		{"1.25", granular, tCut},
		{"1.28", granular, tCut},
		{"1.28", granular + "&resources3=DISK_GB:1", tCut},
		{"1.28", granular + "&limit=2", limited(tCut, 2)},
		{"1.28", granular + "&limit=4", limited(tCut, 4)},
		// isolate: A+A and B+B fail the policy before they are counted;
		// A+B and B+A are dropped.
		{"1.28", "resources1=VCPU:1&resources2=VCPU:1&group_policy=isolate", zero},
		{"1.29", granular, bounded(12)},
		{"1.29", granular + "&limit=4", limited(bounded(12), 4)},
		{"1.17", unsuff, mCut},
		{"1.28", unsuff, mCut},
		{"1.28", unsuff + ",DISK_GB:1", mCut},
		{"1.28", unsuff + "&limit=1", limited(mCut, 1)},
		{"1.29", unsuff, bounded(6)},
	}
	get := func(base, mv, query string) []byte {
		t.Helper()
		st, body := testdb.PlacementGet(t, base, "/allocation_candidates?"+query, mv)
		if st != 200 {
			t.Fatalf("GET ?%s at %s: %d %s", query, mv, st, body)
		}
		return body
	}
	// Placement's unbounded answers: at the case's microversion without
	// limit (what any cut answer must be drawn from), and at 1.29 (every
	// candidate generated, before the drop).
	type key struct{ mv, query string }
	full := map[key][]byte{}
	generated := map[string]int{}
	noLimit := func(q string) string {
		if i := strings.Index(q, "&limit="); i >= 0 {
			return q[:i]
		}
		return q
	}
	for _, tc := range cases {
		q := noLimit(tc.query)
		full[key{tc.mv, q}] = get(unbounded, tc.mv, q)
		generated[q] = candcompare.Count(get(unbounded, "1.29", q))
	}
	var table []string
	exact, drawn := 0, 0 // answers compared whole; cut answers checked as drawn from the whole
	for _, c := range confs {
		base := unbounded
		if c.text != "" {
			base = chroot.PlacementAPI(t, pl.URL, "[placement]\n"+c.text)
		}
		file := filepath.Join(dir, c.name+".conf")
		if err := os.WriteFile(file, []byte("[placement]\n"+c.text), 0o644); err != nil {
			t.Fatal(err)
		}
		var m int
		if c.text != "" {
			fmt.Sscanf(c.name[2:], "%d", &m)
		}
		for _, tc := range cases {
			name := fmt.Sprintf("%s %s ?%s", c.name, tc.mv, tc.query)
			theirs := get(base, tc.mv, tc.query)
			out, errOut, code := cmdtest.Rpctl(t, "--config-file", file, "--placement-db", pl.URL, "-f", "json",
				"candidates", "--release", "2025.1", "--microversion", tc.mv, "--query", tc.query)
			if code != 0 {
				t.Fatalf("%s: rpctl exit %d\n%s%s", name, code, out, errOut)
			}
			ours := []byte(out)
			p, r := parseAnswer(t, theirs), parseAnswer(t, ours)
			table = append(table, fmt.Sprintf("%-9s %s ?%-65s Placement %d on %d hosts, rpctl %d on %d", c.name, tc.mv, tc.query,
				len(p.AllocationRequests), p.hosts(rootOf), len(r.AllocationRequests), r.hosts(rootOf)))
			want := tc.want[c.name]
			if want != anyN && len(p.AllocationRequests) != want {
				t.Errorf("%s: Placement 13 gave %d candidates; the case wants %d", name, len(p.AllocationRequests), want)
			}
			if want != anyN && len(r.AllocationRequests) != want {
				t.Errorf("%s: rpctl gave %d candidates, want Placement's %d", name, len(r.AllocationRequests), want)
			}
			if want == anyN {
				rg := mRange[c.name]
				if l := strings.Index(tc.query, "&limit="); l >= 0 {
					var n int
					fmt.Sscanf(tc.query[l+len("&limit="):], "%d", &n)
					rg = [2]int{min(rg[0], n), min(rg[1], n)}
				}
				for side, n := range map[string]int{"Placement 13": len(p.AllocationRequests), "rpctl": len(r.AllocationRequests)} {
					if n < rg[0] || n > rg[1] {
						t.Errorf("%s: %s gave %d candidates; the order of generation allows %d to %d", name, side, n, rg[0], rg[1])
					}
				}
			}
			cut := m > 0 && m < generated[noLimit(tc.query)] || tc.query != noLimit(tc.query)
			if !cut {
				// Nothing cut: Placement's answer is the whole, rpctl's must
				// be the same.
				d, err := candcompare.Diff(candcompare.Answer{Status: 200, Body: theirs}, candcompare.Answer{Status: 200, Body: ours})
				if err != nil {
					t.Fatal(err)
				}
				for _, l := range d {
					t.Errorf("%s: %s", name, l)
				}
				exact++
				continue
			}
			drawn++
			if want != anyN && !strings.Contains(tc.query, "limit=") && p.hosts(rootOf) != r.hosts(rootOf) {
				t.Errorf("%s: Placement's candidates are on %d hosts, rpctl's on %d", name, p.hosts(rootOf), r.hosts(rootOf))
			}
			whole := full[key{tc.mv, noLimit(tc.query)}]
			wholeSums := parseAnswer(t, whole).ProviderSummaries
			for side, body := range map[string][]byte{"Placement": theirs, "rpctl": ours} {
				// Drawn from the whole answer: nothing only this side has.
				d, err := candcompare.Diff(candcompare.Answer{Status: 200, Body: whole}, candcompare.Answer{Status: 200, Body: body})
				if err != nil {
					t.Fatal(err)
				}
				for _, l := range d {
					if !strings.Contains(l, "only from Placement") {
						t.Errorf("%s: %s's answer is not drawn from Placement's whole answer: %s", name, side, l)
					}
				}
				// The summaries the kept candidates call for: below 1.29
				// the providers they use (a limit may keep those of
				// candidates it cut, in the trees it keeps); from 1.29 every
				// provider of their trees.
				a := parseAnswer(t, body)
				used := a.used()
				trees := map[string]bool{}
				for p := range used {
					trees[rootOf[p]] = true
				}
				var bad []string
				for p := range wholeSums {
					_, has := a.ProviderSummaries[p]
					var want bool
					switch {
					case tc.mv >= "1.29":
						want = trees[rootOf[p]]
					case used[p]:
						want = true
					case tc.query != noLimit(tc.query) && trees[rootOf[p]]:
						want = has // kept if a cut candidate used it
					}
					if has != want {
						bad = append(bad, fmt.Sprintf("%s (has %v, want %v)", p, has, want))
					}
				}
				if len(bad) > 0 {
					slices.Sort(bad)
					t.Errorf("%s: %s's provider summaries: %s", name, side, strings.Join(bad, ", "))
				}
			}
		}
	}
	t.Logf("answers (candidates on hosts); %d compared whole, %d cut by the bound or limit and checked by count, hosts and validity:\n%s", exact, drawn, strings.Join(table, "\n"))

	// Zed: Placement 8.0.0 has no such option; rpctl --release zed ignores
	// it and answers as Placement 8 does, on the same trees.
	zed := placementtest.New(t)
	nestedCloud(t, zed.Base)
	file := filepath.Join(dir, "zed.conf")
	if err := os.WriteFile(file, []byte("[placement]\nmax_allocation_candidates = 2\nallocation_candidates_generation_strategy = breadth-first\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var zedTable []string
	for _, tc := range cases {
		name := fmt.Sprintf("zed %s ?%s", tc.mv, tc.query)
		theirs := get(zed.Base, tc.mv, tc.query)
		out, errOut, code := cmdtest.Rpctl(t, "--config-file", file, "--placement-db", zed.URL, "-f", "json",
			"candidates", "--release", "zed", "--microversion", tc.mv, "--query", tc.query)
		if code != 0 {
			t.Fatalf("%s: rpctl exit %d\n%s%s", name, code, out, errOut)
		}
		zedTable = append(zedTable, fmt.Sprintf("zed %s ?%-65s Placement 8 %d, rpctl %d", tc.mv, tc.query, candcompare.Count(theirs), candcompare.Count([]byte(out))))
		if want := tc.want["unbounded"]; want != anyN && candcompare.Count(theirs) != want {
			t.Errorf("%s: Placement 8 gave %d candidates, want %d (no bound)", name, candcompare.Count(theirs), want)
		}
		if tc.query != noLimit(tc.query) {
			if candcompare.Count(theirs) != candcompare.Count([]byte(out)) {
				t.Errorf("%s: Placement 8 gave %d candidates, rpctl %d", name, candcompare.Count(theirs), candcompare.Count([]byte(out)))
			}
			continue
		}
		d, err := candcompare.Diff(candcompare.Answer{Status: 200, Body: theirs}, candcompare.Answer{Status: 200, Body: []byte(out)})
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range d {
			t.Errorf("%s: %s", name, l)
		}
	}
	t.Logf("Zed, placement.conf setting max_allocation_candidates = 2, breadth-first:\n%s", strings.Join(zedTable, "\n"))
}
