package candidates

import (
	"runtime"
	"testing"
	"time"
)

func mustModel(tb testing.TB, in *ModelInput) *Model {
	m, err := NewModel(in)
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

// TestExplosionFast guards the promise that a wide tree does not blow up:
// 8 single-VF children, 8 groups of one VF, limit 1000.
func TestExplosionFast(t *testing.T) {
	m := mustModel(t, ExplosionInput(8))
	for _, policy := range []string{"none", "isolate"} {
		start := time.Now()
		r, err := m.Candidates(ExplosionRequest(8, policy, 1000), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d > 100*time.Millisecond {
			t.Errorf("%s: %v, want < 100ms", policy, d)
		}
		if len(r.Candidates) != 1000 {
			t.Errorf("%s: %d candidates, want 1000", policy, len(r.Candidates))
		}
	}
	// Without a limit every one of the 8! permutations is valid.
	r, err := m.Candidates(ExplosionRequest(8, "isolate", 0), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Candidates) != 40320 {
		t.Errorf("%d candidates, want 8! = 40320", len(r.Candidates))
	}
	r, _ = m.Candidates(ExplosionRequest(8, "isolate", 0), Options{MaxCandidates: 10})
	if len(r.Candidates) != 10 {
		t.Errorf("MaxCandidates: %d", len(r.Candidates))
	}
}

func TestPerfloadAnswers(t *testing.T) {
	m := mustModel(t, PerfloadInput(1000))
	r, err := m.Candidates(PerfloadRequest(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Candidates) != 1000 {
		t.Errorf("perfload: %d candidates, want 1000", len(r.Candidates))
	}
	nm := mustModel(t, NestedPerfloadInput(1000))
	r, err = nm.Candidates(NestedPerfloadRequest(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Per tree: DISK on cn, COMPUTE on numa1 (CUSTOM_FOO), FPGA under numa1
	// (two of them) -> 2 candidates.
	if len(r.Candidates) != 2000 {
		t.Errorf("nested perfload: %d candidates, want 2000", len(r.Candidates))
	}
	r, _ = nm.Candidates(NestedPerfloadRequest(), Options{Strategy: "breadth-first", MaxCandidates: 10})
	if len(r.Candidates) != 10 || r.Candidates[0].Anchor == r.Candidates[1].Anchor {
		t.Errorf("breadth-first should spread over anchors")
	}
	lim := *NestedPerfloadRequest()
	lim.Limit = 5
	a, _ := nm.Candidates(&lim, Options{Randomize: true, Seed: 1})
	b, _ := nm.Candidates(&lim, Options{Randomize: true, Seed: 1})
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
		r, err := m.Candidates(req, Options{})
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
