package migrate_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/rpctl/rpctl/internal/config"
	"github.com/rpctl/rpctl/internal/nova"
	"github.com/rpctl/rpctl/migrate"
	"github.com/rpctl/rpctl/samplecloud"
	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/celldb"
	"github.com/rpctl/rpctl/storage/placementdb"
	"github.com/rpctl/rpctl/storage/schema"
	"github.com/rpctl/rpctl/storage/stores"
)

// TestInventorySQLite runs the migration on the embedded file: the same
// transactions as on MariaDB, a no-op re-run, and a capacity change that
// rewrites only the changed inventory and bumps the generation once.
func TestInventorySQLite(t *testing.T) {
	ctx := context.Background()
	dbs, cloud := sqliteCloud(t, samplecloud.Options{Nodes: 30, Seed: 5, BadRows: 3})
	cfg := migrate.InventoryConfig{Layout: migrate.LayoutNested, Ratios: config.DefaultOptions().Ratios, Reserved: config.Reserved{MemoryMB: 512}}
	run := func(maxCount int) (migrate.Summary, *migrate.Inventory) {
		m := &migrate.Inventory{Cells: cellStores(dbs.Cells...), Placement: placementStore(dbs.Placement), Config: cfg, Parallel: 4}
		sum, err := (&migrate.Runner{Migrations: []migrate.Migration{m}}).Run(ctx, maxCount, maxCount == 0)
		if err != nil {
			t.Fatal(err)
		}
		return sum, m
	}
	// --max-count 10: one batch, exit 1 (more remain).
	if sum, _ := run(10); sum.Exit != 1 || sum.Rows[0].Completed != 10 {
		t.Fatalf("--max-count 10: %+v", sum)
	}
	sum, _ := run(0)
	if sum.Exit != 2 || len(sum.RowErrors) != 3 || sum.Rows[0].Completed != 20 {
		t.Fatalf("full run: %+v (%v)", sum, sum.RowErrors)
	}
	nodes, err := celldb.ListComputeNodes(ctx, dbs.Cells[0], false)
	if err != nil {
		t.Fatal(err)
	}
	nodes = slices.DeleteFunc(nodes, func(n nova.ComputeNode) bool { return slices.Contains(cloud.Kinds["bad"], n.ID) })
	for _, n := range nodes {
		if n.UUID == nil {
			t.Fatalf("node %d has no uuid after the migration", n.ID)
		}
	}
	before, err := placementdb.LoadPlacementState(ctx, dbs.Placement)
	if err != nil {
		t.Fatal(err)
	}
	if _, m := run(0); m.Pending() != 3 {
		t.Fatalf("re-run found %d, want the 3 bad rows only", m.Pending())
	}
	// Grow one node's disk: only its root's DISK_GB changes, generation +1.
	n := nodes[0]
	n.LocalGB += 100
	if _, err := dbs.Cells[0].ExecContext(ctx, `UPDATE compute_nodes SET local_gb = ? WHERE id = ?`, n.LocalGB, n.ID); err != nil {
		t.Fatal(err)
	}
	if _, m := run(0); m.Pending() != 4 {
		t.Fatalf("after a capacity change: %d pending, want 1 + 3 bad", m.Pending())
	}
	after, err := placementdb.LoadPlacementState(ctx, dbs.Placement)
	if err != nil {
		t.Fatal(err)
	}
	for u, b := range before.Providers {
		a := after.Providers[u]
		changed := u == *n.UUID
		if (a.Generation != b.Generation) != changed || (changed && a.Generation != b.Generation+1) {
			t.Errorf("%s: generation %d -> %d", b.Name, b.Generation, a.Generation)
		}
		for rc, v := range b.Inventories {
			if want := changed && rc == "DISK_GB"; v.Equal(a.Inventories[rc]) == want {
				t.Errorf("%s %s: %+v -> %+v", b.Name, rc, v, a.Inventories[rc])
			}
		}
	}
	if after.Providers[*n.UUID].Inventories["DISK_GB"].Total != n.LocalGB {
		t.Errorf("DISK_GB not updated")
	}
}

// sqliteCloud writes a generated cloud into a fresh embedded file.
func sqliteCloud(t *testing.T, o samplecloud.Options) (*storage.Databases, *samplecloud.Cloud) {
	t.Helper()
	ctx := context.Background()
	dbs, err := storage.Connect(ctx, storage.Sources{Embedded: filepath.Join(t.TempDir(), "cloud.db")}, storage.NeedCells|storage.NeedPlacement, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dbs.Close() })
	if _, err := schema.Init(ctx, dbs.Cells[0], schema.PartCell, schema.PartAPI, schema.PartPlacement); err != nil {
		t.Fatal(err)
	}
	cloud := samplecloud.Generate(o)
	if _, err := samplecloud.Write(ctx, stores.SampleTarget(dbs), cloud, samplecloud.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	return dbs, cloud
}
