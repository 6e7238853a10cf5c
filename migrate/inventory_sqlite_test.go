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

// TestComputeStatusDisabledSQLite: the root of a node whose nova-compute
// service is disabled gets COMPUTE_STATUS_DISABLED, as Nova's resource
// tracker (_sync_compute_service_disabled_trait) reports it; a re-run
// changes nothing, and once the service is enabled again the trait goes,
// with one generation bump.
func TestComputeStatusDisabledSQLite(t *testing.T) {
	ctx := context.Background()
	dbs, cloud := sqliteCloud(t, samplecloud.Options{Nodes: 6, Seed: 11})
	cfg := migrate.InventoryConfig{Layout: migrate.LayoutFlat, Ratios: config.DefaultOptions().Ratios, Reserved: config.Reserved{MemoryMB: 512}}
	run := func() *migrate.Inventory {
		m := &migrate.Inventory{Cells: cellStores(dbs.Cells...), Placement: placementStore(dbs.Placement), Config: cfg, Parallel: 1}
		if _, err := (&migrate.Runner{Migrations: []migrate.Migration{m}}).Run(ctx, 0, true); err != nil {
			t.Fatal(err)
		}
		return m
	}
	nodes, err := celldb.ListComputeNodes(ctx, dbs.Cells[0], false)
	if err != nil {
		t.Fatal(err)
	}
	nodes = slices.DeleteFunc(nodes, func(n nova.ComputeNode) bool { return slices.Contains(cloud.Kinds["bad"], n.ID) || n.Host == nil })
	host := *nodes[0].Host
	setDisabled := func(v int) {
		res, err := dbs.Cells[0].ExecContext(ctx, "UPDATE services SET disabled = ? WHERE host = ? AND `binary` = 'nova-compute' AND deleted = 0", v, host)
		if err != nil {
			t.Fatal(err)
		}
		if n, _ := res.RowsAffected(); n != 1 {
			t.Fatalf("%d nova-compute services on %s", n, host)
		}
	}
	setDisabled(1)
	run()
	st, err := placementdb.LoadPlacementState(ctx, dbs.Placement)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		p := st.Providers[st.ByName[*n.HypervisorHostname]]
		if p == nil {
			t.Fatalf("no provider for %s", *n.HypervisorHostname)
		}
		if want := *n.Host == host; p.Traits[migrate.TraitComputeStatusDisabled] != want || !p.Traits[migrate.TraitComputeNode] {
			t.Errorf("%s: traits %v, want COMPUTE_STATUS_DISABLED %v", p.Name, p.Traits, want)
		}
	}
	if m := run(); m.Pending() != 0 {
		t.Errorf("re-run: %d pending, want 0", m.Pending())
	}
	setDisabled(0)
	run()
	after, err := placementdb.LoadPlacementState(ctx, dbs.Placement)
	if err != nil {
		t.Fatal(err)
	}
	for u, b := range st.Providers {
		a := after.Providers[u]
		enabled := b.Traits[migrate.TraitComputeStatusDisabled]
		if a.Traits[migrate.TraitComputeStatusDisabled] || (a.Generation != b.Generation) != enabled || (enabled && a.Generation != b.Generation+1) {
			t.Errorf("%s after enabling: traits %v, generation %d -> %d", a.Name, a.Traits, b.Generation, a.Generation)
		}
	}
}

