package capacity

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/candidates"
	"github.com/rpctl/rpctl/flavors"
	"github.com/rpctl/rpctl/internal/nova"
	"github.com/rpctl/rpctl/internal/testdb"
)

// testFlavors are built the way `rpctl capacity` builds them: Nova's
// request, and its VCPU fallback for pinned CPUs.
func testFlavors(t testing.TB) []Flavor {
	t.Helper()
	defs := []nova.Flavor{
		{Name: "m1.small", VCPUs: 1, MemoryMB: 2048, RootGB: 20},
		{Name: "m1.large", VCPUs: 4, MemoryMB: 8192, RootGB: 80},
		{Name: "m1.xlarge", VCPUs: 8, MemoryMB: 16384, RootGB: 160, EphemeralGB: 40, Swap: 2048},
		{Name: "c1.pinned", VCPUs: 2, MemoryMB: 4096, RootGB: 20, ExtraSpecs: map[string]string{"hw:cpu_policy": "dedicated"}},
		{Name: "g1.gpu", VCPUs: 4, MemoryMB: 8192, RootGB: 40, ExtraSpecs: map[string]string{"resources1:CUSTOM_GPU": "2", "trait1:CUSTOM_GPU_A100": "required"}},
		{Name: "a1.avx2", VCPUs: 2, MemoryMB: 4096, RootGB: 40, ExtraSpecs: map[string]string{"trait:HW_CPU_X86_AVX2": "required"}},
		{Name: "n1.granular", VCPUs: 2, MemoryMB: 4096, RootGB: 10, ExtraSpecs: map[string]string{"resources1:VCPU": "2", "resources1:MEMORY_MB": "4096"}},
		{Name: "x1.unknown-trait", VCPUs: 1, MemoryMB: 512, ExtraSpecs: map[string]string{"trait:CUSTOM_NOWHERE": "required"}},
	}
	var out []Flavor
	for i := range defs {
		f, _, err := NewFlavor(&defs[i], nil, flavors.Options{})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, f)
	}
	return out
}

// testClouds: flat hosts with ratios, reserved, disabled hosts, PCPU, GPUs
// in steps, sharing storage; and nested NUMA trees with sharing providers.
func testClouds(t testing.TB) map[string]*candidates.Model {
	t.Helper()
	out := map[string]*candidates.Model{}
	for name, in := range map[string]*candidates.ModelInput{
		"flat":   candidates.CapacityInput(30),
		"nested": candidates.ScaleInput(90),
	} {
		m, err := candidates.NewModel(in)
		if err != nil {
			t.Fatal(err)
		}
		out[name] = m
	}
	return out
}

// firstOf is one claim of the brute force: the first candidate the core
// returns on hosts in allowed, from Nova's query, else from its fallback.
func firstOf(t testing.TB, m *candidates.Model, f *Flavor, allowed map[int32]bool) *candidates.Candidate {
	for _, req := range []*candidates.Request{f.Request, f.Fallback} {
		if req == nil {
			continue
		}
		r, err := m.Search(context.Background(), req, candidates.Options{})
		if err != nil {
			return nil // Placement refuses the query: nothing fits
		}
		for i := range r.Candidates {
			if allowed[r.Candidates[i].Anchor] {
				return &r.Candidates[i]
			}
		}
	}
	return nil
}

func hostSet(hosts []int32) map[int32]bool {
	s := make(map[int32]bool, len(hosts))
	for _, h := range hosts {
		s[h] = true
	}
	return s
}

// bruteForce claims one instance at a time through the core until none
// fits on the allowed hosts.
func bruteForce(t testing.TB, m *candidates.Model, f *Flavor, allowed map[int32]bool) int64 {
	work := m.Clone()
	var n int64
	for c := firstOf(t, work, f, allowed); c != nil; c = firstOf(t, work, f, allowed) {
		work.Claim(c, 1)
		n++
	}
	return n
}

