package placementdb

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/jmoiron/sqlx"

	"github.com/rpctl/rpctl/inventory"
	"github.com/rpctl/rpctl/migrate"
	"github.com/rpctl/rpctl/storage"
)

// switchSeed is node i before a layout switch: a flat root (VCPU,
// MEMORY_MB, DISK_GB, the disabled trait, a pool's aggregate) and a PCI
// device provider under it, with a consumer holding VCPU and MEMORY_MB on
// the root.
func switchSeed(i int, agg string) migrate.NodeWrite {
	inv := func(total int64, ratio float64) inventory.Inventory {
		return inventory.Inventory{Total: total, MinUnit: 1, MaxUnit: total, StepSize: 1, AllocationRatio: ratio}
	}
	root := migrate.ProviderWrite{UUID: scriptUUID(i * 10), Name: fmt.Sprintf("host%d", i), Create: true, Generation: 1,
		AddInventories: map[string]inventory.Inventory{"VCPU": inv(16, 4), "MEMORY_MB": inv(16384, 1.5), "DISK_GB": inv(100, 1)},
		AddTraits:      []string{migrate.TraitComputeNode, "COMPUTE_STATUS_DISABLED"}, AddAggregates: []string{agg}}
	dev := migrate.ProviderWrite{UUID: scriptUUID(i*10 + 5), Name: fmt.Sprintf("host%d_dev", i), ParentUUID: root.UUID, Create: true, Generation: 1,
		AddInventories: map[string]inventory.Inventory{"PCI_DEVICE": inv(1, 1)}}
	return migrate.NodeWrite{Providers: []migrate.ProviderWrite{root, dev}}
}

// switchConsumer is node i's consumer.
func switchConsumer(i int) string { return scriptUUID(100000 + i) }

// switchWrite is node i's switch to nested: two NUMA children take VCPU
// and MEMORY_MB (the consumer's allocations move to the first), the root
// updates DISK_GB, loses the disabled trait, gains another, leaves the
// pool, and the device provider is deleted. broken spoils one condition
// the write must check: 1 a stale generation, 2 an allocation no longer
// as planned, 3 a target without the room planned, 4 an inventory deleted
// while allocated (no moves).
func switchWrite(i, broken int, agg string) migrate.NodeWrite {
	inv := func(total int64, ratio float64) inventory.Inventory {
		return inventory.Inventory{Total: total, MinUnit: 1, MaxUnit: total, StepSize: 1, AllocationRatio: ratio}
	}
	root := migrate.ProviderWrite{UUID: scriptUUID(i * 10), Name: fmt.Sprintf("host%d", i), ExpectGeneration: 1, Generation: 2,
		UpdateInventories: map[string]inventory.Inventory{"DISK_GB": inv(90, 1)},
		DeleteInventories: []string{"MEMORY_MB", "VCPU"},
		RemoveTraits:      []string{"COMPUTE_STATUS_DISABLED"}, AddTraits: []string{"HW_CPU_X86_AVX2"},
		RemoveAggregates: []string{agg}}
	w := migrate.NodeWrite{Providers: []migrate.ProviderWrite{root}}
	for c := 0; c < 2; c++ {
		w.Providers = append(w.Providers, migrate.ProviderWrite{UUID: scriptUUID(i*10 + 1 + c), Name: fmt.Sprintf("host%d_NUMA%d", i, c), ParentUUID: root.UUID,
			Create: true, Generation: 1, AddInventories: map[string]inventory.Inventory{"VCPU": inv(8, 4), "MEMORY_MB": inv(8192, 1.5)}})
	}
	w.Providers = append(w.Providers, migrate.ProviderWrite{UUID: scriptUUID(i*10 + 5), Name: fmt.Sprintf("host%d_dev", i), ParentUUID: root.UUID,
		ExpectGeneration: 1, Generation: 2, Delete: true})
	numa0 := w.Providers[1].UUID
	w.Moves = []migrate.AllocationMove{
		{Consumer: switchConsumer(i), Class: "VCPU", From: root.UUID, To: numa0, Used: 2, Limit: 32},
		{Consumer: switchConsumer(i), Class: "MEMORY_MB", From: root.UUID, To: numa0, Used: 2048, Limit: 12288},
	}
	switch broken {
	case 1:
		w.Providers[0].ExpectGeneration = 0
	case 2:
		w.Moves[0].Used = 3
	case 3:
		w.Moves[1].Limit = 1024
	case 4:
		w.Moves = nil
	}
	return w
}

