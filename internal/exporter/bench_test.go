package exporter

import (
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rpctl/rpctl/internal/testdb"
)

// benchFlavorFiles writes 20 flavors of a public cloud's catalogue (as
// capacity's own benchmark counts): general, memory-heavy, CPU-heavy,
// pinned, GPU, trait-bound.
func benchFlavorFiles(b *testing.B) []string {
	dir := b.TempDir()
	var defs []string
	for _, s := range []int{1, 2, 4, 8, 16} {
		defs = append(defs,
			fmt.Sprintf("name: m1.%d\nvcpus: %d\nram: %d\ndisk: %d\n", s, s, 2048*s, 20*s),
			fmt.Sprintf("name: r1.%d\nvcpus: %d\nram: %d\ndisk: 40\n", s, s, 8192*s),
			fmt.Sprintf("name: c1.%d\nvcpus: %d\nram: %d\ndisk: 20\nswap: 1024\n", s, 2*s, 1024*s))
	}
	defs = append(defs,
		"name: p1.2\nvcpus: 2\nram: 4096\ndisk: 20\nextra_specs:\n  hw:cpu_policy: dedicated\n",
		"name: p1.4\nvcpus: 4\nram: 8192\ndisk: 40\nextra_specs:\n  hw:cpu_policy: dedicated\n",
		"name: g1.1\nvcpus: 8\nram: 32768\ndisk: 80\nextra_specs:\n  resources1:VGPU: '1'\n",
		"name: a1.4\nvcpus: 4\nram: 8192\ndisk: 40\nextra_specs:\n  trait:HW_CPU_X86_AVX2: required\n",
		"name: t1.1\nvcpus: 1\nram: 512\ndisk: 1\n")
	var args []string
	for i, d := range defs {
		f := filepath.Join(dir, fmt.Sprintf("f%02d.yaml", i))
		if err := os.WriteFile(f, []byte(d), 0o600); err != nil {
			b.Fatal(err)
		}
		args = append(args, "--flavor", f)
	}
	return args
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

func percentile(v []float64, p float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[min(len(s)-1, int(p*float64(len(s))))]
}

// BenchmarkExporter10kHosts20Flavors: rpctl exporter on a 10,000-host
// sample cloud on MariaDB, 20 flavors, collections back to back
// (--interval 1ms), while a client scrapes /metrics (gzip, as Prometheus
// asks) in a loop. One op is 5 collections (RPCTL_BENCH_COLLECTIONS).
// Reported: the median collection (rpctl_exporter_collect_duration_seconds)
// and each part's, the median and 90th percentile of the scrapes made
// meanwhile (every one answered during a collection), the exporter's CPU
// per collection, and the load average at the end.
//
// With RPCTL_BENCH_BASE=REV (a git revision, e.g. main) the same cloud is
// measured with that revision's build too, alternating base, head, base,
// head: side by side on the same machine at the same load.
func BenchmarkExporter10kHosts20Flavors(b *testing.B) {
	if os.Getenv("RPCTL_BENCH") == "" {
		b.Skip("make bench runs it (RPCTL_BENCH=1): it builds a 10,000-host cloud first")
	}
	head := buildRpctl(b)
	dbs := sampleCloud(b, head, 10000, 3)
	flavors := benchFlavorFiles(b)
	n := 5
	if v, err := strconv.Atoi(os.Getenv("RPCTL_BENCH_COLLECTIONS")); err == nil && v > 0 {
		n = v
	}
	rev := os.Getenv("RPCTL_BENCH_BASE")
	if rev == "" {
		b.Run("head", func(b *testing.B) { benchExporter(b, head, dbs, flavors, n) })
		return
	}
	base := buildRpctlAt(b, rev)
	for range 2 {
		b.Run("base="+rev, func(b *testing.B) { benchExporter(b, base, dbs, flavors, n) })
		b.Run("head", func(b *testing.B) { benchExporter(b, head, dbs, flavors, n) })
	}
}

// buildRpctlAt builds rpctl and rpctl-exporter as they are at git
// revision rev, in a copy of that tree.
func buildRpctlAt(b *testing.B, rev string) string {
	dir := b.TempDir()
	archive := exec.Command("sh", "-c", `git archive "$1" | tar -x -C "$2"`, "sh", rev, dir)
	archive.Dir = testdb.RepoRoot()
	if out, err := archive.CombinedOutput(); err != nil {
		b.Fatalf("git archive %s: %v\n%s", rev, err, out)
	}
	build := exec.Command("go", "build", "-o", filepath.Join(dir, "bin")+"/", "./cmd/rpctl", "./cmd/rpctl-exporter")
	build.Dir = dir
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("go build at %s: %v\n%s", rev, err, out)
	}
	return filepath.Join(dir, "bin", "rpctl")
}

