package placementclient_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/placementclient"
)

const (
	rootUUID  = "5f6a8a62-1f1b-4c55-9a2e-6e1d3c9a0001"
	childUUID = "5f6a8a62-1f1b-4c55-9a2e-6e1d3c9a0002"
	aggUUID   = "0a9e5e0c-3b8a-4a8e-8f3c-aaaaaaaaaaa1"
	consumer1 = "c0c0c0c0-0000-4000-8000-000000000001"
	consumer2 = "c0c0c0c0-0000-4000-8000-000000000002"
	projectID = "6b1e6c1a2f7b4c1d9b0e4f3a2d1c0b9a"
	userID    = "9a8b7c6d5e4f4a3b2c1d0e9f8a7b6c5d"
)

// wantErr checks err against a sentinel (nil: no error) and, for a
// Placement error, that Placement's own message came through.
func wantErr(t *testing.T, what string, err, want error, msgPart string) {
	t.Helper()
	if want == nil {
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return
	}
	if !errors.Is(err, want) {
		t.Fatalf("%s: got %v, want %v", what, err, want)
	}
	var pe *placementclient.Error
	if !errors.As(err, &pe) {
		t.Fatalf("%s: %T is not a *placementclient.Error", what, err)
	}
	if !strings.Contains(pe.Message, msgPart) {
		t.Fatalf("%s: message %q does not contain Placement's %q", what, pe.Message, msgPart)
	}
}

