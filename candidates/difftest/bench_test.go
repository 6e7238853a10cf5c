package difftest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rpctl/rpctl/candidates"
	"github.com/rpctl/rpctl/internal/testdb"
	"github.com/rpctl/rpctl/storage/placementdb"
)

// The benchmarks here compare, in one run, the real placement-api with rpctl
// on the data sets of Placement's own perf jobs, written into MariaDB. They
// need minutes and services, so they run only under `make bench`
// (RPCTL_BENCH=1). Figures from a shared 2-core machine are noisy: read
// medians and ratios.

func benchGuard(b *testing.B) {
	if os.Getenv("RPCTL_BENCH") == "" {
		b.Skip("set RPCTL_BENCH=1 (make bench): needs MariaDB, placement-api and minutes")
	}
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func timeIt(n int, f func()) time.Duration {
	ds := make([]time.Duration, n)
	for i := range ds {
		start := time.Now()
		f()
		ds[i] = time.Since(start)
	}
	return median(ds)
}

// pairs is how many times timePairs runs each side. A whole rpctl process
// is short and its time spreads wide on these machines (placement-
// perfload, alternated with placement-api: p10 10.3 ms, median 12.5, p90
// 15.6 of 61 runs): of 11 runs each, one benchmark run's median moved by
// 2 ms from the next one's (rpctl 11, 12, 14 ms in three runs of
// 2026-11-28); a figure of 21 moves about 1.4 times less (the square root
// of 21/11), for both sides alike.
const pairs = 21

// times is one side's times from timePairs: the mean of the middle 80%
// (two of 21 left out at each end: a run the machine stalled does not
// move it) and the median.
//
// The ratio to placement-api is taken of the means, not the medians:
// placement-api's answer alternates between two times from one request
// to the next, on placement-perfload about 120 and about 190 ms (60
// consecutive requests to one placement-api, 2026-11-28: slow, fast,
// slow, fast, ..., twice two slow in a row). The median of such times is
// whichever of the two has one more request among those timed, so which
// request came first decided it: that is why placement-api's median
// moved between 121 and 234 ms from run to run (issue 35). The mean is
// what a client waits on average; for rpctl, whose times have one mode
// and a tail, the mean is at or above the median.
type times struct{ mean, median time.Duration }

func timesOf(ds []time.Duration) times {
	s := slices.Sorted(slices.Values(ds))
	k := len(s) / 10
	var sum time.Duration
	for _, d := range s[k : len(s)-k] {
		sum += d
	}
	return times{mean: sum / time.Duration(len(s)-2*k), median: median(s)}
}

// timePairs times a and b one after the other, n times each, and returns
// each one's times. Alternating lets both see the same load on a shared
// machine: timing all of a, then all of b, let the load move between
// them (placement-api took 150 to 235 ms for the same query in one
// session, issue 35), and their ratio with it.
func timePairs(n int, a, b func()) (times, times) {
	da, db := make([]time.Duration, n), make([]time.Duration, n)
	for i := range n {
		start := time.Now()
		a()
		da[i] = time.Since(start)
		start = time.Now()
		b()
		db[i] = time.Since(start)
	}
	return timesOf(da), timesOf(db)
}

var rpctlBin struct {
	once sync.Once
	path string
	err  error
}

// buildRpctl builds the static binary once, as `make build` does, and
// installs it as `make install` does.
func buildRpctl(b testing.TB) string {
	rpctlBin.once.Do(func() {
		dir, err := os.MkdirTemp("", "rpctl-bench")
		if err != nil {
			rpctlBin.err = err
			return
		}
		// Timed as installed, not as the linker left it (testdb.Install).
		rpctlBin.path, rpctlBin.err = testdb.BuildRpctlIn(dir, "CGO_ENABLED=0")
	})
	if rpctlBin.err != nil {
		b.Fatal(rpctlBin.err)
	}
	return rpctlBin.path
}

// runRpctl runs `rpctl candidates` as a process (timeIt times it) and
// returns its peak RSS and output.
func runRpctl(b testing.TB, bin string, args ...string) (int64, []byte) {
	cmd := exec.Command(bin, args...)
	var out strings.Builder
	cmd.Stdout = &out
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		b.Fatalf("rpctl %v: %v: %s", args, err, stderr.String())
	}
	rss := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss * 1024
	return rss, []byte(out.String())
}

type perfSet struct {
	name  string
	input *candidates.ModelInput
	query string
}