func benchExporter(b *testing.B, rpctl string, dbs, flavors []string, n int) {
	addr := fmt.Sprintf("127.0.0.1:%d", testdb.FreePort(b))
	args := append(append(append([]string{}, dbs...), "exporter", "--listen", addr, "--interval", "1ms"), flavors...)
	ex := exec.Command(rpctl, args...)
	var exLog strings.Builder
	ex.Stderr = &exLog
	if err := ex.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() {
		ex.Process.Signal(os.Interrupt)
		ex.Wait()
	}()
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	fetch := func() (string, int, time.Duration, error) {
		req, _ := http.NewRequest("GET", "http://"+addr+"/metrics", nil)
		req.Header.Set("Accept-Encoding", "gzip")
		start := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			return "", 0, 0, err
		}
		defer resp.Body.Close()
		raw, err := io.ReadAll(resp.Body)
		took := time.Since(start)
		if err != nil {
			return "", 0, 0, err
		}
		zr, err := gzip.NewReader(strings.NewReader(string(raw)))
		if err != nil {
			return "", 0, 0, err
		}
		text, err := io.ReadAll(zr)
		return string(text), len(raw), took, err
	}
	collections := func() float64 {
		text, _, _, err := fetch()
		if err != nil {
			return -1
		}
		return value(text, "rpctl_exporter_collections_total")
	}
	// Up, with a first collection published (rpctl exec's rpctl-exporter:
	// the same process).
	for collections() < 1 {
		time.Sleep(50 * time.Millisecond)
	}

	var mu sync.Mutex
	var scrapes []float64
	var gzBytes int
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, n, took, err := fetch(); err == nil {
				mu.Lock()
				scrapes = append(scrapes, float64(took.Microseconds())/1000)
				gzBytes = n
				mu.Unlock()
			}
		}
	})
	var durations []float64
	parts := map[string][]float64{}
	var cpu float64
	for b.Loop() {
		b.StopTimer()
		first := collections()
		cpu0 := testdb.ProcessCPU(ex.Process.Pid).Seconds()
		b.StartTimer()
		for k := 1; k <= n; k++ {
			for collections() < first+float64(k) {
				time.Sleep(20 * time.Millisecond)
			}
			text, _, _, err := fetch()
			if err != nil {
				b.Fatal(err)
			}
			durations = append(durations, value(text, "rpctl_exporter_collect_duration_seconds"))
			for _, l := range strings.Split(text, "\n") {
				if rest, ok := strings.CutPrefix(l, `rpctl_exporter_collect_part_duration_seconds{part="`); ok {
					name, v, _ := strings.Cut(rest, `"} `)
					f, _ := strconv.ParseFloat(v, 64)
					parts[name] = append(parts[name], f)
				}
			}
			if strings.Contains(text, `rpctl_exporter_collect_errors{part="capacity"} 1`) {
				b.Fatalf("the collection failed:\n%s", exLog.String())
			}
		}
		cpu += testdb.ProcessCPU(ex.Process.Pid).Seconds() - cpu0
	}
	close(stop)
	wg.Wait()
	text, _, _, _ := fetch()
	if value(text, "rpctl_capacity_hosts") != 10000 {
		b.Fatalf("rpctl_capacity_hosts %v, want 10000", value(text, "rpctl_capacity_hosts"))
	}
	b.ReportMetric(median(durations), "collect-s")
	for name, v := range parts {
		b.ReportMetric(median(v), name+"-s")
	}
	b.ReportMetric(cpu/float64(len(durations)), "cpu-s/collect")
	if len(scrapes) > 0 {
		b.ReportMetric(median(scrapes), "scrape-ms-median")
		b.ReportMetric(percentile(scrapes, 0.9), "scrape-ms-p90")
		b.ReportMetric(float64(len(scrapes)), "scrapes")
	}
	b.ReportMetric(float64(gzBytes)/1e6, "page-gz-MB")
	b.ReportMetric(float64(len(text))/1e6, "page-MB")
	var series int
	for _, l := range strings.Split(text, "\n") {
		if l != "" && l[0] != '#' {
			series++
		}
	}
	b.ReportMetric(float64(series), "series")
	if load, err := os.ReadFile("/proc/loadavg"); err == nil {
		l1, _ := strconv.ParseFloat(strings.Fields(string(load))[0], 64)
		b.ReportMetric(l1, "loadavg-1m")
	}
}