// TestClientAgainstPlacement drives every call of the client against the
// real placement-api, including each 400, 404 and 409 answer.
func TestClientAgainstPlacement(t *testing.T) {
	ctx := context.Background()
	c, _ := livePlacement(t, "")
	if got := c.Microversion().String(); got != "1.39" {
		t.Fatalf("negotiated %s, want 1.39 (Placement 8.0.0's maximum and ours)", got)
	}
	if lo, hi := c.ServerRange(); lo.String() != "1.0" || hi.String() != "1.39" {
		t.Fatalf("server range %s–%s", lo, hi)
	}

	// Providers.
	root, err := c.CreateProvider(ctx, placementclient.NewProvider{Name: "cn1", UUID: rootUUID})
	wantErr(t, "create root", err, nil, "")
	if root.UUID != rootUUID || root.Generation != 0 || root.RootProviderUUID != rootUUID || root.ParentProviderUUID != nil {
		t.Fatalf("created %+v", root)
	}
	child, err := c.CreateProvider(ctx, placementclient.NewProvider{Name: "cn1_numa0", UUID: childUUID, ParentProviderUUID: rootUUID})
	wantErr(t, "create child", err, nil, "")
	if child.ParentProviderUUID == nil || *child.ParentProviderUUID != rootUUID || child.RootProviderUUID != rootUUID {
		t.Fatalf("child %+v", child)
	}
	generated, err := c.CreateProvider(ctx, placementclient.NewProvider{Name: "other"})
	wantErr(t, "create with generated uuid", err, nil, "")
	_, err = c.CreateProvider(ctx, placementclient.NewProvider{Name: "cn1"})
	wantErr(t, "duplicate name", err, placementclient.ErrConflict, "Conflicting resource provider name: cn1 already exists")
	_, err = c.CreateProvider(ctx, placementclient.NewProvider{Name: "x", UUID: "not-a-uuid"})
	wantErr(t, "bad uuid", err, placementclient.ErrBadRequest, "JSON does not validate: 'not-a-uuid' is not a 'uuid'")
	if pe := (*placementclient.Error)(nil); errors.As(err, &pe) && strings.Contains(pe.Message, "Failed validating") {
		t.Fatalf("the schema dump is not part of the message: %q", pe.Message)
	}
	_, err = c.CreateProvider(ctx, placementclient.NewProvider{Name: "y", ParentProviderUUID: "11111111-1111-4111-8111-111111111111"})
	wantErr(t, "unknown parent", err, placementclient.ErrBadRequest, "parent provider UUID does not exist")

	got, err := c.GetProvider(ctx, childUUID)
	wantErr(t, "show", err, nil, "")
	if got.Name != "cn1_numa0" {
		t.Fatalf("show %+v", got)
	}
	_, err = c.GetProvider(ctx, "11111111-1111-4111-8111-111111111111")
	wantErr(t, "show unknown", err, placementclient.ErrNotFound, "No resource provider with uuid 11111111-1111-4111-8111-111111111111 found")

	upd, err := c.UpdateProvider(ctx, generated.UUID, "renamed", nil)
	wantErr(t, "rename", err, nil, "")
	if upd.Name != "renamed" || upd.Generation != 0 { // Placement does not bump the generation on a rename
		t.Fatalf("renamed %+v", upd)
	}
	_, err = c.UpdateProvider(ctx, generated.UUID, "cn1", nil)
	wantErr(t, "rename to a taken name", err, placementclient.ErrConflict, "Conflicting resource provider cn1 already exists")
	_, err = c.UpdateProvider(ctx, generated.UUID, strings.Repeat("n", 201), nil)
	wantErr(t, "rename too long", err, placementclient.ErrBadRequest, "JSON does not validate")

	// Inventories.
	invs, err := c.GetInventories(ctx, rootUUID)
	wantErr(t, "empty inventories", err, nil, "")
	if len(invs.Inventories) != 0 || invs.Generation != 0 {
		t.Fatalf("inventories %+v", invs)
	}
	vcpu := placementclient.Inventory{Total: 16, Reserved: 0, MinUnit: 1, MaxUnit: 16, StepSize: 1, AllocationRatio: 4}
	mem := placementclient.Inventory{Total: 32768, Reserved: 512, MinUnit: 1, MaxUnit: 32768, StepSize: 1, AllocationRatio: 1.5}
	invs, err = c.SetInventories(ctx, rootUUID, 0, map[string]placementclient.Inventory{"VCPU": vcpu, "MEMORY_MB": mem})
	wantErr(t, "set inventories", err, nil, "")
	if invs.Generation != 1 || invs.Inventories["MEMORY_MB"] != mem {
		t.Fatalf("after PUT: %+v", invs)
	}
	_, err = c.SetInventories(ctx, rootUUID, 0, map[string]placementclient.Inventory{"VCPU": vcpu})
	wantErr(t, "stale generation", err, placementclient.ErrGenerationConflict, "resource provider generation conflict")
	bad := vcpu
	bad.Total = 0
	_, err = c.SetInventory(ctx, rootUUID, "VCPU", 1, bad)
	wantErr(t, "total 0", err, placementclient.ErrBadRequest, "JSON does not validate")
	bad = vcpu
	bad.Reserved = 17
	_, err = c.SetInventories(ctx, rootUUID, 1, map[string]placementclient.Inventory{"VCPU": bad})
	wantErr(t, "reserved > total", err, placementclient.ErrBadRequest, "")
	_, err = c.SetInventory(ctx, rootUUID, "NO_SUCH_CLASS", 1, vcpu)
	wantErr(t, "unknown class", err, placementclient.ErrNotFound, "No such resource class NO_SUCH_CLASS")
	// PUT of one class only replaces: Placement answers 400 for a class
	// the provider lacks, and creating one is a POST.
	disk := placementclient.Inventory{Total: 100, MinUnit: 1, MaxUnit: 100, StepSize: 1, AllocationRatio: 1}
	_, err = c.SetInventory(ctx, rootUUID, "DISK_GB", 1, disk)
	wantErr(t, "put a class the provider lacks", err, placementclient.ErrBadRequest, "No inventory of class DISK_GB found")
	one, err := c.CreateInventory(ctx, rootUUID, "DISK_GB", disk)
	wantErr(t, "create one inventory", err, nil, "")
	if one.Total != disk.Total || one.Generation != 2 {
		t.Fatalf("created %+v", one)
	}
	_, err = c.CreateInventory(ctx, rootUUID, "DISK_GB", disk)
	wantErr(t, "create an existing class", err, placementclient.ErrConflict, "Update conflict")
	// Placement 8.0.0 checks reserved against total, not min_unit against
	// max_unit: it stores min_unit 8 > max_unit 4.
	odd := vcpu
	odd.MinUnit, odd.MaxUnit = 8, 4
	_, err = c.SetInventory(ctx, rootUUID, "VCPU", 2, odd)
	wantErr(t, "min_unit > max_unit", err, nil, "")
	one, err = c.SetInventory(ctx, rootUUID, "VCPU", 3, vcpu)
	wantErr(t, "set one inventory", err, nil, "")
	if one.Generation != 4 {
		t.Fatalf("one %+v", one)
	}
	_, err = c.SetInventory(ctx, rootUUID, "DISK_GB", 1, placementclient.Inventory{Total: 200, MinUnit: 1, MaxUnit: 100, StepSize: 1, AllocationRatio: 1})
	wantErr(t, "stale one", err, placementclient.ErrGenerationConflict, "resource provider generation conflict")
	gotOne, err := c.GetInventory(ctx, rootUUID, "MEMORY_MB")
	wantErr(t, "get one", err, nil, "")
	if gotOne.Inventory != mem || gotOne.Generation != 4 {
		t.Fatalf("get one %+v", gotOne)
	}
	_, err = c.GetInventory(ctx, rootUUID, "VGPU")
	wantErr(t, "get missing class", err, placementclient.ErrNotFound, "No inventory of class VGPU for ")
	_, err = c.GetInventories(ctx, "11111111-1111-4111-8111-111111111111")
	wantErr(t, "inventories of unknown provider", err, placementclient.ErrNotFound, "No resource provider with uuid")
	wantErr(t, "delete one", c.DeleteInventory(ctx, rootUUID, "DISK_GB"), nil, "")
	wantErr(t, "delete missing one", c.DeleteInventory(ctx, rootUUID, "DISK_GB"), placementclient.ErrNotFound, "No inventory of class DISK_GB found for delete")
	_, err = c.SetInventories(ctx, childUUID, 0, map[string]placementclient.Inventory{"VCPU": vcpu})
	wantErr(t, "child inventory", err, nil, "")

	// Allocations and usages.
	gen0 := (*int64)(nil)
	alloc := placementclient.Allocations{
		Allocations: map[string]placementclient.ProviderAllocations{
			rootUUID: {Resources: map[string]int64{"VCPU": 2, "MEMORY_MB": 1024}},
		},
		ProjectID: projectID, UserID: userID, ConsumerGeneration: gen0, ConsumerType: "INSTANCE",
	}
	wantErr(t, "put allocations", c.SetAllocations(ctx, consumer1, alloc), nil, "")
	wantErr(t, "put allocations again as new", c.SetAllocations(ctx, consumer1, alloc), placementclient.ErrGenerationConflict, "consumer generation conflict")
	a, err := c.GetAllocations(ctx, consumer1)
	wantErr(t, "get allocations", err, nil, "")
	if a.ConsumerGeneration == nil || *a.ConsumerGeneration != 1 || a.Allocations[rootUUID].Resources["VCPU"] != 2 || a.ConsumerType != "INSTANCE" {
		t.Fatalf("allocations %+v", a)
	}
	over := alloc
	over.Allocations = map[string]placementclient.ProviderAllocations{childUUID: {Resources: map[string]int64{"VCPU": 1000}}}
	wantErr(t, "over capacity", c.SetAllocations(ctx, consumer2, over), placementclient.ErrConflict, "Unable to allocate inventory")
	post := alloc
	post.Allocations = map[string]placementclient.ProviderAllocations{childUUID: {Resources: map[string]int64{"VCPU": 3}}}
	wantErr(t, "post allocations", c.PostAllocations(ctx, map[string]placementclient.Allocations{consumer2: post}), nil, "")
	pa, err := c.GetProviderAllocations(ctx, childUUID)
	wantErr(t, "provider allocations", err, nil, "")
	if pa.Allocations[consumer2].Resources["VCPU"] != 3 {
		t.Fatalf("provider allocations %+v", pa)
	}
	u, err := c.GetProviderUsages(ctx, rootUUID)
	wantErr(t, "provider usages", err, nil, "")
	if u.Usages["VCPU"] != 2 || u.Usages["MEMORY_MB"] != 1024 {
		t.Fatalf("usages %+v", u)
	}
	pu, err := c.ProjectUsages(ctx, projectID, "")
	wantErr(t, "project usages", err, nil, "")
	var byType map[string]map[string]int64
	if err := json.Unmarshal(pu, &byType); err != nil || byType["INSTANCE"]["VCPU"] != 5 {
		t.Fatalf("project usages %s (%v)", pu, err)
	}
	wantErr(t, "delete class in use", c.DeleteInventory(ctx, rootUUID, "VCPU"), placementclient.ErrInventoryInUse, "")
	cur, _ := c.GetInventories(ctx, rootUUID)
	_, err = c.SetInventories(ctx, rootUUID, cur.Generation, map[string]placementclient.Inventory{"MEMORY_MB": mem})
	wantErr(t, "replace dropping a class in use", err, placementclient.ErrInventoryInUse, "")
	wantErr(t, "delete all in use", c.DeleteInventories(ctx, rootUUID), placementclient.ErrInventoryInUse, "")
	wantErr(t, "delete provider with allocations", c.DeleteProvider(ctx, childUUID), placementclient.ErrConflict, "Unable to delete resource provider")

	// Allocation candidates.
	body, err := c.AllocationCandidates(ctx, "resources=VCPU:1&limit=5")
	wantErr(t, "allocation candidates", err, nil, "")
	var ac struct {
		AllocationRequests []json.RawMessage `json:"allocation_requests"`
	}
	if err := json.Unmarshal(body, &ac); err != nil || len(ac.AllocationRequests) != 2 {
		t.Fatalf("candidates %s (%v)", body, err)
	}
	_, err = c.AllocationCandidates(ctx, "resources=VCPU:x")
	wantErr(t, "bad candidates query", err, placementclient.ErrBadRequest, "expected positive integer amount")

	// Traits.
	created, err := c.EnsureTrait(ctx, "CUSTOM_GOLD")
	wantErr(t, "create trait", err, nil, "")
	again, err := c.EnsureTrait(ctx, "CUSTOM_GOLD")
	wantErr(t, "create trait twice", err, nil, "")
	if !created || again {
		t.Fatalf("trait created %v, then %v", created, again)
	}
	wantErr(t, "create non-custom trait", c.CreateTrait(ctx, "GOLD"), placementclient.ErrBadRequest, "The trait is invalid")
	traits, err := c.ListTraits(ctx, "startswith:CUSTOM_", nil)
	wantErr(t, "list traits", err, nil, "")
	if !slices.Equal(traits, []string{"CUSTOM_GOLD"}) {
		t.Fatalf("traits %v", traits)
	}
	_, err = c.ListTraits(ctx, "CUSTOM_GOLD", nil)
	wantErr(t, "bad trait filter", err, placementclient.ErrBadRequest, "Badly formatted name parameter")
	_, err = c.SetProviderTraits(ctx, rootUUID, 0, []string{"CUSTOM_GOLD", "HW_CPU_X86_AVX2"})
	wantErr(t, "stale provider traits", err, placementclient.ErrGenerationConflict, "generation already changed")
	cur, _ = c.GetInventories(ctx, rootUUID)
	pt, err := c.SetProviderTraits(ctx, rootUUID, cur.Generation, []string{"CUSTOM_GOLD", "HW_CPU_X86_AVX2"})
	wantErr(t, "provider traits", err, nil, "")
	pt2, err := c.GetProviderTraits(ctx, rootUUID)
	wantErr(t, "get provider traits", err, nil, "")
	slices.Sort(pt2.Traits)
	if !slices.Equal(pt2.Traits, []string{"CUSTOM_GOLD", "HW_CPU_X86_AVX2"}) || pt2.Generation != pt.Generation {
		t.Fatalf("provider traits %+v vs %+v", pt2, pt)
	}
	_, err = c.SetProviderTraits(ctx, rootUUID, pt.Generation, []string{"CUSTOM_NOPE"})
	wantErr(t, "unknown trait", err, placementclient.ErrBadRequest, "No such trait CUSTOM_NOPE")
	assoc := true
	traits, err = c.ListTraits(ctx, "in:CUSTOM_GOLD,HW_CPU_X86_SSE", &assoc)
	wantErr(t, "associated traits", err, nil, "")
	if !slices.Equal(traits, []string{"CUSTOM_GOLD"}) {
		t.Fatalf("associated %v", traits)
	}
	wantErr(t, "delete trait in use", c.DeleteTrait(ctx, "CUSTOM_GOLD"), placementclient.ErrConflict, "The trait CUSTOM_GOLD is in use by a resource provider")
	wantErr(t, "delete standard trait", c.DeleteTrait(ctx, "HW_CPU_X86_AVX2"), placementclient.ErrBadRequest, "Cannot delete standard trait")
	wantErr(t, "delete provider traits", c.DeleteProviderTraits(ctx, rootUUID), nil, "")
	wantErr(t, "delete trait", c.DeleteTrait(ctx, "CUSTOM_GOLD"), nil, "")
	wantErr(t, "delete missing trait", c.DeleteTrait(ctx, "CUSTOM_GOLD"), placementclient.ErrNotFound, "No such trait(s): CUSTOM_GOLD")

	// Resource classes.
	created, err = c.EnsureResourceClass(ctx, "CUSTOM_FPGA")
	wantErr(t, "create class", err, nil, "")
	wantErr(t, "create class twice", c.CreateResourceClass(ctx, "CUSTOM_FPGA"), nil, "")
	if !created {
		t.Fatal("class not reported created")
	}
	wantErr(t, "create non-custom class", c.CreateResourceClass(ctx, "FPGA"), placementclient.ErrBadRequest, "")
	classes, err := c.ListResourceClasses(ctx)
	wantErr(t, "list classes", err, nil, "")
	if !slices.Contains(classes, "CUSTOM_FPGA") || !slices.Contains(classes, "VCPU") {
		t.Fatalf("classes %v", classes)
	}
	wantErr(t, "get class", c.GetResourceClass(ctx, "CUSTOM_FPGA"), nil, "")
	wantErr(t, "get missing class", c.GetResourceClass(ctx, "CUSTOM_NONE"), placementclient.ErrNotFound, "No such resource class CUSTOM_NONE")
	_, err = c.CreateInventory(ctx, childUUID, "CUSTOM_FPGA", placementclient.Inventory{Total: 2, MinUnit: 1, MaxUnit: 2, StepSize: 1, AllocationRatio: 1})
	wantErr(t, "custom inventory", err, nil, "")
	wantErr(t, "delete class in use", c.DeleteResourceClass(ctx, "CUSTOM_FPGA"), placementclient.ErrConflict, "Cannot delete resource class CUSTOM_FPGA. Class is in use in inventory.")
	wantErr(t, "delete standard class", c.DeleteResourceClass(ctx, "VCPU"), placementclient.ErrBadRequest, "Cannot delete standard resource class VCPU")

	// Aggregates.
	ag, err := c.GetProviderAggregates(ctx, rootUUID)
	wantErr(t, "get aggregates", err, nil, "")
	ag2, err := c.SetProviderAggregates(ctx, rootUUID, ag.Generation, []string{aggUUID})
	wantErr(t, "set aggregates", err, nil, "")
	if ag2.Generation != ag.Generation+1 || !slices.Equal(ag2.Aggregates, []string{aggUUID}) {
		t.Fatalf("aggregates %+v", ag2)
	}
	_, err = c.SetProviderAggregates(ctx, rootUUID, ag.Generation, nil)
	wantErr(t, "stale aggregates", err, placementclient.ErrGenerationConflict, "generation already changed")
	_, err = c.SetProviderAggregates(ctx, rootUUID, ag2.Generation, []string{"nope"})
	wantErr(t, "bad aggregate", err, placementclient.ErrBadRequest, "JSON does not validate")

	// Provider list filters.
	list := func(f placementclient.ProviderFilter) []string {
		t.Helper()
		ps, err := c.ListProviders(ctx, f)
		if err != nil {
			t.Fatalf("list %+v: %v", f, err)
		}
		var names []string
		for _, p := range ps {
			names = append(names, p.Name)
		}
		slices.Sort(names)
		return names
	}
	for _, tc := range []struct {
		f    placementclient.ProviderFilter
		want []string
	}{
		{placementclient.ProviderFilter{}, []string{"cn1", "cn1_numa0", "renamed"}},
		{placementclient.ProviderFilter{Name: "cn1"}, []string{"cn1"}},
		{placementclient.ProviderFilter{UUID: childUUID}, []string{"cn1_numa0"}},
		{placementclient.ProviderFilter{InTree: childUUID}, []string{"cn1", "cn1_numa0"}},
		{placementclient.ProviderFilter{MemberOf: []string{"in:" + aggUUID}}, []string{"cn1"}},
		{placementclient.ProviderFilter{MemberOf: []string{"!" + aggUUID}}, []string{"cn1_numa0", "renamed"}},
		{placementclient.ProviderFilter{Resources: "VCPU:10"}, []string{"cn1", "cn1_numa0"}},
		{placementclient.ProviderFilter{Resources: "VCPU:14,MEMORY_MB:1024"}, []string{"cn1"}},
		{placementclient.ProviderFilter{Required: []string{"!HW_CPU_X86_AVX2"}}, []string{"cn1", "cn1_numa0", "renamed"}},
	} {
		if got := list(tc.f); !slices.Equal(got, tc.want) {
			t.Errorf("list %+v = %v, want %v", tc.f, got, tc.want)
		}
	}
	_, err = c.ListProviders(ctx, placementclient.ProviderFilter{UUID: "nope"})
	wantErr(t, "bad uuid filter", err, placementclient.ErrBadRequest, "Invalid query string parameters")
	_, err = c.ListProviders(ctx, placementclient.ProviderFilter{Resources: "VCPU"})
	wantErr(t, "bad resources filter", err, placementclient.ErrBadRequest, "Badly formed resources parameter")

	// Deletes.
	wantErr(t, "delete allocations", c.DeleteAllocations(ctx, consumer2), nil, "")
	wantErr(t, "delete missing allocations", c.DeleteAllocations(ctx, consumer2), placementclient.ErrNotFound, "No allocations for consumer")
	wantErr(t, "delete parent of a child", c.DeleteProvider(ctx, rootUUID), placementclient.ErrConflict, "Unable to delete parent resource provider")
	wantErr(t, "delete all inventories", c.DeleteInventories(ctx, childUUID), nil, "")
	wantErr(t, "delete class", c.DeleteResourceClass(ctx, "CUSTOM_FPGA"), nil, "")
	wantErr(t, "delete child", c.DeleteProvider(ctx, childUUID), nil, "")
	wantErr(t, "delete missing", c.DeleteProvider(ctx, childUUID), placementclient.ErrNotFound, "No resource provider with uuid")
}