type perfRow struct {
	name                  string
	providers, candidates int
	placement, core, e2e  time.Duration
	load                  time.Duration
	coreRatio, e2eRatio   float64
	rssMiB                int64
	// The medians beside the means (times) that the ratios are of.
	placementMedian, e2eMedian time.Duration
}

// BenchmarkVsPlacementAPI is the comparison: placement-perfload
// (1,000 roots) and placement-nested-perfload (1,000 trees of 7) written into
// MariaDB, answered by the real placement-api and by `rpctl candidates` as
// a process, start and database load included (each after a warm-up,
// alternately, pairs runs each, compared by their means: see times), and
// by rpctl's core on a model loaded
// from the same database (median of 50).
func BenchmarkVsPlacementAPI(b *testing.B) {
	benchGuard(b)
	ctx := context.Background()
	bin := buildRpctl(b)
	sets := []perfSet{
		{"placement-perfload (1,000 roots)", candidates.PerfloadInput(1000), candidates.PerfloadQuery},
		{"placement-nested-perfload (1,000 x 7)", candidates.NestedPerfloadInput(1000), candidates.NestedPerfloadQuery},
	}
	var rows []perfRow
	for _, s := range sets {
		my, db := newPlacementDB(b)
		if err := placementdb.WriteSyntheticPlacement(ctx, db, s.input); err != nil {
			b.Fatal(err)
		}
		base := testdb.PlacementAPI(b, my.URL)
		path := "/allocation_candidates?" + s.query
		var theirs []byte
		testdb.PlacementGet(b, base, path, "1.39") // warm-up: caches, first-request sync
		get := func() {
			var status int
			status, theirs = testdb.PlacementGet(b, base, path, "1.39")
			if status != 200 {
				b.Fatalf("placement-api: %d %s", status, theirs)
			}
		}
		req, err := candidates.ParseQuery(s.query, candidates.MaxMicroversion)
		if err != nil {
			b.Fatal(err)
		}
		// What `rpctl candidates` does between connecting and searching:
		// the read (narrowed from placementdb.NarrowFrom providers) and
		// the model built of it, on a connection already open as the
		// command opens it (the part of e2e that MariaDB's work is in).
		sdb := openReadScripts(b, my)
		load := timeIt(11, func() {
			if _, err := placementdb.LoadPlacementFor(ctx, sdb, req); err != nil {
				b.Fatal(err)
			}
		})
		model, err := placementdb.LoadPlacement(ctx, db)
		db.Close()
		if err != nil {
			b.Fatal(err)
		}
		var res *candidates.Result
		core := timeIt(50, func() {
			res, err = model.Search(context.Background(), req, candidates.Options{})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := res.MarshalPlacement(req.Microversion); err != nil {
				b.Fatal(err)
			}
		})
		var rss int64
		var out []byte
		// A warm-up, as placement-api has: the binary's pages and the
		// server's caches.
		runRpctl(b, bin, "--placement-db", my.URL, "candidates", "-f", "json", "--query", s.query)
		pl, e2e := timePairs(pairs, get, func() {
			rss, out = runRpctl(b, bin, "--placement-db", my.URL, "candidates", "-f", "json", "--query", s.query)
		})
		pc := int64(len(parse(theirs).AllocationRequests))
		if oc := len(parse(out).AllocationRequests); int64(oc) != pc || oc != len(res.Candidates) {
			b.Errorf("%s: rpctl gives %d candidates (core %d), placement-api %d", s.name, oc, len(res.Candidates), pc)
		}
		rows = append(rows, perfRow{name: s.name, providers: model.NumProviders(), candidates: len(res.Candidates),
			placement: pl.mean, core: core, load: load, e2e: e2e.mean, coreRatio: float64(pl.mean) / float64(core), e2eRatio: float64(pl.mean) / float64(e2e.mean),
			rssMiB: rss >> 20, placementMedian: pl.median, e2eMedian: e2e.median})
	}
	fmt.Printf("\n%-40s %9s %10s %14s %12s %8s %16s %8s %9s %11s %18s\n", "data set (GET /allocation_candidates)", "providers", "candidates",
		"placement-api", "rpctl core", "core x", "rpctl e2e", "e2e x", "e2e RSS", "read+model", "medians (pl, e2e)")
	for _, r := range rows {
		fmt.Printf("%-40s %9d %10d %14v %12v %7.0fx %16v %7.1fx %6d MiB %9.1fms %9v %8v\n", r.name, r.providers, r.candidates,
			r.placement.Round(time.Millisecond), r.core.Round(time.Microsecond), r.coreRatio, r.e2e.Round(time.Millisecond), r.e2eRatio, r.rssMiB,
			float64(r.load)/1e6, r.placementMedian.Round(time.Millisecond), r.e2eMedian.Round(time.Millisecond))
	}
	fmt.Printf("(placement-api and e2e = `rpctl --placement-db URL candidates -f json` process: means of the middle 80%% of %d each, alternated, after a warm-up\n", pairs)
	fmt.Println(" (placement-api's times alternate between two: see times), medians beside; core: median of 50;")
	fmt.Println(" read+model = LoadPlacementFor in process on a connection open as rpctl candidates opens it, median of 11; targets: core >= 100x, e2e > 1x)")
	// The work above is timed by hand; the empty loop only satisfies the
	// framework, and the metrics go after it because it resets them.
	for b.Loop() {
	}
	for _, r := range rows {
		b.ReportMetric(r.coreRatio, strings.Fields(r.name)[0]+"-core-x")
		b.ReportMetric(r.e2eRatio, strings.Fields(r.name)[0]+"-e2e-x")
	}
}

