package placementdb

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/rpctl/rpctl/inventory"
	"github.com/rpctl/rpctl/migrate"
)

// TestReplaceInventoriesBatchAsOneByOne (issue 35): inventories replaced
// in scripts leave exactly the rows and generations ReplaceInventories
// leaves one provider at a time (fields changed, classes added); a write
// decided at a stale generation fails as a conflict with nothing of it
// written and stops the batch; one that removes a class is left to
// ReplaceInventories (its in-use check), with those before it written.
func TestReplaceInventoriesBatchAsOneByOne(t *testing.T) {
	ctx := context.Background()
	var nodes []migrate.NodeWrite
	for i := 1; i <= 25; i++ {
		nodes = append(nodes, scriptNode(i, fmt.Sprintf("host%d", i), i%2, ""))
	}
	plan := func(s *Store) []inventory.InventoryReplace {
		var ws []inventory.InventoryReplace
		for i, n := range nodes {
			for _, p := range n.Providers {
				gen, cur, err := s.Inventories(ctx, p.UUID)
				if err != nil {
					t.Fatal(err)
				}
				want := maps.Clone(cur)
				v := want["VCPU"]
				v.Reserved, v.AllocationRatio = int64(i%3), 1.25+float64(i)
				want["VCPU"] = v
				if i%4 == 0 {
					want["MEMORY_MB"] = inventory.Inventory{Total: 4096, Reserved: 0, MinUnit: 1, MaxUnit: 4096, StepSize: 1, AllocationRatio: 1}
				}
				ws = append(ws, inventory.InventoryReplace{UUID: p.UUID, Generation: gen, Want: want})
			}
		}
		return ws
	}
	var dumps [2][]string
	for k, batch := range []bool{true, false} {
		db, ids := scriptPlacement(t)
		if errs := WriteNodes(ctx, db, ids, nodes); errors.Join(errs...) != nil {
			t.Fatal(errors.Join(errs...))
		}
		// Some providers have no MEMORY_MB yet: it is added.
		if _, err := db.ExecContext(ctx, "DELETE FROM inventories WHERE resource_class_id = (SELECT id FROM resource_classes WHERE name = 'MEMORY_MB') AND resource_provider_id % 3 = 0"); err != nil {
			t.Fatal(err)
		}
		s := New(db)
		ws := plan(s)
		if batch {
			if done, err := s.ReplaceInventoriesBatch(ctx, ws); err != nil || done != len(ws) {
				t.Fatalf("batch: %d of %d written: %v", done, len(ws), err)
			}
		} else {
			for _, w := range ws {
				if _, err := s.ReplaceInventories(ctx, w.UUID, w.Generation, w.Want); err != nil {
					t.Fatal(err)
				}
			}
		}
		dumps[k] = append(placementRows(t, db), aggregateRows(t, db)...)
		slices.Sort(dumps[k])
	}
	if len(dumps[0]) < 100 || !slices.Equal(dumps[0], dumps[1]) {
		t.Errorf("batch left %d rows, one by one %d; first difference:\n%s", len(dumps[0]), len(dumps[1]), firstDiff(dumps[0], dumps[1]))
	}

	db, ids := scriptPlacement(t)
	three := nodes[:3]
	if errs := WriteNodes(ctx, db, ids, three); errors.Join(errs...) != nil {
		t.Fatal(errors.Join(errs...))
	}
	s := New(db)
	write := func(i int, gen int64, drop bool) inventory.InventoryReplace {
		u := three[i].Providers[0].UUID
		_, cur, _ := s.Inventories(ctx, u)
		v := cur["VCPU"]
		v.Reserved = 3
		cur["VCPU"] = v
		if drop {
			delete(cur, "MEMORY_MB")
		}
		return inventory.InventoryReplace{UUID: u, Generation: gen, Want: cur}
	}
	before := placementRows(t, db)
	if done, err := s.ReplaceInventoriesBatch(ctx, []inventory.InventoryReplace{write(0, 1, false), write(1, 9, false), write(2, 1, false)}); done != 1 || !errors.Is(err, inventory.ErrGeneration) {
		t.Errorf("stale generation: %d written, %v; want 1 and a generation conflict", done, err)
	}
	if done, err := s.ReplaceInventoriesBatch(ctx, []inventory.InventoryReplace{write(1, 1, false), write(2, 1, true)}); done != 1 || err == nil {
		t.Errorf("a class removed: %d written, %v; want 1 and the write left to ReplaceInventories", done, err)
	}
	after := placementRows(t, db)
	changed := 0
	for _, r := range after {
		if !slices.Contains(before, r) {
			changed++
		}
	}
	// Providers 1 and 2: the VCPU row and the generation each.
	if changed != 4 {
		t.Errorf("%d rows changed, want 4:\n%s", changed, firstDiff(before, after))
	}
}
