package placementclient_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/internal/testdb"
	"github.com/rpctl/rpctl/inventory"
	"github.com/rpctl/rpctl/migrate"
	"github.com/rpctl/rpctl/placementclient"
)

// TestMigratePlacementWrites runs the inventory migration's store through
// the real placement-api: a node created whole at the generations the
// database path writes; an update at a stale generation refused as
// migrate.ErrGenerationConflict with nothing changed; an update that keeps
// what the plan does not manage (an operator's class, trait and
// aggregate); a node whose child cannot be created (its name taken) leaves
// nothing behind (the root it created is deleted again) and is
// migrate.ErrDuplicate; allocation moves refused as a layout switch.
func TestMigratePlacementWrites(t *testing.T) {
	if !testdb.MySQLWanted() {
		t.Skip("skipping: needs MariaDB (RPCTL_TEST_MYSQL) and python3-placement; run `make test`")
	}
	ctx := context.Background()
	c, _ := livePlacement(t, "")
	s := &placementclient.MigratePlacement{C: c}
	const (
		root  = "0a000000-0000-4000-8000-000000000001"
		child = "0a000000-0000-4000-8000-000000000002"
		root2 = "0a000000-0000-4000-8000-000000000003"
		agg   = "0a000000-0000-4000-8000-0000000000aa"
		other = "0a000000-0000-4000-8000-0000000000bb"
	)
	vcpu := inventory.Inventory{Total: 8, Reserved: 0, MinUnit: 1, MaxUnit: 8, StepSize: 1, AllocationRatio: 16}
	mem := inventory.Inventory{Total: 4096, Reserved: 512, MinUnit: 1, MaxUnit: 4096, StepSize: 1, AllocationRatio: 1.5}
	if _, err := s.EnsurePlacementNames(ctx, []string{"CUSTOM_SLOT"}, []string{"COMPUTE_NODE", "CUSTOM_RPCTL"}, []string{agg}); err != nil {
		t.Fatal(err)
	}
	write := func(w migrate.NodeWrite) error { return s.WriteNodes(ctx, nil, []migrate.NodeWrite{w})[0] }
	err := write(migrate.NodeWrite{Providers: []migrate.ProviderWrite{
		{UUID: root, Name: "cn1", Create: true, Generation: 3, AddInventories: map[string]inventory.Inventory{"VCPU": vcpu, "MEMORY_MB": mem},
			AddTraits: []string{"COMPUTE_NODE"}, AddAggregates: []string{agg}},
		{UUID: child, Name: "cn1_NUMA0", ParentUUID: root, Create: true, Generation: 2, AddInventories: map[string]inventory.Inventory{"CUSTOM_SLOT": vcpu},
			AddTraits: []string{"CUSTOM_RPCTL"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	st, err := s.LoadProviders(ctx, []string{root}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r, ch := st.Providers[root], st.Providers[child]
	if r == nil || ch == nil || r.Generation != 3 || ch.Generation != 2 || ch.ParentUUID != root || ch.RootUUID != root ||
		!r.Inventories["MEMORY_MB"].Equal(mem) || !r.Traits["COMPUTE_NODE"] || !r.Aggregates[agg] || !ch.Traits["CUSTOM_RPCTL"] {
		t.Fatalf("created tree: root %+v child %+v", r, ch)
	}

	// An operator's own class, trait and aggregate on the root.
	if _, err := c.EnsureResourceClass(ctx, "CUSTOM_OPERATOR"); err != nil {
		t.Fatal(err)
	}
	full := map[string]placementclient.Inventory{"VCPU": placementclient.Inventory(vcpu), "MEMORY_MB": placementclient.Inventory(mem),
		"CUSTOM_OPERATOR": {Total: 1, MinUnit: 1, MaxUnit: 1, StepSize: 1, AllocationRatio: 1}}
	if _, err := c.SetInventories(ctx, root, 3, full); err != nil {
		t.Fatal(err)
	}
	if _, err := c.SetProviderAggregates(ctx, root, 4, []string{agg, other}); err != nil {
		t.Fatal(err)
	}
	// The plan read generation 3: refused, nothing written.
	vcpu2 := vcpu
	vcpu2.AllocationRatio = 4
	stale := migrate.ProviderWrite{UUID: root, Name: "cn1", ExpectGeneration: 3, Generation: 4, UpdateInventories: map[string]inventory.Inventory{"VCPU": vcpu2}}
	if err := write(migrate.NodeWrite{Providers: []migrate.ProviderWrite{stale}}); !errors.Is(err, migrate.ErrGenerationConflict) {
		t.Fatalf("stale generation: %v, want a generation conflict", err)
	}
	if inv, _ := c.GetInventories(ctx, root); inv.Generation != 5 || inv.Inventories["VCPU"].AllocationRatio != 16 {
		t.Fatalf("a refused write changed the provider: %+v", inv)
	}
	// Re-planned at generation 5: the ratio, a removed managed class and a
	// trait; the operator's class, trait and aggregate stay.
	now := migrate.ProviderWrite{UUID: root, Name: "cn1", ExpectGeneration: 5, Generation: 7, UpdateInventories: map[string]inventory.Inventory{"VCPU": vcpu2},
		DeleteInventories: []string{"MEMORY_MB"}, AddTraits: []string{"CUSTOM_RPCTL"}}
	if err := write(migrate.NodeWrite{Providers: []migrate.ProviderWrite{now}}); err != nil {
		t.Fatal(err)
	}
	inv, _ := c.GetInventories(ctx, root)
	tr, _ := c.GetProviderTraits(ctx, root)
	ag, _ := c.GetProviderAggregates(ctx, root)
	if inv.Generation != 7 || inv.Inventories["VCPU"].AllocationRatio != 4 || len(inv.Inventories) != 2 || inv.Inventories["CUSTOM_OPERATOR"].Total != 1 ||
		!slices.Equal(tr.Traits, []string{"COMPUTE_NODE", "CUSTOM_RPCTL"}) || len(ag.Aggregates) != 2 {
		t.Fatalf("after the update: inventories %+v traits %v aggregates %v", inv, tr.Traits, ag.Aggregates)
	}

	// A second node whose child's name is taken: nothing of it stays.
	err = write(migrate.NodeWrite{Providers: []migrate.ProviderWrite{
		{UUID: root2, Name: "cn2", Create: true, Generation: 1, AddInventories: map[string]inventory.Inventory{"VCPU": vcpu}},
		{UUID: "0a000000-0000-4000-8000-000000000004", Name: "cn1_NUMA0", ParentUUID: root2, Create: true},
	}})
	if !errors.Is(err, migrate.ErrDuplicate) {
		t.Fatalf("taken child name: %v, want a duplicate", err)
	}
	if _, err := c.GetProvider(ctx, root2); !errors.Is(err, placementclient.ErrNotFound) {
		t.Errorf("the root a failed node write created is still there: %v", err)
	}

	// Moves need the database.
	err = write(migrate.NodeWrite{Providers: []migrate.ProviderWrite{now}, Moves: []migrate.AllocationMove{{Consumer: other, Class: "VCPU", From: root, To: child, Used: 1}}})
	if !errors.Is(err, migrate.ErrLayoutSwitch) || !strings.Contains(err.Error(), "placement.conf") {
		t.Errorf("moves through the API: %v", err)
	}
}