// TestMicroversions pins and refuses versions the way osc-placement's
// --os-placement-api-version does, and gates calls a version cannot make.
func TestMicroversions(t *testing.T) {
	ctx := context.Background()
	c, base := livePlacement(t, "1.14")
	if c.Microversion().String() != "1.14" {
		t.Fatalf("pinned %s", c.Microversion())
	}
	if _, err := c.ListProviders(ctx, placementclient.ProviderFilter{Required: []string{"HW_CPU_X86_AVX2"}}); err == nil || !strings.Contains(err.Error(), "needs Placement microversion 1.18") {
		t.Fatalf("required at 1.14: %v", err)
	}
	// Before 1.20 Placement answers POST with 201 and no body: the client
	// reads the provider back.
	rp, err := c.CreateProvider(ctx, placementclient.NewProvider{Name: "old"})
	if err != nil || rp.Name != "old" || rp.UUID == "" {
		t.Fatalf("create at 1.14: %+v %v", rp, err)
	}
	// Below 1.19 the aggregates are read (osc lists them) without a
	// generation, and no edit is written.
	if ag, err := c.GetProviderAggregates(ctx, rp.UUID); err != nil || ag.Generation != 0 {
		t.Fatalf("aggregates at 1.14: %+v %v", ag, err)
	}
	if _, err := c.SetProviderAggregates(ctx, rp.UUID, 0, nil); err == nil || !strings.Contains(err.Error(), "1.19") {
		t.Fatalf("aggregate edit at 1.14: %v", err)
	}
	for _, tc := range []struct{ mv, want string }{
		{"1.40", "rpctl knows Placement microversions up to 1.39"},
		{"2.0", "rpctl knows"},
		{"one", "invalid --os-placement-api-version"},
		{"1.x", "invalid --os-placement-api-version"},
	} {
		_, err := placementclient.New(ctx, placementclient.Config{Endpoint: base, Auth: placementclient.StaticToken("admin"), Microversion: tc.mv})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("--os-placement-api-version %s: %v, want %q", tc.mv, err, tc.want)
		}
	}
	for _, ep := range []string{"", "ftp://x", "127.0.0.1:80"} {
		if _, err := placementclient.New(ctx, placementclient.Config{Endpoint: ep}); err == nil {
			t.Errorf("endpoint %q accepted", ep)
		}
	}
}