// TestIndependentEqualsBruteForce: per host, per aggregate and in total.
// An aggregate's or the total's count adds up the hosts whose candidates
// stay in their own tree and fills the others together: both kinds of
// host hold instances in these clouds.
func TestIndependentEqualsBruteForce(t *testing.T) {
	fl := testFlavors(t)
	var alone, shared int64
	for name, m := range testClouds(t) {
		res, err := Count(context.Background(), m, fl, Options{Mode: Independent})
		if err != nil {
			t.Fatal(err)
		}
		ps, err := Search(context.Background(), m, fl, candidates.Options{})
		if err != nil {
			t.Fatal(err)
		}
		hosts, aggs := selectHosts(m, "")
		var nonzero int64
		for fi := range fl {
			for hi, h := range hosts {
				want := bruteForce(t, m, &fl[fi], map[int32]bool{h: true})
				if got := res.Hosts[hi].Free[fi]; got != want {
					t.Errorf("%s: host %s, %s: %d, brute force %d", name, res.Hosts[hi].Name, fl[fi].Name, got, want)
				}
				nonzero += want
				if ps.plans[fi].alone[h] {
					alone += want
				} else {
					shared += want
				}
			}
			for ai, a := range res.Aggregates {
				if want := bruteForce(t, m, &fl[fi], hostSet(aggs[a.UUID])); a.Free[fi] != want {
					t.Errorf("%s: aggregate %s, %s: %d, brute force %d", name, a.UUID, fl[fi].Name, res.Aggregates[ai].Free[fi], want)
				}
			}
			if want := bruteForce(t, m, &fl[fi], hostSet(hosts)); res.Total[fi] != want {
				t.Errorf("%s: total %s: %d, brute force %d", name, fl[fi].Name, res.Total[fi], want)
			}
		}
		if nonzero == 0 {
			t.Errorf("%s: nothing fits anywhere; the test proves nothing", name)
		}
	}
	if alone == 0 || shared == 0 {
		t.Errorf("instances on hosts alone %d, on hosts sharing %d: the sums are not tested", alone, shared)
	}
}

// bruteForcePack is the pack mode one claim at a time: the mix in rounds,
// a flavor leaving the mix once it fits nowhere.
func bruteForcePack(t testing.TB, m *candidates.Model, fl []Flavor, mix []int, allowed map[int32]bool) []int64 {
	work := m.Clone()
	placed := make([]int64, len(fl))
	live := make([]bool, len(fl))
	for i, w := range mix {
		live[i] = w > 0
	}
	for any := true; any; {
		any = false
		for i, w := range mix {
			for k := 0; k < w && live[i]; k++ {
				c := firstOf(t, work, &fl[i], allowed)
				if c == nil {
					live[i] = false
					break
				}
				work.Claim(c, 1)
				placed[i]++
				any = true
			}
		}
	}
	return placed
}

func TestPackEqualsBruteForce(t *testing.T) {
	fl := testFlavors(t)[:4]
	mix := []int{3, 1, 0, 2}
	for name, m := range testClouds(t) {
		res, err := Count(context.Background(), m, fl, Options{Mode: Pack, Mix: mix})
		if err != nil {
			t.Fatal(err)
		}
		hosts, aggs := selectHosts(m, "")
		if want := bruteForcePack(t, m, fl, mix, hostSet(hosts)); !reflect.DeepEqual(res.Total, want) {
			t.Errorf("%s: total %v, brute force %v", name, res.Total, want)
		}
		perHost := make([]int64, len(fl))
		for _, h := range res.Hosts {
			for i, n := range h.Free {
				perHost[i] += n
			}
		}
		if !reflect.DeepEqual(perHost, res.Total) {
			t.Errorf("%s: hosts add up to %v, total %v", name, perHost, res.Total)
		}
		if res.Total[2] != 0 {
			t.Errorf("%s: weight 0 placed %d", name, res.Total[2])
		}
		for _, a := range res.Aggregates[:3] {
			if want := bruteForcePack(t, m, fl, mix, hostSet(aggs[a.UUID])); !reflect.DeepEqual(a.Free, want) {
				t.Errorf("%s: aggregate %s %v, brute force %v", name, a.UUID, a.Free, want)
			}
		}
	}
}

