package storage

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

// TestWriteNodesFallsBackPerNode: a value MariaDB refuses in one node of
// a group fails the group's transaction; each node is then written alone,
// the others land, and the refused one's error is ErrBadValue (its own
// data), not a failure of the database.
func TestWriteNodesFallsBackPerNode(t *testing.T) {
	ctx := context.Background()
	db := openMySQLPlacement(t)
	ids, err := EnsurePlacementNames(ctx, db, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	node := func(i int, total int64) NodeWrite {
		return NodeWrite{Providers: []ProviderWrite{{
			UUID: fmt.Sprintf("00000000-0000-4000-8000-%012d", i), Name: fmt.Sprintf("n%d", i), Create: true, Generation: 1,
			AddInventories: map[string]PInventory{"VCPU": {Total: total, MinUnit: 1, MaxUnit: 1, StepSize: 1, AllocationRatio: 1}},
		}}}
	}
	errs := WriteNodes(ctx, db, ids, []NodeWrite{node(1, 8), node(2, 1<<31), node(3, 8)})
	if errs[0] != nil || errs[2] != nil || !errors.Is(errs[1], ErrBadValue) {
		t.Fatalf("errors %v, want nil, ErrBadValue, nil", errs)
	}
	st, err := LoadPlacementState(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Providers) != 2 || st.ByName["n2"] != "" {
		t.Errorf("providers after the fallback: %v, want n1 and n3", st.ByName)
	}
}
