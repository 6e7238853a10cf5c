package placementdb

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/rpctl/rpctl/internal/placementtest"
	"github.com/rpctl/rpctl/inventory"
	"github.com/rpctl/rpctl/migrate"
	"github.com/rpctl/rpctl/storage"
)

// TestWriteNodesFallsBackPerNode: a value MariaDB refuses in one node of
// a group fails the group's transaction; each node is then written alone,
// the others land, and the refused one's error is migrate.ErrBadValue (its own
// data), not a failure of the database.
func TestWriteNodesFallsBackPerNode(t *testing.T) {
	ctx := context.Background()
	db := placementtest.MySQL(t)
	ids, err := EnsurePlacementNames(ctx, db, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	node := func(i int, total int64) migrate.NodeWrite {
		return migrate.NodeWrite{Providers: []migrate.ProviderWrite{{
			UUID: fmt.Sprintf("00000000-0000-4000-8000-%012d", i), Name: fmt.Sprintf("n%d", i), Create: true, Generation: 1,
			AddInventories: map[string]inventory.Inventory{"VCPU": {Total: total, MinUnit: 1, MaxUnit: 1, StepSize: 1, AllocationRatio: 1}},
		}}}
	}
	errs := WriteNodes(ctx, db, ids, []migrate.NodeWrite{node(1, 8), node(2, 1<<31), node(3, 8)})
	if errs[0] != nil || errs[2] != nil || !errors.Is(errs[1], migrate.ErrBadValue) {
		t.Fatalf("errors %v, want nil, migrate.ErrBadValue, nil", errs)
	}
	st, err := LoadPlacementState(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Providers) != 2 || st.ByName["n2"] != "" {
		t.Errorf("providers after the fallback: %v, want n1 and n3", st.ByName)
	}
}

// TestLoadProvidersByOddName: the re-plan lookup finds providers whose
// names hold quotes and backslashes (hypervisor_hostname is free text), on
// both engines, with their trees.
func TestLoadProvidersByOddName(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		open func(testing.TB) *storage.DB
	}{{"sqlite", placementtest.SQLite}, {"mysql", placementtest.MySQL}} {
		t.Run(tc.name, func(t *testing.T) {
			db := tc.open(t)
			ids, err := EnsurePlacementNames(ctx, db, nil, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			root := migrate.ProviderWrite{UUID: "00000000-0000-4000-8000-000000000001", Name: `rack\1 o'hara`, Create: true, Generation: 1,
				AddInventories: map[string]inventory.Inventory{"VCPU": {Total: 8, MinUnit: 1, MaxUnit: 8, StepSize: 1, AllocationRatio: 1.1}}}
			child := migrate.ProviderWrite{UUID: "00000000-0000-4000-8000-000000000002", Name: `rack\1 o'hara_NUMA0`, ParentUUID: root.UUID, Create: true}
			if errs := WriteNodes(ctx, db, ids, []migrate.NodeWrite{{Providers: []migrate.ProviderWrite{root, child}}}); errs[0] != nil {
				t.Fatal(errs[0])
			}
			for _, by := range []struct{ uuids, names []string }{{nil, []string{root.Name}}, {[]string{child.UUID}, nil}} {
				st, err := LoadProviders(ctx, db, by.uuids, by.names)
				if err != nil {
					t.Fatal(err)
				}
				r, c := st.Providers[root.UUID], st.Providers[child.UUID]
				if len(st.Providers) != 2 || r == nil || c == nil || st.ByName[root.Name] != root.UUID ||
					c.ParentUUID != root.UUID || r.Inventories["VCPU"].AllocationRatio != 1.1 {
					t.Errorf("LoadProviders(%q, %q) = %+v", by.uuids, by.names, st.Providers)
				}
			}
		})
	}
}