func TestCountLeavesModelAlone(t *testing.T) {
	m := testClouds(t)["flat"]
	fl := testFlavors(t)
	before, _ := Count(context.Background(), m, fl, Options{})
	if _, err := Count(context.Background(), m, fl, Options{Mode: Pack}); err != nil {
		t.Fatal(err)
	}
	after, _ := Count(context.Background(), m, fl, Options{})
	if !reflect.DeepEqual(before, after) {
		t.Error("Count changed the model's usage")
	}
	// One search, counted in both modes and again: the same answers.
	ps, err := Search(context.Background(), m, fl, candidates.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []Options{{Mode: Independent}, {Mode: Pack, Mix: []int{1, 2, 0, 1, 1, 1, 1, 1}}, {Mode: Independent}} {
		want, err := Count(context.Background(), m, fl, o)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := ps.Count(o); err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: Plans.Count %+v (%v), Count %+v", o.Mode, got, err, want)
		}
	}
}

func TestAggregateFilterAndNotes(t *testing.T) {
	m := testClouds(t)["flat"]
	fl := testFlavors(t)
	agg := candidates.SyntheticUUID(9, 3)
	res, err := Count(context.Background(), m, fl, Options{Aggregate: agg})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Hosts) != 3 || len(res.Aggregates) != 1 || res.Aggregates[0].UUID != agg {
		t.Fatalf("hosts %d, aggregates %+v", len(res.Hosts), res.Aggregates)
	}
	if !reflect.DeepEqual(res.Aggregates[0].Free, res.Total) {
		t.Errorf("the only aggregate %v differs from the total %v", res.Aggregates[0].Free, res.Total)
	}
	want := "flavor x1.unknown-trait: Placement answers 400 (No such trait(s): CUSTOM_NOWHERE.), so it fits nowhere"
	if len(res.Notes) != 1 || res.Notes[0] != want {
		t.Errorf("notes %q", res.Notes)
	}
	// Disabled hosts (every 17th from the 5th) count nothing.
	all, _ := Count(context.Background(), m, fl, Options{})
	for _, h := range all.Hosts {
		var sum int64
		for _, n := range h.Free {
			sum += n
		}
		var i int
		fmt.Sscanf(h.Name, "compute-%d", &i)
		if (i%17 == 5) != (sum == 0) {
			t.Errorf("host %s counts %v", h.Name, h.Free)
		}
	}
}

// granularFlavor is the flavor: n one-VCPU groups, group_policy
// none.
func granularFlavor(n int) Flavor {
	return Flavor{Name: fmt.Sprintf("g%d", n), Request: candidates.GranularRequest(n, 0)}
}

