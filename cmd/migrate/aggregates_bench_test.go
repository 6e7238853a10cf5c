package migrate_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/rpctl/rpctl/cmd/internal/cmdtest"
	"github.com/rpctl/rpctl/internal/nova"
	"github.com/rpctl/rpctl/internal/testdb"
	"github.com/rpctl/rpctl/migrate"
	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/apidb"
	"github.com/rpctl/rpctl/storage/celldb"
	"github.com/rpctl/rpctl/storage/placementdb"
)

// benchAggAggregates is the number of host aggregates.
const benchAggAggregates = 500

// benchAggCloud writes hosts compute nodes into Nova's own schemas
// (reference db sync), each host mapped and in aggregate host%500, every
// fourth also in a second one, and creates the providers with rpctl
// migrate inventory; the placement-api serves the Placement database.
func benchAggCloud(b *testing.B, hosts int) *cmdtest.HealSide {
	b.Helper()
	s := cmdtest.ReferenceSide(b)
	ctx := context.Background()
	created := time.Date(2022, 1, 1, 0, 0, 0, 0, time.UTC)
	var ns []nova.ComputeNode
	var hms []nova.HostMapping
	aggs := make([]nova.Aggregate, benchAggAggregates)
	for i := range aggs {
		aggs[i] = nova.Aggregate{ID: int64(i + 1), UUID: fmt.Sprintf("a%07d-0000-4000-8000-%012d", i, i), Name: fmt.Sprintf("agg%03d", i), CreatedAt: &created}
	}
	for n := 1; n <= hosts; n++ {
		host := fmt.Sprintf("compute%06d", n)
		u := fmt.Sprintf("c%07d-0000-4000-8000-%012d", n, n)
		ns = append(ns, nova.ComputeNode{ID: int64(n), Host: &host, HypervisorHostname: &host, UUID: &u, CreatedAt: &created,
			VCPUs: 64, MemoryMB: 262144, LocalGB: 2000, HypervisorType: "QEMU", HypervisorVersion: 6002000, CPUInfo: "{}",
			CPUAllocationRatio: cmdtest.RatiosFP(4), RAMAllocationRatio: cmdtest.RatiosFP(1), DiskAllocationRatio: cmdtest.RatiosFP(1)})
		hms = append(hms, nova.HostMapping{ID: int64(n), CellID: 2, Host: host, CreatedAt: &created})
		a := n % benchAggAggregates
		aggs[a].Hosts = append(aggs[a].Hosts, host)
		if n%4 == 0 {
			second := (a + benchAggAggregates/2) % benchAggAggregates
			aggs[second].Hosts = append(aggs[second].Hosts, host)
		}
	}
	cell := cmdtest.OpenDB(b, s.Cell, storage.RoleCell)
	if err := celldb.InsertCellRows(ctx, cell, nova.CellRows{ComputeNodes: ns}); err != nil {
		b.Fatal(err)
	}
	api := cmdtest.OpenDB(b, s.API, storage.RoleAPI)
	cm := []nova.CellMapping{
		{ID: 1, UUID: nova.Cell0UUID, Name: "cell0", TransportURL: "none:///", DatabaseConnection: "mysql+pymysql://x@127.0.0.1/unused"},
		{ID: 2, UUID: "dddddddd-0000-4000-8000-000000000001", Name: "cell1", TransportURL: "fake://", DatabaseConnection: s.Cell.URL},
	}
	if err := apidb.InsertAPIRows(ctx, api, nova.APIRows{CellMappings: cm, HostMappings: hms, Aggregates: aggs}); err != nil {
		b.Fatal(err)
	}
	s.URL = testdb.PlacementAPI(b, s.Placement.URL) // syncs the standard classes first
	cmdtest.RpctlB(b, "--api-db", s.API.URL, "--placement-db", s.Placement.URL, "migrate", "inventory")
	return s
}

