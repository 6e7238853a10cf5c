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
// processes talking to the same real placement-api. Runs under make bench.
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
	base := testdb.PlacementAPI(b, my.URL)
	bin := filepath.Join(b.TempDir(), "rpctl")
	build := exec.Command("go", "build", "-o", bin, "./cmd/rpctl")
	build.Dir = testdb.RepoRoot()
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("go build: %v: %s", err, out)
	}
	env := []string{"PATH=/usr/bin:/bin", "HOME=" + b.TempDir()}

	start := time.Now()
	run := exec.Command(bin, "--os-endpoint", base, "--os-token", "admin", "inventory", "set", agg, "--aggregate", "--amend", "--yes", "VCPU:allocation_ratio=4.0")
	run.Env = env
	if out, err := run.CombinedOutput(); err != nil {
		b.Fatalf("rpctl inventory set --aggregate: %v\n%s", err, out)
	}
	rpctlTime := time.Since(start)

	start = time.Now()
	for i := range sample {
		osc := exec.Command("/usr/bin/openstack", "--os-endpoint", base, "--os-token", "admin", "resource", "provider", "inventory", "set",
			in.Providers[i].UUID, "--amend", "--resource", "VCPU:allocation_ratio=2.0")
		osc.Env = env
		if out, err := osc.CombinedOutput(); err != nil {
			b.Fatalf("openstack resource provider inventory set: %v\n%s", err, out)
		}
	}
	oscSample := time.Since(start)
	oscTime := oscSample / sample * providers

	// Both did what they were asked: the osc sample, and rpctl on every
	// provider (checked on 1 in 25, plus the last).
	c, err := placementclient.New(ctx, placementclient.Config{Endpoint: base, Auth: placementclient.StaticToken("admin")})
	if err != nil {
		b.Fatal(err)
	}
	for i, p := range in.Providers {
		if i >= sample && i%25 != 0 && i != providers-1 {
			continue
		}
		want := 4.0
		if i < sample {
			want = 2.0
		}
		inv, err := c.GetInventory(ctx, p.UUID, "VCPU")
		if err != nil || inv.AllocationRatio != want || inv.Total != 64 {
			b.Fatalf("%s: %+v %v, want allocation_ratio %v", p.Name, inv, err, want)
		}
	}
	ratio := float64(oscTime) / float64(rpctlTime)
	fmt.Printf("\n%-70s %12s\n", "inventory set over 1,000 providers through the Placement API", "wall time")
	fmt.Printf("%-70s %12v\n", "rpctl inventory set AGG --aggregate --amend (one process)", rpctlTime.Round(time.Millisecond))
	fmt.Printf("%-70s %12v\n", fmt.Sprintf("openstack resource provider inventory set --amend x %d (measured)", sample), oscSample.Round(time.Millisecond))
	fmt.Printf("%-70s %12v\n", "openstack ... x 1,000 (extrapolated)", oscTime.Round(time.Second))
	fmt.Printf("%-70s %11.1fx\n", "ratio (osc loop / rpctl)", ratio)
	for b.Loop() {
	}
	b.ReportMetric(ratio, "osc-loop/rpctl-x")
	b.ReportMetric(rpctlTime.Seconds(), "rpctl-s")
	b.ReportMetric(oscTime.Seconds(), "osc-extrapolated-s")
}
