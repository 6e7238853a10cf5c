package capacity

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/candidates"
	"github.com/rpctl/rpctl/flavors"
	"github.com/rpctl/rpctl/internal/nova"
)

// osCapacityCounts is os-capacity's per-provider count (stackhpc/os-capacity
// prometheus.py get_max_per_host, re-derived here): one unlimited
// GET /allocation_candidates for the flavor's query, then for every
// provider in provider_summaries, over the classes the flavor asks for that
// the provider has, min((capacity - used) / requested), truncated. A host's
// count is its root provider's. It never sees max_unit or step_size, counts
// a NUMA child or a sharing pool as a provider of its own, and a host whose
// disk is on a sharing pool as if disk did not matter.
func osCapacityCounts(m *candidates.Model, f *Flavor) map[int32]int64 {
	r, err := m.Search(context.Background(), f.Request, candidates.Options{})
	if err != nil {
		return nil
	}
	requested := requestedTotals(f)
	out := map[int32]int64{}
	for _, p := range r.Summaries {
		best, any := int64(0), false
		for _, inv := range m.Provider(p).Inventories {
			q := requested[m.ClassName(inv.Class)]
			if q == 0 {
				continue
			}
			n := (inv.Capacity - inv.Used) / q
			if !any || n < best {
				best, any = n, true
			}
		}
		if any {
			out[p] = best
		}
	}
	return out
}

// TestOsCapacityFormulaOverCounts is the differential against os-capacity's
// formula on clouds with nested trees, sharing providers and max_unit
// limits: rpctl's count per host equals the brute-force count (one claim
// at a time through the core), and the hosts where os-capacity's formula
// would publish more are named, with why.
func TestOsCapacityFormulaOverCounts(t *testing.T) {
	fl := testFlavors(t)
	// Beyond max_unit on some hosts (VCPU's is the host's vcpus, 16 on a
	// third of them) and off CUSTOM_GPU's step_size of 2.
	for _, def := range []nova.Flavor{
		{Name: "w1.32vcpu", VCPUs: 32, MemoryMB: 4096, RootGB: 10},
		{Name: "g1.odd-gpu", VCPUs: 2, MemoryMB: 2048, RootGB: 10, ExtraSpecs: map[string]string{"resources:CUSTOM_GPU": "3"}},
	} {
		f, _, err := NewFlavor(&def, nil, flavors.Options{})
		if err != nil {
			t.Fatal(err)
		}
		fl = append(fl, f)
	}
	for name, m := range testClouds(t) {
		res, err := Count(context.Background(), m, fl, Options{Mode: Independent})
		if err != nil {
			t.Fatal(err)
		}
		hosts, _ := selectHosts(m, "")
		var over []string
		reasons := map[string]int{}
		for fi := range fl {
			os := osCapacityCounts(m, &fl[fi])
			for hi, h := range hosts {
				got := res.Hosts[hi].Free[fi]
				if want := bruteForce(t, m, &fl[fi], map[int32]bool{h: true}); got != want {
					t.Errorf("%s: host %s, %s: rpctl %d, brute force %d", name, res.Hosts[hi].Name, fl[fi].Name, got, want)
				}
				if o := os[h]; o > got {
					why := overCountReason(m, h, &fl[fi])
					reasons[why]++
					over = append(over, fmt.Sprintf("%s %s: os-capacity %d, exact %d (%s)", res.Hosts[hi].Name, fl[fi].Name, o, got, why))
				}
			}
		}
		// os-capacity's total sums every provider of the summaries: a
		// sharing pool or a NUMA child is a "hypervisor" of its own.
		for fi := range fl {
			var sum int64
			var extra []string
			for p, n := range osCapacityCounts(m, &fl[fi]) {
				sum += n
				if m.Provider(p).Parent >= 0 || !isHost(hosts, p) {
					if n > 0 {
						extra = append(extra, m.Provider(p).Name)
					}
				}
			}
			if sum > res.Total[fi] {
				reasons["total"]++
				over = append(over, fmt.Sprintf("total %s: os-capacity %d, exact %d (%d providers that are no host counted as hypervisors, e.g. %s)",
					fl[fi].Name, sum, res.Total[fi], len(extra), strings.Join(extra[:min(len(extra), 3)], ", ")))
			}
		}
		for _, kind := range wantKinds[name] {
			found := false
			for why := range reasons {
				found = found || strings.HasPrefix(why, kind)
			}
			if !found {
				t.Errorf("%s: no over-count of kind %q (found %v)", name, kind, reasons)
			}
		}
		t.Logf("%s: os-capacity's formula over-counts on %d host×flavor pairs (%v):\n  %s", name, len(over), reasons, strings.Join(over, "\n  "))
	}
}

// wantKinds are the over-counts each cloud must show: the flat one's
// sharing pools, counted as hypervisors in os-capacity's total, and the
// nested one's NUMA children. max_unit and step_size cause none on their
// own: Placement's query already drops a host that cannot take one
// instance, and the formula's division is per instance (the w1 and g1.odd
// flavors check that rpctl's count stays exact there too).
var wantKinds = map[string][]string{"flat": {"total"}, "nested": {"nested", "total"}}

func isHost(hosts []int32, p int32) bool {
	for _, h := range hosts {
		if h == p {
			return true
		}
	}
	return false
}

// overCountReason names what os-capacity's formula missed on host h: the
// flavor's disk on a sharing pool, a max_unit or step_size bound, or a
// class that lives on a child provider (nested tree).
func overCountReason(m *candidates.Model, h int32, f *Flavor) string {
	p := m.Provider(h)
	requested := requestedTotals(f)
	has := map[string]bool{}
	for _, inv := range p.Inventories {
		rc := m.ClassName(inv.Class)
		has[rc] = true
		if q := requested[rc]; q > 0 && (q > inv.MaxUnit || q%inv.StepSize != 0) {
			return "max_unit/step_size"
		}
	}
	for _, rc := range slices.Sorted(maps.Keys(requested)) {
		if !has[rc] {
			if len(p.Children) > 0 {
				return "nested: " + rc + " on a child provider"
			}
			return "sharing: " + rc + " from a sharing provider"
		}
	}
	return "other"
}

// requestedTotals is what os-capacity divides by: the flavor's amounts per
// class, summed over its request groups.
func requestedTotals(f *Flavor) map[string]int64 {
	out := map[string]int64{}
	for _, g := range f.Request.Groups {
		for rc, n := range g.Resources {
			out[rc] += n
		}
	}
	return out
}
