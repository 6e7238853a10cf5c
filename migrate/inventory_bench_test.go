package migrate

import (
	"context"
	"os"
	"sort"
	"testing"
	"time"

	"github.com/rpctl/rpctl/config"
	"github.com/rpctl/rpctl/samplecloud"
	"github.com/rpctl/rpctl/storage"
)

// BenchmarkInventory100k migrates 100,000 legacy compute nodes into MariaDB
// (reading and parsing the rows included) and, on a second empty Placement
// database, bulk-inserts the very rows the migration wrote: the floor. It
// reports nodes/s, both times and their ratio (target: >= 3,000 nodes/s and
// within 2x of the floor).
func BenchmarkInventory100k(b *testing.B) {
	if os.Getenv("RPCTL_BENCH") == "" {
		b.Skip("set RPCTL_BENCH=1 (make bench) to migrate 100,000 nodes")
	}
	const nodes = 100_000
	ctx := context.Background()
	cell, _ := mysqlDB(b, storage.PartCell, storage.RoleCell, "cell1")
	cloud := samplecloud.Generate(samplecloud.Options{Nodes: nodes, Seed: 1, MaxInstancesPerNode: 0})
	if _, err := samplecloud.Write(ctx, &storage.Databases{Cells: []*storage.DB{cell}}, cloud, samplecloud.WriteOptions{}); err != nil {
		b.Fatal(err)
	}
	cfg := InventoryConfig{Layout: LayoutFlat, Ratios: config.DefaultOptions().Ratios, Reserved: config.Reserved{MemoryMB: 512}}
	var migr, bulk []float64
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		placement, _ := mysqlDB(b, storage.PartPlacement, storage.RolePlacement, "")
		floorDB, _ := mysqlDB(b, storage.PartPlacement, storage.RolePlacement, "")
		b.StartTimer()
		start := time.Now()
		m := &Inventory{Cells: []*storage.DB{cell}, Placement: placement, Config: cfg, Parallel: 2, GroupSize: 250}
		found, done, err := m.Run(ctx, nodes)
		if err != nil || done != nodes || found != nodes {
			b.Fatalf("found %d done %d: %v", found, done, err)
		}
		migr = append(migr, time.Since(start).Seconds())
		b.StopTimer()

		st, err := storage.LoadPlacementState(ctx, placement)
		if err != nil {
			b.Fatal(err)
		}
		var ps []*storage.PProvider
		for _, p := range st.Providers {
			ps = append(ps, p)
		}
		var classes []string
		for _, p := range ps {
			for rc := range p.Inventories {
				classes = append(classes, rc)
			}
		}
		ids, err := storage.EnsurePlacementNames(ctx, floorDB, classes, []string{TraitComputeNode}, nil)
		if err != nil {
			b.Fatal(err)
		}
		start = time.Now()
		if err := storage.BulkLoadProviders(ctx, floorDB, ids, ps); err != nil {
			b.Fatal(err)
		}
		bulk = append(bulk, time.Since(start).Seconds())
		b.StartTimer()
	}
	med := func(v []float64) float64 { sort.Float64s(v); return v[len(v)/2] }
	m, f := med(migr), med(bulk)
	b.ReportMetric(nodes/m, "nodes/s")
	b.ReportMetric(m, "migrate_s")
	b.ReportMetric(f, "bulk_insert_s")
	b.ReportMetric(m/f, "ratio_to_bulk")
}