// TestUpdateScriptsLeaveTheRowsOfWriteGroup: layout switches written as
// scripts (updateScript, many per round trip) leave exactly the rows that
// writeGroup leaves writing the same nodes one statement at a time —
// providers and their generations, inventories, traits, aggregates,
// allocations, consumers' generations — and a node whose condition fails
// (a stale generation, a moved allocation that changed, a target without
// room, an allocated inventory deleted) gets writeGroup's error with
// nothing of it written, while the nodes around it in the same script are.
func TestUpdateScriptsLeaveTheRowsOfWriteGroup(t *testing.T) {
	ctx := context.Background()
	const agg = "5f2cd1a2-6a7e-4a8b-9c0d-000000000002"
	const n = 12
	broken := func(i int) int {
		if i >= 3 && i <= 6 {
			return i - 2
		}
		return 0
	}
	want := map[int]error{1: migrate.ErrGenerationConflict, 2: migrate.ErrGenerationConflict, 3: migrate.ErrGenerationConflict, 4: migrate.ErrInventoryInUse}
	var dumps [2][]string
	for k, script := range []bool{true, false} {
		db, ids := scriptPlacement(t, agg)
		var seeds []migrate.NodeWrite
		for i := 1; i <= n; i++ {
			seeds = append(seeds, switchSeed(i, agg))
		}
		for i, err := range WriteNodes(ctx, db, ids, seeds) {
			if err != nil {
				t.Fatalf("seed node %d: %v", i, err)
			}
		}
		for i := 1; i <= n; i++ {
			for _, q := range []string{
				fmt.Sprintf(`INSERT INTO consumers (uuid, project_id, user_id, generation, created_at) VALUES ('%s', 1, 1, 1, NOW())`, switchConsumer(i)),
				fmt.Sprintf(`INSERT INTO allocations (resource_provider_id, consumer_id, resource_class_id, used, created_at)
					SELECT rp.id, '%s', rc.id, CASE rc.name WHEN 'VCPU' THEN 2 ELSE 2048 END, NOW() FROM resource_providers rp JOIN resource_classes rc
					WHERE rp.uuid = '%s' AND rc.name IN ('VCPU', 'MEMORY_MB')`, switchConsumer(i), scriptUUID(i*10)),
			} {
				if _, err := db.ExecContext(ctx, q); err != nil {
					t.Fatal(err)
				}
			}
		}
		var nodes []migrate.NodeWrite
		for i := 1; i <= n; i++ {
			nodes = append(nodes, switchWrite(i, broken(i), agg))
		}
		errs := make([]error, len(nodes))
		if script {
			// The scripts alone first: each sound node is written by its
			// script, and each broken one stopped by its script's check.
			var idx []int
			var scripts [][]byte
			for i := range nodes {
				if _, ok := nodeScript(&nodes[i], ids, db.Now(), i, false); ok {
					t.Fatalf("node %d: nodeScript takes a layout switch", i+1)
				}
				s, ok := updateScript(&nodes[i], ids, db.Now(), i, false)
				if !ok {
					t.Fatalf("node %d: updateScript refuses it", i+1)
				}
				idx, scripts = append(idx, i), append(scripts, s)
			}
			if !writeScripts(ctx, db, nodes, idx, scripts, make([]string, len(scripts)), errs) {
				t.Fatal("no scripts on MariaDB")
			}
			var again []int
			for i, err := range errs {
				if broken(i+1) != 0 {
					if !errors.Is(err, errScriptCheck) {
						t.Errorf("node %d (broken %d): script error %v, want its check to stop it", i+1, broken(i+1), err)
					}
					again = append(again, i)
				} else if err != nil {
					t.Errorf("node %d: script error %v", i+1, err)
				}
			}
			// Then WriteNodes, as the migration calls it, on the broken
			// ones: its scripts stop again and writeGroup words the error.
			var rest []migrate.NodeWrite
			for _, i := range again {
				rest = append(rest, nodes[i])
			}
			for j, err := range WriteNodes(ctx, db, ids, rest) {
				errs[again[j]] = err
			}
		} else {
			for i := range nodes {
				errs[i] = markDuplicate(db.SessionTx(ctx, func(tx *sqlx.Tx) error { return writeGroup(ctx, db, tx, ids, nodes[i:i+1]) }))
			}
		}
		for i, err := range errs {
			w := want[broken(i+1)]
			if (w == nil) != (err == nil) || (w != nil && !errors.Is(err, w)) {
				t.Errorf("script=%v: node %d (broken %d): error %v, want %v", script, i+1, broken(i+1), err, w)
			}
		}
		dumps[k] = append(placementRows(t, db), switchRows(t, db)...)
		slices.Sort(dumps[k])
	}
	if len(dumps[0]) < 100 || !slices.Equal(dumps[0], dumps[1]) {
		t.Errorf("scripts left %d rows, writeGroup %d; first difference:\n%s", len(dumps[0]), len(dumps[1]), firstDiff(dumps[0], dumps[1]))
	}
}

// switchRows are the allocations and the consumers' generations.
func switchRows(t *testing.T, db *storage.DB) []string {
	t.Helper()
	var out []string
	for _, q := range []string{
		`SELECT CONCAT_WS(' ', 'alloc', a.consumer_id, p.uuid, c.name, a.used) FROM allocations a
			JOIN resource_providers p ON p.id = a.resource_provider_id JOIN resource_classes c ON c.id = a.resource_class_id`,
		`SELECT CONCAT_WS(' ', 'consumer', uuid, generation) FROM consumers`,
	} {
		var rows []string
		if err := db.SelectContext(context.Background(), &rows, q); err != nil {
			t.Fatal(err)
		}
		out = append(out, rows...)
	}
	return out
}
