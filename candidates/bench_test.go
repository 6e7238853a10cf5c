package candidates

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"testing"
)

func mustModel(tb testing.TB, in *ModelInput) *Model {
	m, err := NewModel(in)
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

// stepsOf runs f and returns the steps the searches it made walked.
func stepsOf(f func()) uint64 {
	var n uint64
	searchDone = func(steps uint64) { n += steps }
	defer func() { searchDone = nil }()
	f()
	return n
}

// TestExplosionBounded guards the promise that a wide tree does not blow
// up: 8 single-VF children, 8 groups of one VF, limit 1000. The work is
// counted in steps of the walk, not timed (a clock fails under load): the
// walk stops at the limit, taking at most groups × children steps per
// candidate (about 15 today), where walking all 8! answers before cutting
// them to 1000 takes about 620,000.
func TestExplosionBounded(t *testing.T) {
	m := mustModel(t, ExplosionInput(8))
	const bound = 1000 * 8 * 8
	for _, policy := range []string{"none", "isolate"} {
		var r *Result
		var err error
		steps := stepsOf(func() { r, err = m.Search(context.Background(), ExplosionRequest(8, policy, 1000), Options{}) })
		if err != nil {
			t.Fatal(err)
		}
		if steps == 0 || steps > bound {
			t.Errorf("%s: %d steps for 1000 candidates, want at most %d", policy, steps, bound)
		}
		if len(r.Candidates) != 1000 {
			t.Errorf("%s: %d candidates, want 1000", policy, len(r.Candidates))
		}
	}
	// Without a limit every one of the 8! permutations is valid.
	r, err := m.Search(context.Background(), ExplosionRequest(8, "isolate", 0), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Candidates) != 40320 {
		t.Errorf("%d candidates, want 8! = 40320", len(r.Candidates))
	}
	r, _ = m.Search(context.Background(), ExplosionRequest(8, "isolate", 0), Options{MaxCandidates: 10})
	if len(r.Candidates) != 10 {
		t.Errorf("MaxCandidates: %d", len(r.Candidates))
	}
}

func TestPerfloadAnswers(t *testing.T) {
	m := mustModel(t, PerfloadInput(1000))
	r, err := m.Search(context.Background(), PerfloadRequest(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Candidates) != 1000 {
		t.Errorf("perfload: %d candidates, want 1000", len(r.Candidates))
	}
	nm := mustModel(t, NestedPerfloadInput(1000))
	r, err = nm.Search(context.Background(), NestedPerfloadRequest(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Per tree: DISK on cn, COMPUTE on numa1 (CUSTOM_FOO), FPGA under numa1
	// (two of them) -> 2 candidates.
	if len(r.Candidates) != 2000 {
		t.Errorf("nested perfload: %d candidates, want 2000", len(r.Candidates))
	}
	r, _ = nm.Search(context.Background(), NestedPerfloadRequest(), Options{Strategy: "breadth-first", MaxCandidates: 10})
	if len(r.Candidates) != 10 || r.Candidates[0].Anchor == r.Candidates[1].Anchor {
		t.Errorf("breadth-first should spread over anchors")
	}
	lim := *NestedPerfloadRequest()
	lim.Limit = 5
	a, _ := nm.Search(context.Background(), &lim, Options{Randomize: true, Seed: 1})
	b, _ := nm.Search(context.Background(), &lim, Options{Randomize: true, Seed: 1})
	if len(a.Candidates) != 5 || a.Candidates[0].Anchor != b.Candidates[0].Anchor {
		t.Errorf("randomize must be reproducible for a seed")
	}
	if len(a.Summaries) == 0 || len(a.Summaries) > 5*7 {
		t.Errorf("limited summaries: %d", len(a.Summaries))
	}
}

func benchQuery(b *testing.B, m *Model, req *Request) {
	b.ReportAllocs()
	for b.Loop() {
		r, err := m.Search(context.Background(), req, Options{})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := r.MarshalPlacement(req.Microversion); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkExplosionNone(b *testing.B) {
	benchQuery(b, mustModel(b, ExplosionInput(8)), ExplosionRequest(8, "none", 1000))
}

func BenchmarkExplosionIsolate(b *testing.B) {
	benchQuery(b, mustModel(b, ExplosionInput(8)), ExplosionRequest(8, "isolate", 1000))
}

func BenchmarkPerfload(b *testing.B) {
	benchQuery(b, mustModel(b, PerfloadInput(1000)), PerfloadRequest())
}

func BenchmarkNestedPerfload(b *testing.B) {
	benchQuery(b, mustModel(b, NestedPerfloadInput(1000)), NestedPerfloadRequest())
}

// BenchmarkNewModel100k builds a 100,000-provider model; retained-MB is the
// live heap the model holds.
func BenchmarkNewModel100k(b *testing.B) {
	in := ScaleInput(100000)
	b.ReportAllocs()
	for b.Loop() {
		mustModel(b, in)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	m := mustModel(b, in)
	runtime.GC()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(1<<20), "retained-MB")
	runtime.KeepAlive(m)
}

func BenchmarkScaleQuery(b *testing.B) {
	m := mustModel(b, ScaleInput(100000))
	benchQuery(b, m, &Request{Microversion: MaxMicroversion, Limit: 100, GroupPolicy: "none",
		Groups: []RequestGroup{
			{Resources: map[string]int64{"VCPU": 2, "MEMORY_MB": 4096, "DISK_GB": 20}, RequiredTraits: [][]string{{"HW_CPU_X86_AVX2"}}},
			{Suffix: "_NET", Resources: map[string]int64{"SRIOV_NET_VF": 1}, RequiredTraits: [][]string{{"CUSTOM_PHYSNET1"}}},
		}})
}

// wideTreeInput is one root with n children, each holding one unit-sized
// inventory of every class in classes: an unsuffixed request over k of the
// classes has n^k per-tree combinations.
func wideTreeInput(n int, classes []string) *ModelInput {
	in := &ModelInput{Providers: []ProviderRow{{ID: 1, UUID: "00000000-0000-4000-8000-000000000001", Name: "host"}}}
	for i := range n {
		id := int64(i + 2)
		in.Providers = append(in.Providers, ProviderRow{ID: id, ParentID: 1,
			UUID: fmt.Sprintf("00000000-0000-4000-8000-%012d", id), Name: fmt.Sprintf("child%d", i)})
		for _, c := range classes {
			in.Inventories = append(in.Inventories, InventoryRow{ProviderID: id,
				ResourceClassID: int64(slices.Index(StandardResourceClasses(), c)), Total: 4, MinUnit: 1,
				MaxUnit: 4, StepSize: 1, AllocationRatio: 1})
		}
	}
	return in
}

var wideClasses = []string{"VCPU", "MEMORY_MB", "DISK_GB", "VGPU", "SRIOV_NET_VF"}

func wideRequest(limit int) *Request {
	res := map[string]int64{}
	for _, c := range wideClasses {
		res[c] = 1
	}
	return &Request{Microversion: MaxMicroversion, Limit: limit, Groups: []RequestGroup{{Resources: res}}}
}

// TestWideTreeLimitBounded: one root with 40 children of the same five
// classes and an unsuffixed request for all five is 40^5 ≈ 10^8 per-tree
// combinations. The multi-provider group is walked lazily, so limit=1 and
// MaxCandidates answer at once instead of building them all first. Counted
// in steps of the walk (where the product is enumerated), not timed: a
// handful per answer, and at most 100 for all of this test's searches.
func TestWideTreeLimitBounded(t *testing.T) {
	m := mustModel(t, wideTreeInput(40, wideClasses))
	var steps uint64
	searchDone = func(n uint64) { steps += n }
	defer func() { searchDone = nil }()
	r, err := m.Search(context.Background(), wideRequest(1), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Candidates) != 1 {
		t.Fatalf("%d candidates", len(r.Candidates))
	}
	r, _ = m.Search(context.Background(), wideRequest(0), Options{MaxCandidates: 5})
	if len(r.Candidates) != 5 {
		t.Fatalf("MaxCandidates: %d candidates", len(r.Candidates))
	}
	// The first candidate is the first of the odometer: every class from
	// the lowest child.
	if p := r.Candidates[0].Resources; len(p) != 5 || p[0].Provider != p[4].Provider {
		t.Errorf("first candidate %+v", p)
	}
	// A required trait nobody has is found out without walking the product.
	req := wideRequest(1)
	req.Groups[0].RequiredTraits = [][]string{{"HW_CPU_X86_AVX2"}}
	in := wideTreeInput(40, wideClasses)
	in.Traits = []NamedRow{{ID: 1, Name: "HW_CPU_X86_AVX2"}}
	m2 := mustModel(t, in)
	if r, err := m2.Search(context.Background(), req, Options{}); err != nil || len(r.Candidates) != 0 {
		t.Fatalf("%v, %d candidates", err, len(r.Candidates))
	}
	// Explain needs only whether a host anchors something, and a bounded
	// sample of each group's choices there.
	if ex := m.explainAll(wideRequest(0)); len(ex) != 0 {
		t.Errorf("explained a host with candidates: %+v", ex)
	}
	req = wideRequest(0)
	req.Groups = append(req.Groups, RequestGroup{Suffix: "1", Resources: map[string]int64{"VCPU": 5}})
	if ex := m.explainAll(req); len(ex) != 1 || ex[0].Kind != ReasonMaxUnit {
		t.Errorf("want one max_unit explanation, got %+v", ex)
	}
	if err := m.CheckExplain(req); err != nil {
		t.Error(err)
	}
	if steps == 0 || steps > 100 {
		t.Errorf("%d steps walked, want at most 100", steps)
	}
}

func BenchmarkWideTreeLimit1(b *testing.B) {
	benchQuery(b, mustModel(b, wideTreeInput(40, wideClasses)), wideRequest(1))
}

// BenchmarkSortAmounts backs sortAmounts' choice: for the handful of
// amounts a candidate holds, its insertion sort against slices.SortFunc.
func BenchmarkSortAmounts(b *testing.B) {
	for _, n := range []int{4, 8, 12} {
		src := make([]Amount, n)
		for i := range src {
			src[i] = Amount{Provider: int32((i * 7) % n), Class: int32(i % 3)}
		}
		buf := make([]Amount, n)
		b.Run(fmt.Sprintf("insertion/%d", n), func(b *testing.B) {
			for b.Loop() {
				copy(buf, src)
				sortAmounts(buf)
			}
		})
		b.Run(fmt.Sprintf("slices.SortFunc/%d", n), func(b *testing.B) {
			for b.Loop() {
				copy(buf, src)
				slices.SortFunc(buf, func(a, b Amount) int {
					if a.Provider != b.Provider {
						return int(a.Provider - b.Provider)
					}
					return int(a.Class - b.Class)
				})
			}
		})
	}
}
