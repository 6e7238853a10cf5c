package inventory_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rpctl/rpctl/candidates"
	"github.com/rpctl/rpctl/internal/dsn"
	"github.com/rpctl/rpctl/internal/testdb"
	"github.com/rpctl/rpctl/placementclient"
	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/placementdb"
	"github.com/rpctl/rpctl/storage/schema"
)

// BenchmarkInventorySetAggregateVsOSC is the benchmark: one
// `rpctl inventory set AGG --aggregate --amend` over 1,000 member providers
// through the Placement API, against a shell loop of `openstack resource
// provider inventory set --amend` (one process per provider, as operators
// Run it) timed over a sample of 20 and extrapolated to 1,000. Both are
// processes talking to the same real placement-api, once on placement-api's
// own single-threaded test server and once under uWSGI with 2 processes
// (how operators deploy it; rpctl's --parallel requests then overlap).
// Runs under make bench.
func BenchmarkInventorySetAggregateVsOSC(b *testing.B) {
	if os.Getenv("RPCTL_BENCH") == "" {
		b.Skip("set RPCTL_BENCH=1 (make bench): needs MariaDB, placement-api, openstack and minutes")
	}
	const providers, sample = 1000, 20
	ctx := context.Background()
	my := testdb.NewMySQL(b)
	tg, err := dsn.Parse(my.DSN)
	if err != nil {
		b.Fatal(err)
	}
	db, err := storage.Open(ctx, tg, storage.RolePlacement, "")
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	if _, err := schema.Init(ctx, db, schema.PartPlacement); err != nil {
		b.Fatal(err)
	}
	const agg = "a66a66a6-0000-4000-8000-000000000001"
	in := &candidates.ModelInput{Aggregates: []candidates.NamedRow{{ID: 1, Name: agg}}}
	for i := range providers {
		id := int64(i + 1)
		in.Providers = append(in.Providers, candidates.ProviderRow{ID: id, UUID: fmt.Sprintf("b0000000-0000-4000-8000-%012d", i), Name: fmt.Sprintf("cn%04d", i)})
		in.Inventories = append(in.Inventories,
			candidates.InventoryRow{ProviderID: id, ResourceClassID: 0, Total: 64, MinUnit: 1, MaxUnit: 64, StepSize: 1, AllocationRatio: 16},
			candidates.InventoryRow{ProviderID: id, ResourceClassID: 1, Total: 262144, Reserved: 512, MinUnit: 1, MaxUnit: 262144, StepSize: 1, AllocationRatio: 1.5})
		in.ProviderAggregates = append(in.ProviderAggregates, candidates.LinkRow{ProviderID: id, OtherID: 1})
	}
	if err := placementdb.WriteSyntheticPlacement(ctx, db, in); err != nil {
		b.Fatal(err)
	}
	bin := filepath.Join(b.TempDir(), "rpctl")
	build := exec.Command("go", "build", "-o", bin, "./cmd/rpctl")
	build.Dir = testdb.RepoRoot()
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("go build: %v: %s", err, out)
	}
	env := []string{"PATH=/usr/bin:/bin", "HOME=" + b.TempDir()}

	// Every run sets its own ratio, so that every provider really changes
	// (an unchanged provider costs rpctl one GET) and the check below sees
	// which run wrote it last. A run that lowers capacity reads usage (the
	// warning when it drops below usage needs it), one that raises it does
	// not: both are timed. RPCTL_BENCH_BASELINE names another rpctl binary
	// (e.g. main's build) timed in the same minutes, before each of ours.
	type run struct {
		bin, label string
		ratio      float64
		extra      []string // flags beyond the defaults
	}
	bins := [][2]string{{bin, "this build"}}
	if base := os.Getenv("RPCTL_BENCH_BASELINE"); base != "" {
		bins = [][2]string{{base, "baseline " + filepath.Base(base)}, bins[0]}
	}
	// Ratios fall through the lowering runs and rise through the raising
	// ones, on both servers (the osc sample's 20 providers included).
	runsFor := func(lower, raise []float64) []run {
		var rs []run
		skip := len(lower) - len(bins)
		for i, bn := range bins {
			rs = append(rs, run{bn[0], bn[1] + ", capacity lowered", lower[skip+i], nil})
		}
		for i, bn := range bins {
			rs = append(rs, run{bn[0], bn[1] + ", capacity raised", raise[skip+i], nil})
		}
		return rs
	}
	// The help's claim that --parallel above uWSGI's worker processes is
	// slower, timed: twice the default against 2 processes.
	uwsgiRuns := append(runsFor([]float64{3, 1.5}, []float64{2, 5}), run{bin, "this build, capacity raised, --parallel 4", 7, []string{"--parallel", "4"}})
	type timing struct {
		label             string
		wall, cpu, server time.Duration
	}
	servers := []struct {
		name           string
		base           string
		runs           []run
		oscR           float64
		times          []timing
		oscT           time.Duration
		oscSampleWallT time.Duration
	}{
		{name: "placement-api (wsgiref test server, one thread)", base: testdb.PlacementAPI(b, my.URL), runs: runsFor([]float64{8, 4}, []float64{6, 12}), oscR: 20},
		{name: "placement-api under uWSGI, 2 processes", base: testdb.PlacementAPIUWSGI(b, my.URL, 2), runs: uwsgiRuns, oscR: 24},
	}
	for si := range servers {
		sv := &servers[si]
		port := sv.base[strings.LastIndex(sv.base, ":")+1:]
		for _, r := range sv.runs {
			server0 := serverCPU(port)
			start := time.Now()
			args := append([]string{"--os-endpoint", sv.base, "--os-token", "admin", "inventory", "set", agg, "--aggregate", "--amend", "--yes",
				fmt.Sprintf("VCPU:allocation_ratio=%g", r.ratio)}, r.extra...)
			cmd := exec.Command(r.bin, args...)
			cmd.Env = env
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("rpctl inventory set --aggregate: %v\n%s", err, out)
			}
			sv.times = append(sv.times, timing{r.label, time.Since(start), cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), serverCPU(port) - server0})
		}

		start := time.Now()
		for i := range sample {
			osc := exec.Command("/usr/bin/openstack", "--os-endpoint", sv.base, "--os-token", "admin", "resource", "provider", "inventory", "set",
				in.Providers[i].UUID, "--amend", "--resource", fmt.Sprintf("VCPU:allocation_ratio=%g", sv.oscR))
			osc.Env = env
			if out, err := osc.CombinedOutput(); err != nil {
				b.Fatalf("openstack resource provider inventory set: %v\n%s", err, out)
			}
		}
		sv.oscSampleWallT = time.Since(start)
		sv.oscT = sv.oscSampleWallT / sample * providers

		// Every run did what it was asked: the osc sample, and the last
		// Rpctl run on every provider (checked on 1 in 25, plus the last).
		c, err := placementclient.New(ctx, placementclient.Config{Endpoint: sv.base, Auth: placementclient.StaticToken("admin")})
		if err != nil {
			b.Fatal(err)
		}
		for i, p := range in.Providers {
			if i >= sample && i%25 != 0 && i != providers-1 {
				continue
			}
			want := sv.runs[len(sv.runs)-1].ratio
			if i < sample {
				want = sv.oscR
			}
			inv, err := c.GetInventory(ctx, p.UUID, "VCPU")
			if err != nil || inv.AllocationRatio != want || inv.Total != 64 {
				b.Fatalf("%s: %+v %v, want allocation_ratio %v", p.Name, inv, err, want)
			}
		}
	}
	fmt.Printf("\n%-66s %9s %9s %9s %10s %8s\n", "inventory set over 1,000 providers through the Placement API", "rpctl", "rpctl CPU", "API CPU", "osc loop", "ratio")
	for _, sv := range servers {
		fmt.Println(sv.name)
		for _, t := range sv.times {
			fmt.Printf("  %-64s %9v %9v %9v %10v %7.1fx\n", t.label, t.wall.Round(time.Millisecond), t.cpu.Round(time.Millisecond), t.server.Round(time.Millisecond),
				sv.oscT.Round(time.Second), float64(sv.oscT)/float64(t.wall))
		}
		fmt.Printf("  %-64s %9s %9s %9s %10v (%v per call)\n", fmt.Sprintf("(osc measured on %d providers, extrapolated to %d)", sample, providers), "", "", "",
			sv.oscSampleWallT.Round(time.Millisecond), (sv.oscSampleWallT / sample).Round(time.Millisecond))
	}
	for b.Loop() {
	}
	// The headline is this build lowering capacity: its dearer case.
	ours := len(bins) - 1
	b.ReportMetric(float64(servers[0].oscT)/float64(servers[0].times[ours].wall), "osc-loop/rpctl-x")
	b.ReportMetric(servers[0].times[ours].wall.Seconds(), "rpctl-s")
	b.ReportMetric(float64(servers[1].oscT)/float64(servers[1].times[ours].wall), "uwsgi-osc-loop/rpctl-x")
	b.ReportMetric(servers[1].times[ours].wall.Seconds(), "uwsgi-rpctl-s")
	// Raising capacity under uWSGI: the default --parallel and 4.
	uw := servers[1].times
	b.ReportMetric(uw[2*len(bins)-1].wall.Seconds(), "uwsgi-raise-p2-s")
	b.ReportMetric(uw[len(uw)-1].wall.Seconds(), "uwsgi-raise-p4-s")
}

// serverCPU is the CPU time used so far by the placement-api processes
// listening on port (uWSGI's master and workers, or the test server), read
// from /proc: what the requests cost the service, beside rpctl's own.
func serverCPU(port string) time.Duration {
	var total time.Duration
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		if _, err := strconv.Atoi(d.Name()); err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline"))
		if err != nil {
			continue
		}
		args := strings.Split(string(cmdline), "\x00")
		if !slices.Contains(args, "127.0.0.1:"+port) && !(slices.Contains(args, "--port") && slices.Contains(args, port)) {
			continue
		}
		pid, _ := strconv.Atoi(d.Name())
		total += testdb.ProcessCPU(pid)
	}
	return total
}