// BenchmarkExplosionLimit1000 is bug 2070257's wide tree: one root with 8
// single-VF children, 8 groups of one VF, limit=1000 (target < 100 ms).
func BenchmarkExplosionLimit1000(b *testing.B) {
	m, err := candidates.NewModel(candidates.ExplosionInput(8))
	if err != nil {
		b.Fatal(err)
	}
	for _, policy := range []string{"none", "isolate"} {
		req := candidates.ExplosionRequest(8, policy, 1000)
		d := timeIt(21, func() {
			r, err := m.Search(context.Background(), req, candidates.Options{})
			if err != nil || len(r.Candidates) != 1000 {
				b.Fatalf("%v, %d candidates", err, len(r.Candidates))
			}
		})
		fmt.Printf("explosion 8 children x 8 groups, group_policy=%s, limit=1000: median %v (target < 100ms)\n", policy, d.Round(time.Microsecond))
		b.ReportMetric(float64(d.Microseconds())/1000, policy+"-ms")
	}
	req := candidates.ExplosionRequest(8, "isolate", 1000)
	for b.Loop() {
		if _, err := m.Search(context.Background(), req, candidates.Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// Benchmark100kLoad writes candidates.ScaleInput(100000) into MariaDB and
// times placementdb.LoadPlacement (median of 3; target < 2 s), reporting the live
// heap the model keeps and the peak RSS of an `rpctl candidates` process on
// it (target < 500 MB).
func Benchmark100kLoad(b *testing.B) {
	benchGuard(b)
	ctx := context.Background()
	bin := buildRpctl(b)
	my, db := newPlacementDB(b)
	in := candidates.ScaleInput(100000)
	start := time.Now()
	if err := placementdb.WriteSyntheticPlacement(ctx, db, in); err != nil {
		b.Fatal(err)
	}
	write := time.Since(start)
	in = nil
	var m *candidates.Model
	var err error
	load := timeIt(3, func() {
		m = nil
		runtime.GC()
		if m, err = placementdb.LoadPlacement(ctx, db); err != nil {
			b.Fatal(err)
		}
	})
	var before, after runtime.MemStats
	n := m.NumProviders()
	m = nil
	runtime.GC()
	runtime.ReadMemStats(&before)
	if m, err = placementdb.LoadPlacement(ctx, db); err != nil {
		b.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	heap := float64(after.HeapAlloc-before.HeapAlloc) / (1 << 20)
	runtime.KeepAlive(m)
	q := "resources=VCPU:2,MEMORY_MB:4096,DISK_GB:20&required=HW_CPU_X86_AVX2&limit=100"
	var rss int64
	e2e := timeIt(3, func() {
		rss, _ = runRpctl(b, bin, "--placement-db", my.URL, "candidates", "-f", "json", "--query", q)
	})
	fmt.Printf("100k providers (%d, written in %v): LoadPlacement median %v (target < 2s), model heap %.0f MiB; "+
		"`rpctl candidates` process %v, peak RSS %d MiB (target < 500 MB)\n",
		n, write.Round(time.Millisecond), load.Round(time.Millisecond), heap, e2e.Round(time.Millisecond), rss>>20)
	for b.Loop() {
	}
	b.ReportMetric(load.Seconds(), "load-s")
	b.ReportMetric(heap, "heap-MiB")
	b.ReportMetric(float64(rss>>20), "rss-MiB")
}
