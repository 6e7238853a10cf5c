package cmdtest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/internal/placementtest"
	"github.com/rpctl/rpctl/internal/testdb"
	"github.com/rpctl/rpctl/placementclient"
)

// LivePlacementDB is a fresh Placement (database and real placement-api,
// noauth2) with a client of its API.
func LivePlacementDB(t *testing.T) (p placementtest.Placement, c *placementclient.Client) {
	t.Helper()
	p = placementtest.New(t)
	c, err := placementclient.New(context.Background(), placementclient.Config{Endpoint: p.Base, Auth: placementclient.StaticToken("admin")})
	if err != nil {
		t.Fatal(err)
	}
	return p, c
}

// SmallCloud writes, through the API, hosts with a NUMA child, traits, an
// Aggregate and an allocation.
func SmallCloud(t *testing.T, c *placementclient.Client, hosts int) {
	t.Helper()
	ctx := context.Background()
	if err := c.CreateTrait(ctx, "CUSTOM_GOLD"); err != nil {
		t.Fatal(err)
	}
	for i := range hosts {
		rp, err := c.CreateProvider(ctx, placementclient.NewProvider{Name: "host" + string(rune('a'+i))})
		if err != nil {
			t.Fatal(err)
		}
		inv := map[string]placementclient.Inventory{
			"VCPU":      {Total: int64(4 + 4*i), MinUnit: 1, MaxUnit: 16, StepSize: 1, AllocationRatio: 2},
			"MEMORY_MB": {Total: 8192, Reserved: 512, MinUnit: 1, MaxUnit: 8192, StepSize: 1, AllocationRatio: 1.5},
		}
		g, err := c.SetInventories(ctx, rp.UUID, 0, inv)
		if err != nil {
			t.Fatal(err)
		}
		traits := []string{"HW_CPU_X86_AVX2"}
		if i%2 == 0 {
			traits = append(traits, "CUSTOM_GOLD")
		}
		tr, err := c.SetProviderTraits(ctx, rp.UUID, g.Generation, traits)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.SetProviderAggregates(ctx, rp.UUID, tr.Generation, []string{"aaaaaaaa-0000-4000-8000-00000000000" + string(rune('0'+i%2))}); err != nil {
			t.Fatal(err)
		}
		numa, err := c.CreateProvider(ctx, placementclient.NewProvider{Name: rp.Name + "_numa0", ParentProviderUUID: rp.UUID})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.SetInventories(ctx, numa.UUID, 0, map[string]placementclient.Inventory{
			"PCPU": {Total: 4, MinUnit: 1, MaxUnit: 4, StepSize: 1, AllocationRatio: 1}}); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			a := placementclient.Allocations{Allocations: map[string]placementclient.ProviderAllocations{
				rp.UUID: {Resources: map[string]int64{"VCPU": 3, "MEMORY_MB": 1024}}},
				ProjectID: "p", UserID: "u", ConsumerType: "INSTANCE"}
			if err := c.SetAllocations(ctx, "c0c0c0c0-0000-4000-8000-000000000001", a); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// FlavorCloud is a small migrated sample cloud in an embedded file.
func FlavorCloud(t *testing.T) string {
	t.Helper()
	db := filepath.Join(t.TempDir(), "cloud.db")
	for _, args := range [][]string{
		{"--db", db, "sample-cloud", "--nodes", "6", "--cells", "1", "--seed", "3"},
		{"--db", db, "migrate", "inventory"},
	} {
		if _, errOut, code := Rpctl(t, args...); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
	}
	return db
}

// TwentyGroups is the query: twenty resourcesN=VCPU:1 groups with
// group_policy=none, which on a 200-node nested cloud has more answers than
// memory holds.
func TwentyGroups() string {
	var q []string
	for i := 1; i <= 20; i++ {
		q = append(q, fmt.Sprintf("resources%d=VCPU:1", i))
	}
	return strings.Join(q, "&") + "&group_policy=none"
}

// NestedCloud is a 200-node SQLite cloud migrated with the nested layout.
func NestedCloud(t testing.TB, bin string) string {
	t.Helper()
	db := filepath.Join(t.TempDir(), "cloud.db")
	MustRun(t, bin, "--db", db, "sample-cloud", "--nodes", "200", "--seed", "1")
	MustRun(t, bin, "--db", db, "migrate", "inventory", "--layout", "nested")
	return db
}

// GranularFlavorFile writes the flavor for capacity: n one-VCPU
// groups, group_policy none.
func GranularFlavorFile(t testing.TB, n int) string {
	t.Helper()
	specs := map[string]string{"group_policy": "none"}
	for i := 1; i <= n; i++ {
		specs[fmt.Sprintf("resources%d:VCPU", i)] = "1"
	}
	body, err := json.Marshal(map[string]any{"name": fmt.Sprintf("g%d", n), "vcpus": n, "ram": 64, "disk": 0, "extra_specs": specs})
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), fmt.Sprintf("g%d.json", n))
	if err := os.WriteFile(p, body, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// OnBothBackends runs f once per backend of a fresh real Placement
// (placementtest.New, skipped without Placement's Python package): the
// database (--placement-db) and the API (--os-endpoint, --os-token admin).
// rpctl runs rpctl with that backend's flags, so f asserts the same
// outcome whichever backend carried the command.
func OnBothBackends(t *testing.T, f func(t *testing.T, rpctl func(args ...string) (string, string, int))) {
	backends := []struct {
		name  string
		flags func(p placementtest.Placement) []string
	}{
		{"database", func(p placementtest.Placement) []string { return []string{"--placement-db", p.URL} }},
		{"api", func(p placementtest.Placement) []string {
			return []string{"--os-endpoint", p.Base, "--os-token", "admin"}
		}},
	}
	for _, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			testdb.RequirePython(t, "placement")
			flags := be.flags(placementtest.New(t))
			f(t, func(args ...string) (string, string, int) {
				return Rpctl(t, append(slices.Clip(flags), args...)...)
			})
		})
	}
}
