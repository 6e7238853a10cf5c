package cmd_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
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
// run it) timed over a sample of 20 and extrapolated to 1,000. Both are
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

	// Each server gets its own ratios to set, so that every provider really
	// changes (an unchanged provider costs rpctl one GET, not three
	// requests) and the check below sees which run wrote it.
	servers := []struct {
		name           string
		base           string
		rpctlR, oscR   float64
		rpctlT, oscT   time.Duration
		oscSampleWallT time.Duration
	}{
		{name: "placement-api (wsgiref test server, one thread)", base: testdb.PlacementAPI(b, my.URL), rpctlR: 4, oscR: 2},
		{name: "placement-api under uWSGI, 2 processes", base: testdb.PlacementAPIUWSGI(b, my.URL, 2), rpctlR: 8, oscR: 3},
	}
	for si := range servers {
		sv := &servers[si]
		start := time.Now()
		run := exec.Command(bin, "--os-endpoint", sv.base, "--os-token", "admin", "inventory", "set", agg, "--aggregate", "--amend", "--yes",
			fmt.Sprintf("VCPU:allocation_ratio=%g", sv.rpctlR))
		run.Env = env
		if out, err := run.CombinedOutput(); err != nil {
			b.Fatalf("rpctl inventory set --aggregate: %v\n%s", err, out)
		}
		sv.rpctlT = time.Since(start)

		start = time.Now()
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

		// Both did what they were asked: the osc sample, and rpctl on every
		// provider (checked on 1 in 25, plus the last).
		c, err := placementclient.New(ctx, placementclient.Config{Endpoint: sv.base, Auth: placementclient.StaticToken("admin")})
		if err != nil {
			b.Fatal(err)
		}
		for i, p := range in.Providers {
			if i >= sample && i%25 != 0 && i != providers-1 {
				continue
			}
			want := sv.rpctlR
			if i < sample {
				want = sv.oscR
			}
			inv, err := c.GetInventory(ctx, p.UUID, "VCPU")
			if err != nil || inv.AllocationRatio != want || inv.Total != 64 {
				b.Fatalf("%s: %+v %v, want allocation_ratio %v", p.Name, inv, err, want)
			}
		}
	}
	fmt.Printf("\n%-72s %10s %10s %8s\n", "inventory set over 1,000 providers through the Placement API", "rpctl", "osc loop", "ratio")
	for _, sv := range servers {
		ratio := float64(sv.oscT) / float64(sv.rpctlT)
		fmt.Printf("%-72s %10v %10v %7.1fx\n", sv.name, sv.rpctlT.Round(time.Millisecond), sv.oscT.Round(time.Second), ratio)
		fmt.Printf("  %-70s %10s %10v\n", fmt.Sprintf("(osc measured on %d providers, extrapolated to %d)", sample, providers), "", sv.oscSampleWallT.Round(time.Millisecond))
	}
	for b.Loop() {
	}
	b.ReportMetric(float64(servers[0].oscT)/float64(servers[0].rpctlT), "osc-loop/rpctl-x")
	b.ReportMetric(servers[0].rpctlT.Seconds(), "rpctl-s")
	b.ReportMetric(float64(servers[1].oscT)/float64(servers[1].rpctlT), "uwsgi-osc-loop/rpctl-x")
	b.ReportMetric(servers[1].rpctlT.Seconds(), "uwsgi-rpctl-s")
}
