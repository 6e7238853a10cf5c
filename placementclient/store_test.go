package placementclient_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/rpctl/rpctl/inventory"
	"github.com/rpctl/rpctl/placementclient"
)

// TestStoreErrorKinds: the API store answers with the inventory domain's
// error kinds, carrying Placement's status, code and message.
func TestStoreErrorKinds(t *testing.T) {
	ctx := context.Background()
	c, _ := livePlacement(t, "")
	s := placementclient.Store{C: c}
	root, err := s.CreateProvider(ctx, inventory.ProviderSpec{Name: "cn1", UUID: rootUUID})
	if err != nil || root.RootUUID != rootUUID || root.ParentUUID != "" {
		t.Fatalf("create %+v %v", root, err)
	}
	child, err := s.CreateProvider(ctx, inventory.ProviderSpec{Name: "numa", ParentUUID: rootUUID})
	if err != nil || child.ParentUUID != rootUUID {
		t.Fatalf("create child %+v %v", child, err)
	}
	vcpu := inventory.Inventory{Total: 8, MinUnit: 1, MaxUnit: 8, StepSize: 1, AllocationRatio: 1}
	gen, err := s.ReplaceInventories(ctx, rootUUID, 0, map[string]inventory.Inventory{"VCPU": vcpu, "DISK_GB": vcpu})
	if err != nil || gen != 1 {
		t.Fatalf("replace: %d %v", gen, err)
	}
	alloc := placementclient.Allocations{Allocations: map[string]placementclient.ProviderAllocations{rootUUID: {Resources: map[string]int64{"VCPU": 1}}},
		ProjectID: projectID, UserID: userID, ConsumerType: "INSTANCE"}
	if err := c.SetAllocations(ctx, consumer1, alloc); err != nil {
		t.Fatal(err)
	}
	created, err := s.CreateTrait(ctx, "CUSTOM_X")
	again, err2 := s.CreateTrait(ctx, "CUSTOM_X")
	if !created || again || err != nil || err2 != nil {
		t.Fatalf("trait created %v then %v (%v, %v)", created, again, err, err2)
	}
	created, err = s.CreateResourceClass(ctx, "CUSTOM_Y")
	again, err2 = s.CreateResourceClass(ctx, "CUSTOM_Y")
	if !created || again || err != nil || err2 != nil {
		t.Fatalf("class created %v then %v (%v, %v)", created, again, err, err2)
	}
	for _, tc := range []struct {
		name   string
		err    error
		kind   error
		status int
		code   string
	}{
		{"stale generation", func() error {
			_, err := s.ReplaceInventories(ctx, rootUUID, 0, map[string]inventory.Inventory{"VCPU": vcpu})
			return err
		}(), inventory.ErrGeneration, 409, inventory.CodeConcurrentUpdate},
		{"remove a class in use", func() error {
			_, err := s.ReplaceInventories(ctx, rootUUID, 2, map[string]inventory.Inventory{"DISK_GB": vcpu})
			return err
		}(), inventory.ErrInUse, 409, inventory.CodeInventoryInUse},
		{"duplicate name", func() error {
			_, err := s.CreateProvider(ctx, inventory.ProviderSpec{Name: "cn1"})
			return err
		}(), inventory.ErrConflict, 409, inventory.CodeDuplicateName},
		{"delete a parent", s.DeleteProvider(ctx, rootUUID), inventory.ErrInUse, 409, inventory.CodeCannotDeleteParent},
		{"unknown provider", func() error {
			_, err := s.GetProvider(ctx, consumer2)
			return err
		}(), inventory.ErrNotFound, 404, inventory.CodeDefault},
		{"unknown trait on a provider", func() error {
			_, err := s.SetProviderTraits(ctx, child.UUID, 0, []string{"CUSTOM_NOPE"})
			return err
		}(), inventory.ErrBadRequest, 400, inventory.CodeDefault},
		{"standard trait", s.DeleteTrait(ctx, "HW_CPU_X86_AVX2"), inventory.ErrBadRequest, 400, inventory.CodeDefault},
		{"trait filter", func() error {
			_, err := s.ListTraits(ctx, inventory.TraitFilter{Name: "CUSTOM_X"})
			return err
		}(), inventory.ErrBadRequest, 400, inventory.CodeDefault},
	} {
		var ie *inventory.Error
		if !errors.Is(tc.err, tc.kind) || !errors.As(tc.err, &ie) || ie.Status != tc.status || ie.Code != tc.code || ie.Message == "" {
			t.Errorf("%s: %#v, want kind %v status %d code %s", tc.name, tc.err, tc.kind, tc.status, tc.code)
		}
	}
	gen, u, err := s.Usages(ctx, rootUUID)
	if err != nil || u["VCPU"] != 1 || gen != 2 {
		t.Fatalf("usages %d %v %v", gen, u, err)
	}
	_, allocs, err := s.ProviderAllocations(ctx, rootUUID)
	if err != nil || len(allocs) != 1 || allocs[0].Consumer != consumer1 || allocs[0].Generation == nil ||
		!slices.Equal(allocs[0].Resources, []inventory.ClassAmount{{Class: "VCPU", Amount: 1}}) {
		t.Fatalf("allocations %+v %v", allocs, err)
	}
}
