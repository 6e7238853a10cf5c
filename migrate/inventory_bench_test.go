package migrate_test

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rpctl/rpctl/internal/config"
	"github.com/rpctl/rpctl/internal/testdb"
	"github.com/rpctl/rpctl/migrate"
	"github.com/rpctl/rpctl/samplecloud"
	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/celldb"
	"github.com/rpctl/rpctl/storage/placementdb"
	"github.com/rpctl/rpctl/storage/schema"
)

// BenchmarkInventory100k migrates 100,000 legacy compute nodes into MariaDB
// the way `rpctl migrate inventory` does (the runner's default batches, the
// default --parallel writers; reading and parsing the rows included) and, on a second
// empty migrate.Placement database, bulk-inserts the very rows the migration wrote
// in the fastest plain form (one transaction of multi-row INSERTs with
// explicit ids): the floor. Each is timed at least three times, alternately,
// so both see the same machine; it reports the medians, nodes/s and their
// ratio (issue 22's target: within 1.3x of the floor). The migration writes
// its first groups while the later rows are still planned, so "first group
// written after" is no longer the planning time. The CPU time of the MariaDB
// server and of the migration (this process) during each run say whose work
// the difference is: the floor writes in one transaction, the migration one
// transaction per node.
func BenchmarkInventory100k(b *testing.B) {
	if os.Getenv("RPCTL_BENCH") == "" {
		b.Skip("set RPCTL_BENCH=1 (make bench) to migrate 100,000 nodes")
	}
	const nodes = 100_000
	ctx := context.Background()
	cell, _ := mysqlDB(b, schema.PartCell, storage.RoleCell, "cell1")
	cloud := samplecloud.Generate(samplecloud.Options{Nodes: nodes, Seed: 1, MaxInstancesPerNode: 0})
	if _, err := samplecloud.Write(ctx, samplecloud.Target{Cells: []samplecloud.CellDB{celldb.New(cell)}}, cloud, samplecloud.WriteOptions{}); err != nil {
		b.Fatal(err)
	}
	// The nodes written without a uuid get one from the migration; each run
	// starts from the same cell.
	var nullIDs []string
	for _, id := range cloud.Kinds["uuid=null"] {
		nullIDs = append(nullIDs, fmt.Sprint(id))
	}
	cfg := migrate.InventoryConfig{Layout: migrate.LayoutFlat, Ratios: config.DefaultOptions().Ratios, Reserved: config.Reserved{MemoryMB: 512}}
	var migr, bulk, migrSrv, bulkSrv, migrSelf []float64
	server := serverCPU(b, cell)
	runs := max(b.N, 3)
	b.ResetTimer()
	for i := 0; i < runs; i++ {
		b.StopTimer()
		if len(nullIDs) > 0 {
			if _, err := cell.ExecContext(ctx, "UPDATE compute_nodes SET uuid = NULL WHERE id IN ("+strings.Join(nullIDs, ",")+")"); err != nil {
				b.Fatal(err)
			}
		}
		placement, _ := mysqlDB(b, schema.PartPlacement, storage.RolePlacement, "")
		floorDB, _ := mysqlDB(b, schema.PartPlacement, storage.RolePlacement, "")
		b.StartTimer()
		srv0, self0 := server(), selfCPU()
		start := time.Now()
		m := &migrate.Inventory{Cells: cellStores(cell), Placement: placementStore(placement), Config: cfg, Parallel: benchParallel()}
		var planned time.Duration // until the first group is written: reading and planning
		m.Progress = func(int, int) {
			if planned == 0 {
				planned = time.Since(start)
			}
		}
		sum, err := (&migrate.Runner{Migrations: []migrate.Migration{m}, Batch: benchBatch()}).Run(ctx, 0, true)
		if err != nil || len(sum.Rows) != 1 || sum.Rows[0].Completed != nodes || sum.Exit != 0 {
			b.Fatalf("summary %+v: %v", sum, err)
		}
		migr = append(migr, time.Since(start).Seconds())
		migrSrv, migrSelf = append(migrSrv, server()-srv0), append(migrSelf, selfCPU()-self0)
		b.StopTimer()

		st, err := placementdb.LoadPlacementState(ctx, placement)
		if err != nil {
			b.Fatal(err)
		}
		var ps []*migrate.PProvider
		for _, p := range st.Providers {
			ps = append(ps, p)
		}
		sort.Slice(ps, func(i, j int) bool { return ps[i].ID < ps[j].ID })
		var classes []string
		for _, p := range ps {
			for rc := range p.Inventories {
				classes = append(classes, rc)
			}
		}
		ids, err := placementdb.EnsurePlacementNames(ctx, floorDB, classes, []string{migrate.TraitComputeNode}, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		srv0 = server()
		start = time.Now()
		if err := placementdb.BulkLoadProviders(ctx, floorDB, ids, ps); err != nil {
			b.Fatal(err)
		}
		bulk, bulkSrv = append(bulk, time.Since(start).Seconds()), append(bulkSrv, server()-srv0)
		b.Logf("run %d: migrate %.2fs (first group written after %.2fs; CPU: MariaDB %.2fs, migration %.2fs), bulk insert %.2fs (MariaDB %.2fs)",
			i+1, migr[i], planned.Seconds(), migrSrv[i], migrSelf[i], bulk[i], bulkSrv[i])
	}
	b.StopTimer()
	med := func(v []float64) float64 {
		v = append([]float64(nil), v...)
		sort.Float64s(v)
		return v[len(v)/2]
	}
	m, f := med(migr), med(bulk)
	b.ReportMetric(nodes/m, "nodes/s")
	b.ReportMetric(m, "migrate_s")
	b.ReportMetric(f, "bulk_insert_s")
	b.ReportMetric(m/f, "ratio_to_bulk")
	b.ReportMetric(med(migrSrv), "migrate_mariadb_cpu_s")
	b.ReportMetric(med(migrSelf), "migrate_rpctl_cpu_s")
	b.ReportMetric(med(bulkSrv), "bulk_mariadb_cpu_s")
	b.ReportMetric(float64(runs), "runs")
}

// serverCPU returns a reader of the MariaDB server's CPU time (user and
// system, seconds) when the server runs on this machine (make bench's
// does), so that the figures say whose work a run is; else a reader of 0.
func serverCPU(b *testing.B, db *storage.DB) func() float64 {
	var pidFile string
	if err := db.GetContext(context.Background(), &pidFile, "SELECT @@pid_file"); err != nil {
		b.Fatal(err)
	}
	pid, err := os.ReadFile(pidFile)
	if err != nil {
		b.Logf("MariaDB's CPU not measured: %v", err)
		return func() float64 { return 0 }
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(pid)))
	if err != nil {
		b.Logf("MariaDB's CPU not measured: pid file %s: %v", pidFile, err)
		return func() float64 { return 0 }
	}
	return func() float64 { return testdb.ProcessCPU(n).Seconds() }
}

// selfCPU is this process's CPU time so far (the migration runs in it).
func selfCPU() float64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// benchParallel is the command's --parallel default, or
// RPCTL_BENCH_PARALLEL to try another.
func benchParallel() int {
	if n, err := strconv.Atoi(os.Getenv("RPCTL_BENCH_PARALLEL")); err == nil && n > 0 {
		return n
	}
	return migrate.DefaultParallel
}

// benchBatch is the command's default batch size unless RPCTL_BENCH_BATCH
// asks for another (50 is nova-manage's).
func benchBatch() int {
	if n, err := strconv.Atoi(os.Getenv("RPCTL_BENCH_BATCH")); err == nil && n > 0 {
		return n
	}
	return migrate.DefaultBatch
}