// TestPCIInPlacementSQLite: with [pci] report_in_placement, every live
// pci_devices row of a node (allocated ones too; not soft-deleted or
// removed ones) is counted on its device provider, a child of the node's
// root; a re-run writes nothing.
func TestPCIInPlacementSQLite(t *testing.T) {
	ctx := context.Background()
	dbs, cloud := sqliteCloud(t, samplecloud.Options{Nodes: 4, Seed: 3})
	nodes, err := celldb.ListComputeNodes(ctx, dbs.Cells[0], false)
	if err != nil {
		t.Fatal(err)
	}
	nodes = slices.DeleteFunc(nodes, func(n nova.ComputeNode) bool { return slices.Contains(cloud.Kinds["bad"], n.ID) })
	n := nodes[0]
	for i, d := range []struct {
		addr, typ, status, parent string
		deleted                   int
	}{
		{"0000:af:00.1", "type-PF", "unavailable", "", 0},
		{"0000:af:02.0", "type-VF", "allocated", "0000:af:00.1", 0},
		{"0000:af:02.1", "type-VF", "available", "0000:af:00.1", 0},
		{"0000:af:02.2", "type-VF", "removed", "0000:af:00.1", 0},
		{"0000:af:02.3", "type-VF", "available", "0000:af:00.1", 99},
	} {
		product := "154c"
		if d.typ == "type-PF" {
			product = "1572"
		}
		var parent any
		if d.parent != "" {
			parent = d.parent
		}
		if _, err := dbs.Cells[0].ExecContext(ctx, `INSERT INTO pci_devices (id, deleted, compute_node_id, address, vendor_id, product_id, dev_type, label, status, parent_addr)
			VALUES (?, ?, ?, ?, '8086', ?, ?, 'label_8086', ?, ?)`, i+1, d.deleted, n.ID, d.addr, product, d.typ, d.status, parent); err != nil {
			t.Fatal(err)
		}
	}
	pci, err := migrate.ParsePCIConfig(true, []string{`{"vendor_id": "8086", "product_id": "154c", "traits": "fast"}`})
	if err != nil {
		t.Fatal(err)
	}
	cfg := migrate.InventoryConfig{Layout: migrate.LayoutFlat, Ratios: config.DefaultOptions().Ratios, Reserved: config.Reserved{MemoryMB: 512}, PCI: pci}
	run := func() *migrate.Inventory {
		m := &migrate.Inventory{Cells: cellStores(dbs.Cells...), Placement: placementStore(dbs.Placement), Config: cfg, Parallel: 1}
		if _, err := (&migrate.Runner{Migrations: []migrate.Migration{m}}).Run(ctx, 0, true); err != nil {
			t.Fatal(err)
		}
		return m
	}
	run()
	st, err := placementdb.LoadPlacementState(ctx, dbs.Placement)
	if err != nil {
		t.Fatal(err)
	}
	name := *n.HypervisorHostname + "_0000:AF:00.1"
	p := st.Providers[st.ByName[name]]
	if p == nil {
		t.Fatalf("no provider %s", name)
	}
	root := st.Providers[st.ByName[*n.HypervisorHostname]]
	if p.ParentUUID != root.UUID || len(p.Inventories) != 1 || p.Inventories["CUSTOM_PCI_8086_154C"].Total != 2 || p.Inventories["CUSTOM_PCI_8086_154C"].MaxUnit != 2 ||
		!p.Traits[migrate.TraitManagedPCI] || !p.Traits["CUSTOM_FAST"] || len(p.Traits) != 2 {
		t.Errorf("%s: parent %s, inventories %+v, traits %v", name, p.ParentUUID, p.Inventories, p.Traits)
	}
	pciProviders := 0
	for _, q := range st.Providers {
		if q.Traits[migrate.TraitManagedPCI] {
			pciProviders++
		}
	}
	if pciProviders != 1 {
		t.Errorf("%d PCI providers, want 1", pciProviders)
	}
	if m := run(); m.Pending() != 0 {
		t.Errorf("re-run: %d pending, want 0", m.Pending())
	}

	// The PF's VFs are removed from the host: nova-compute deletes the
	// device provider, and so does a re-run, but not while an instance
	// still holds it.
	if _, err := dbs.Cells[0].ExecContext(ctx, `UPDATE pci_devices SET status = 'removed' WHERE compute_node_id = ? AND dev_type = 'type-VF'`, n.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := dbs.Placement.ExecContext(ctx, `INSERT INTO allocations (resource_provider_id, consumer_id, resource_class_id, used)
		SELECT p.id, 'c0a3f1a2-0000-4000-8000-000000000001', rc.id, 1 FROM resource_providers p, resource_classes rc WHERE p.uuid = ? AND rc.name = 'CUSTOM_PCI_8086_154C'`, p.UUID); err != nil {
		t.Fatal(err)
	}
	gone := func() bool {
		st, err := placementdb.LoadPlacementState(ctx, dbs.Placement)
		if err != nil {
			t.Fatal(err)
		}
		return st.ByName[name] == ""
	}
	if m := run(); m.Pending() != 0 || gone() {
		t.Errorf("with an allocation on the device provider: gone %v, %d pending", gone(), m.Pending())
	}
	if _, err := dbs.Placement.ExecContext(ctx, `DELETE FROM allocations WHERE consumer_id = 'c0a3f1a2-0000-4000-8000-000000000001'`); err != nil {
		t.Fatal(err)
	}
	run()
	if !gone() {
		t.Errorf("%s is still there once its devices are removed", name)
	}
	if m := run(); m.Pending() != 0 {
		t.Errorf("re-run after the removal: %d pending, want 0", m.Pending())
	}
}