// BenchmarkMigrateAggregates is the comparison: Nova 26's own
// sync_aggregates (a GET and a PUT to the real placement-api per missing
// membership, after the host mapping and compute node reads) on a
// 2,000-host sample in 500 aggregates, extrapolated to 100,000 hosts,
// against rpctl migrate aggregates on the Placement database on 100,000
// hosts in 500 aggregates (and on the same sample, on the database and
// through the API). Nova's time excludes its Python start-up: the command
// runs in an already imported nova-manage.
func BenchmarkMigrateAggregates(b *testing.B) {
	if os.Getenv("RPCTL_BENCH") == "" {
		b.Skip("set RPCTL_BENCH=1 (make bench): needs MariaDB, placement-api and python3-nova")
	}
	testdb.RequirePython(b, "nova.cmd.manage", "pymysql")
	const sampleN = 2000
	bigN := 100000
	if v, err := strconv.Atoi(os.Getenv("RPCTL_BENCH_AGG_N")); err == nil && v > 0 {
		bigN = v // a smaller run to try the benchmark out
	}
	syncDB := func(s *cmdtest.HealSide) (time.Duration, int) {
		ctx := context.Background()
		sy := &migrate.AggregateSync{API: apidb.New(cmdtest.OpenDB(b, s.API, storage.RoleAPI)),
			Cells:     []migrate.AggregateCell{celldb.New(cmdtest.OpenDB(b, s.Cell, storage.RoleCell))},
			Placement: placementdb.New(cmdtest.OpenDB(b, s.Placement, storage.RolePlacement)), Out: io.Discard, Err: io.Discard}
		start := time.Now()
		res, err := sy.Run(ctx)
		d := time.Since(start)
		if err != nil || res.Exit != 0 {
			b.Fatalf("rpctl migrate aggregates: %+v %v", res, err)
		}
		return d, len(res.Added)
	}
	for i := 0; i < b.N; i++ {
		sample := benchAggCloud(b, sampleN)
		sampleDB, sampleAPI := cmdtest.CloneSide(b, sample), cmdtest.CloneSide(b, sample)
		sample.WriteNovaConf(b)
		nm := cmdtest.StartNovaManage(b)
		// Imports and connects Nova before the clock starts.
		if _, code := nm.Run(b, "--config-file", sample.Conf, "placement", "heal_allocations", "--max-count", "0"); code != 127 {
			b.Fatalf("nova-manage warm-up: exit %d", code)
		}
		start := time.Now()
		out, code := nm.Run(b, "--config-file", sample.Conf, "placement", "sync_aggregates")
		novaSample := time.Since(start)
		if code != 0 {
			b.Fatalf("nova-manage sync_aggregates: exit %d\n%s", code, out)
		}
		rpctlSample, added := syncDB(sampleDB)
		start = time.Now()
		cmdtest.RpctlB(b, "--api-db", sampleAPI.API.URL, "--os-endpoint", sampleAPI.URL, "--os-token", "admin", "migrate", "aggregates")
		rpctlSampleAPI := time.Since(start)
		big := benchAggCloud(b, bigN)
		rpctlBig, bigAdded := syncDB(big)
		if want := bigN + bigN/4; bigAdded != want {
			b.Fatalf("rpctl added %d memberships on %d hosts, want %d", bigAdded, bigN, want)
		}
		novaBig := novaSample.Seconds() * float64(bigN) / sampleN
		b.ReportMetric(float64(added), "sample-memberships")
		b.ReportMetric(novaSample.Seconds(), "nova-2k-s")
		b.ReportMetric(rpctlSample.Seconds(), "rpctl-db-2k-s")
		b.ReportMetric(rpctlSampleAPI.Seconds(), "rpctl-api-2k-s")
		b.ReportMetric(novaBig, "nova-100k-extrapolated-s")
		b.ReportMetric(rpctlBig.Seconds(), "rpctl-db-100k-s")
		b.ReportMetric(novaBig/rpctlBig.Seconds(), "speedup-100k-x")
	}
}