// TestCountBounded: counting flavors of 12 to 200 granular groups on a
// 200-host nested cloud either answers or stops at a ceiling of the core
// (the candidate or memory ceiling, or the step ceiling when the groups
// cannot fit), and allocates at most twice the memory ceiling (held by
// every flavor's answers together) plus the model's copies; a cancelled
// context stops it with its cause.
func TestCountBounded(t *testing.T) {
	m, err := candidates.NewModel(candidates.GranularInput(200))
	if err != nil {
		t.Fatal(err)
	}
	const memCeiling = 32 << 20
	bounds := candidates.Options{CeilingBytes: memCeiling, MaxSteps: 1 << 22}
	for _, tc := range []struct {
		groups []int
		want   string // "", "ceiling" or "steps"
	}{
		{[]int{2}, ""},
		{[]int{12}, "ceiling"},
		{[]int{7}, ""},
		{[]int{7, 7, 7, 7, 7, 7}, "ceiling"}, // each fits alone, not all six
		{[]int{16}, "ceiling"},
		{[]int{64}, "ceiling"},
		{[]int{128}, "ceiling"},
		{[]int{129}, "steps"},
		{[]int{200}, "steps"},
	} {
		var fl []Flavor
		for i, g := range tc.groups {
			f := granularFlavor(g)
			f.Name += fmt.Sprint("-", i)
			fl = append(fl, f)
		}
		var res *Result
		n := testdb.Allocated(func() { res, err = Count(context.Background(), m, fl, Options{Bounds: bounds}) })
		var ce *candidates.CeilingError
		var se *candidates.StepsError
		got := ""
		switch {
		case errors.As(err, &ce):
			got = "ceiling"
		case errors.As(err, &se):
			got = "steps"
		case err != nil:
			t.Fatalf("%v: %v", tc.groups, err)
		}
		if got != tc.want || (got == "" && res.Total[0] == 0) {
			t.Errorf("%v groups: stopped at %q (%v), want %q", tc.groups, got, err, tc.want)
		}
		if n > 2*memCeiling+16<<20 {
			t.Errorf("%v groups: allocated %d MB, want at most %d", tc.groups, n>>20, (2*memCeiling+16<<20)>>20)
		}
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	cause := errors.New("terminated signal received")
	cancel(cause)
	if _, err := Count(ctx, m, []Flavor{granularFlavor(129)}, Options{}); !errors.Is(err, cause) {
		t.Errorf("cancelled: err = %v, want the cause", err)
	}
}

// TestSearchEachKeepsTheOthers (issue 37 row 5): SearchEach leaves out the
// flavors whose searches fail (candidate ceiling, step ceiling, and the
// shared memory budget one of them filled) and counts the others exactly as
// Count does on them alone.
func TestSearchEachKeepsTheOthers(t *testing.T) {
	m, err := candidates.NewModel(candidates.GranularInput(200))
	if err != nil {
		t.Fatal(err)
	}
	bounds := candidates.Options{CeilingBytes: 32 << 20, MaxSteps: 1 << 22}
	for _, tc := range []struct {
		groups   []int
		wantKept []int
	}{
		{[]int{2, 7}, []int{0, 1}},
		{[]int{2, 12, 7}, []int{0, 2}},           // 12: the ceiling
		{[]int{129, 2}, []int{1}},                // 129: the steps
		{[]int{7, 64, 2, 16, 7}, []int{0, 2, 4}}, // 64 and 16 fill the shared budget
		{[]int{129}, nil},
	} {
		var fl []Flavor
		for i, g := range tc.groups {
			f := granularFlavor(g)
			f.Name += fmt.Sprint("-", i)
			fl = append(fl, f)
		}
		ps, kept, failed, err := SearchEach(context.Background(), m, fl, bounds)
		if err != nil {
			t.Fatalf("%v: %v", tc.groups, err)
		}
		if fmt.Sprint(kept) != fmt.Sprint(tc.wantKept) || len(failed) != len(fl)-len(kept) {
			t.Errorf("%v groups: kept %v, failed %v; want kept %v", tc.groups, kept, failed, tc.wantKept)
			continue
		}
		for _, fe := range failed {
			if !strings.Contains(fe.Error(), fl[fe.Index].Name) {
				t.Errorf("%v groups: error %q does not name %s", tc.groups, fe, fl[fe.Index].Name)
			}
		}
		if len(kept) == 0 {
			continue
		}
		got, err := ps.Count(Options{Mode: Independent})
		if err != nil {
			t.Fatal(err)
		}
		var alone []Flavor
		for _, i := range kept {
			alone = append(alone, fl[i])
		}
		want, err := Count(context.Background(), m, alone, Options{Bounds: bounds})
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got.Flavors, got.Total) != fmt.Sprint(want.Flavors, want.Total) {
			t.Errorf("%v groups: %v %v, alone %v %v", tc.groups, got.Flavors, got.Total, want.Flavors, want.Total)
		}
	}
}
