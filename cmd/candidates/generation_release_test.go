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
	"github.com/rpctl/rpctl/internal/testdb"
)

// TestGenerationOptionsPlacement13: Placement 13.0.0's own placement-api
// (the 2025.1 chroot) with [placement] max_allocation_candidates and
// allocation_candidates_generation_strategy set, and rpctl candidates
// --release 2025.1 reading the same placement.conf, on three hosts with two
// NUMA-like children each holding VCPU: the same number of candidates and
// of hosts they land on (depth-first fills a host before the next,
// breadth-first takes one per host in turn; Placement's order among hosts is
// its own, so which hosts is not compared), every candidate one Placement
// returns without the bound; --release zed ignores the options, as
// Placement 8 has none.
func TestGenerationOptionsPlacement13(t *testing.T) {
	chroot := testdb.ReleaseChroot(t, "2025.1")
	pl := testdb.NewMySQL(t)
	chroot.DBSync(t, nil, nil, pl)
	base := chroot.PlacementAPI(t, pl.URL, "")
	rootOf := map[string]int{}
	do := func(method, path, body string) {
		t.Helper()
		if st, b := testdb.PlacementDo(t, method, base, path, "1.39", body); st >= 300 {
			t.Fatalf("%s %s: %d %s", method, path, st, b)
		}
	}
	for i := range 3 {
		root := fmt.Sprintf("a0000000-0000-4000-8000-00000000000%d", i)
		do("POST", "/resource_providers", fmt.Sprintf(`{"name": "host%d", "uuid": %q}`, i, root))
		rootOf[root] = i
		for j, side := range []string{"a", "b"} {
			child := fmt.Sprintf("c0000000-0000-4000-8000-0000000000%d%d", i, j)
			do("POST", "/resource_providers", fmt.Sprintf(`{"name": "host%d-numa-%s", "uuid": %q, "parent_provider_uuid": %q}`, i, side, child, root))
			do("PUT", "/resource_providers/"+child+"/inventories", `{"resource_provider_generation": 0, "inventories": {"VCPU": {"total": 4}}}`)
			rootOf[child] = i
		}
	}
	type answer struct {
		AllocationRequests []struct {
			Allocations map[string]any `json:"allocations"`
		} `json:"allocation_requests"`
	}
	// candidates returns each candidate's provider (one each here).
	candidates := func(body []byte) []string {
		t.Helper()
		var a answer
		if err := json.Unmarshal(body, &a); err != nil {
			t.Fatalf("%v: %s", err, body)
		}
		var out []string
		for _, ar := range a.AllocationRequests {
			for u := range ar.Allocations {
				out = append(out, u)
			}
		}
		return out
	}
	hosts := func(provs []string) int {
		seen := map[int]bool{}
		for _, p := range provs {
			seen[rootOf[p]] = true
		}
		return len(seen)
	}
	const query = "/allocation_candidates?resources=VCPU:1"
	st, body := testdb.PlacementGet(t, base, query, "1.39")
	if st != 200 {
		t.Fatalf("GET %s: %d %s", query, st, body)
	}
	all := candidates(body)
	if len(all) != 6 {
		t.Fatalf("Placement 13 without a bound: %d candidates, want 6", len(all))
	}
	dir := chroot.TempDir(t)
	for i, tc := range []struct {
		conf         string
		release      string
		want, hostsN int
	}{
		{conf: "max_allocation_candidates = 4\n", release: "2025.1", want: 4, hostsN: 2},
		{conf: "max_allocation_candidates = 4\nallocation_candidates_generation_strategy = breadth-first\n", release: "2025.1", want: 4, hostsN: 3},
		{conf: "max_allocation_candidates = 2\nallocation_candidates_generation_strategy = breadth-first\n", release: "2025.1", want: 2, hostsN: 2},
		{conf: "max_allocation_candidates = 0\n", release: "2025.1", want: 1, hostsN: 1},
		{conf: "max_allocation_candidates = -1\nallocation_candidates_generation_strategy = breadth-first\n", release: "2025.1", want: 6, hostsN: 3},
		// Placement 8 has neither option: 6 candidates whatever the file says.
		{conf: "max_allocation_candidates = 4\n", release: "zed", want: 6, hostsN: 3},
	} {
		t.Run(fmt.Sprintf("%s %d", tc.release, i), func(t *testing.T) {
			var placement []string
			if tc.release == "2025.1" {
				capped := chroot.PlacementAPI(t, pl.URL, "[placement]\n"+tc.conf)
				st, body := testdb.PlacementGet(t, capped, query, "1.39")
				if st != 200 {
					t.Fatalf("GET %s: %d %s", query, st, body)
				}
				placement = candidates(body)
				if len(placement) != tc.want || hosts(placement) != tc.hostsN {
					t.Errorf("Placement 13 with %q: %d candidates on %d hosts; the case wants %d on %d", tc.conf, len(placement), hosts(placement), tc.want, tc.hostsN)
				}
			}
			conf := filepath.Join(dir, fmt.Sprintf("placement%d.conf", i))
			if err := os.WriteFile(conf, []byte("[placement]\n"+tc.conf), 0o644); err != nil {
				t.Fatal(err)
			}
			out, errOut, code := cmdtest.Rpctl(t, "--config-file", conf, "--placement-db", pl.URL, "-f", "json",
				"candidates", "--resources", "VCPU:1", "--release", tc.release)
			if code != 0 {
				t.Fatalf("rpctl: exit %d\n%s%s", code, out, errOut)
			}
			ours := candidates([]byte(out))
			if len(ours) != tc.want || hosts(ours) != tc.hostsN {
				t.Errorf("rpctl --release %s with %q: %d candidates on %d hosts, want %d on %d (Placement: %v)", tc.release, tc.conf, len(ours), hosts(ours), tc.want, tc.hostsN, placement)
			}
			for _, p := range ours {
				if !slices.Contains(all, p) {
					t.Errorf("rpctl's candidate %s is none of Placement's", p)
				}
			}
		})
	}
	// A value Placement 13 would refuse is refused, naming the file.
	bad := filepath.Join(dir, "bad.conf")
	if err := os.WriteFile(bad, []byte("[placement]\nallocation_candidates_generation_strategy = sideways\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := cmdtest.Rpctl(t, "--config-file", bad, "--placement-db", pl.URL, "candidates", "--resources", "VCPU:1", "--release", "2025.1"); code != 2 || !strings.Contains(errOut, bad) || !strings.Contains(errOut, "allocation_candidates_generation_strategy") {
		t.Errorf("strategy sideways: exit %d, stderr %q", code, errOut)
	}
	if _, errOut, code := cmdtest.Rpctl(t, "--config-file", bad, "--placement-db", pl.URL, "candidates", "--resources", "VCPU:1"); code != 0 {
		t.Errorf("strategy sideways under --release zed (ignored, as Placement 8 ignores it): exit %d, stderr %q", code, errOut)
	}
}
