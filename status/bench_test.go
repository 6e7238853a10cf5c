package status_test

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rpctl/rpctl/internal/nova"
	"github.com/rpctl/rpctl/status"
	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/celldb"
)

// bulk runs a multi-row INSERT of rows (each a ready "(...)" tuple) in
// statements of 2,000 rows.
func (f *fixture) bulk(db *storage.DB, head string, rows []string) {
	f.t.Helper()
	for len(rows) > 0 {
		n := min(2000, len(rows))
		f.exec(db, head+" VALUES "+strings.Join(rows[:n], ", "))
		rows = rows[n:]
	}
}

// BenchmarkAllChecks100k times every check on 100,000 compute nodes in one
// MariaDB cell, each with a service and a resource provider carrying VCPU,
// MEMORY_MB and DISK_GB inventories and one instance's allocations, a few
// hundred of them drifting, unmigrated or over-committed. Needs RPCTL_BENCH
// (make bench): the setup alone writes ~800,000 rows.
func BenchmarkAllChecks100k(b *testing.B) {
	if os.Getenv("RPCTL_BENCH") == "" {
		b.Skip("set RPCTL_BENCH=1 (make bench) to write 100,000 nodes into MariaDB")
	}
	const nodes = 100_000
	f := newFixture(b)
	start := time.Now()
	cns := make([]nova.ComputeNode, 0, nodes)
	svcs := make([]nova.Service, 0, nodes+4)
	for i := 1; i <= nodes; i++ {
		host := fmt.Sprintf("cmp%06d", i)
		n := nova.ComputeNode{ID: int64(i), Host: sp(host), HypervisorHostname: sp(host), UUID: sp(fmt.Sprintf("00000000-0000-4000-8000-%012d", i)),
			VCPUs: 64, MemoryMB: 262144, LocalGB: 2000, HypervisorType: "QEMU", HypervisorVersion: 6002000, CPUInfo: "{}",
			RAMAllocationRatio: fp(1.5), CPUAllocationRatio: fp(16), DiskAllocationRatio: fp(1), ServiceID: ptr(int64(i))}
		switch {
		case i%1000 == 1:
			n.UUID = nil
		case i%1000 == 2:
			n.CPUAllocationRatio = fp(0)
		case i%500 == 3:
			n.Deleted = n.ID
		}
		cns = append(cns, n)
		svcs = append(svcs, nova.Service{ID: int64(i), Host: sp(host), Binary: sp("nova-compute"), Topic: sp("compute"), Version: 61 + int64(i%4)})
	}
	svcs = append(svcs, nova.Service{ID: nodes + 1, Host: sp("ctl1"), Binary: sp("nova-conductor"), Version: 64},
		nova.Service{ID: nodes + 2, Host: sp("ctl1"), Binary: sp("nova-osapi_compute"), Version: 64})
	if err := celldb.InsertCellRows(f.ctx, f.cell, nova.CellRows{Services: svcs, ComputeNodes: cns}); err != nil {
		b.Fatal(err)
	}
	var rps, invs, allocs, consumers []string
	for i := 1; i <= nodes; i++ {
		if i%1000 == 1 || i%1000 == 4 {
			continue // no uuid; no provider yet
		}
		rps = append(rps, fmt.Sprintf("(%d, '00000000-0000-4000-8000-%012d', 'cmp%06d', 1, %d)", i, i, i, i))
		vcpu := 64
		if i%1000 == 5 {
			vcpu = 48 // drift
		}
		invs = append(invs, fmt.Sprintf("(%d, 0, %d, 0, 1, %d, 1, 16)", i, vcpu, vcpu),
			fmt.Sprintf("(%d, 1, 262144, 512, 1, 262144, 1, 1.5)", i),
			fmt.Sprintf("(%d, 2, 2000, 0, 1, 2000, 1, 1)", i))
		used := 4
		if i%1000 == 6 {
			used = 2000 // over (64 - 0) * 16
		}
		c := fmt.Sprintf("'10000000-0000-4000-8000-%012d'", i)
		allocs = append(allocs, fmt.Sprintf("(%d, %s, 0, %d)", i, c, used), fmt.Sprintf("(%d, %s, 1, 8192)", i, c))
		if i%1000 != 7 {
			consumers = append(consumers, fmt.Sprintf("(%s, 1, 1, 1)", c))
		}
	}
	f.bulk(f.placement, "INSERT INTO resource_providers (id, uuid, name, generation, root_provider_id)", rps)
	f.bulk(f.placement, "INSERT INTO inventories (resource_provider_id, resource_class_id, total, reserved, min_unit, max_unit, step_size, allocation_ratio)", invs)
	f.bulk(f.placement, "INSERT INTO allocations (resource_provider_id, consumer_id, resource_class_id, used)", allocs)
	f.bulk(f.placement, "INSERT INTO consumers (uuid, project_id, user_id, generation)", consumers)
	for _, db := range []*storage.DB{f.cell, f.placement} {
		f.exec(db, "ANALYZE TABLE "+map[*storage.DB]string{f.cell: "compute_nodes, services", f.placement: "resource_providers, inventories, allocations, consumers"}[db])
	}
	b.Logf("setup: %d nodes, %d providers, %d inventories, %d allocations in %s", nodes, len(rps), len(invs), len(allocs), time.Since(start).Round(time.Millisecond))

	{
		env := &status.Env{Cells: f.env.Cells, Placement: f.env.Placement, Options: f.env.Options}
		for _, c := range status.Checks(env) {
			t0 := time.Now()
			status.Run(f.ctx, []status.Check{c})
			b.Logf("%-26s %s", c.Name, time.Since(t0).Round(time.Millisecond))
		}
	}
	var runs []time.Duration
	var rep status.Report
	b.ResetTimer()
	// At least five runs, whatever -benchtime says, for a median.
	for n := 0; n < max(b.N, 5); n++ {
		t0 := time.Now()
		// A fresh Env each run: nothing is remembered between runs.
		env := &status.Env{Cells: f.env.Cells, Placement: f.env.Placement, Options: f.env.Options}
		checks := status.Checks(env)
		env.Prefetch(f.ctx, checks)
		rep = status.Run(f.ctx, checks)
		runs = append(runs, time.Since(t0))
		var parts []string
		for _, r := range rep.Results {
			parts = append(parts, fmt.Sprintf("%s=%dms", strings.Fields(r.Check)[0], r.Elapsed.Milliseconds()))
		}
		b.Logf("run %s: %s", runs[len(runs)-1].Round(time.Millisecond), strings.Join(parts, " "))
	}
	b.StopTimer()
	slices.Sort(runs)
	median := runs[len(runs)/2]
	b.ReportMetric(float64(median.Milliseconds()), "median-ms")
	b.ReportMetric(float64(runs[len(runs)-1].Milliseconds()), "max-ms")
	codes := map[string]status.Code{}
	for _, r := range rep.Results {
		codes[r.Check] = r.Code
		if r.Crashed {
			b.Errorf("%s crashed: %s", r.Check, r.Details)
		}
	}
	want := map[string]status.Code{status.CheckComputeNodeUUIDs: status.Warning, status.CheckResourceProviders: status.Warning,
		status.CheckInventoryDrift: status.Warning, status.CheckAllocationRatios: status.Warning, status.CheckOverCommitted: status.Failure,
		status.CheckMissingRootIDs: status.Success, status.CheckIncompleteConsum: status.Warning, status.CheckOrphanedProviders: status.Warning,
		status.CheckServiceVersions: status.Success}
	for k, v := range want {
		if codes[k] != v {
			b.Errorf("%s: %s, want %s", k, codes[k], v)
		}
	}
	if median > 3*time.Second {
		b.Errorf("median %s over the 3 s budget", median)
	}
}

func ptr[T any](v T) *T { return &v }
