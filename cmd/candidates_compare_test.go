package cmd_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/internal/placementtest"
	"github.com/rpctl/rpctl/placementclient"
)

// livePlacementDB is a fresh Placement (database and real placement-api,
// noauth2) with a client of its API.
func livePlacementDB(t *testing.T) (p placementtest.Placement, c *placementclient.Client) {
	t.Helper()
	p = placementtest.New(t)
	c, err := placementclient.New(context.Background(), placementclient.Config{Endpoint: p.Base, Auth: placementclient.StaticToken("admin")})
	if err != nil {
		t.Fatal(err)
	}
	return p, c
}

// smallCloud writes, through the API, hosts with a NUMA child, traits, an
// aggregate and an allocation.
func smallCloud(t *testing.T, c *placementclient.Client, hosts int) {
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

func TestCandidatesCompare(t *testing.T) {
	my, c := livePlacementDB(t)
	smallCloud(t, c, 4)
	api := []string{"--os-endpoint", my.Base, "--os-token", "admin"}
	for _, tc := range []struct {
		name     string
		args     []string
		wantCode int
		want     string
	}{
		{"API only", []string{"candidates", "--compare", "--resources", "VCPU:2,MEMORY_MB:1024"}, 0, "The answers agree."},
		{"API and database", []string{"--placement-db", my.URL, "candidates", "--compare", "--resources", "VCPU:2", "--required", "CUSTOM_GOLD"}, 0, "The answers agree."},
		{"nested and aggregates", []string{"candidates", "--compare", "--resources", "VCPU:1", "--group", "_N:resources=PCPU:2",
			"--group-policy", "none", "--member-of", "aaaaaaaa-0000-4000-8000-000000000000"}, 0, "The answers agree."},
		{"old microversion", []string{"candidates", "--compare", "--resources", "VCPU:1", "--microversion", "1.12"}, 0, "The answers agree."},
		{"both refuse", []string{"candidates", "--compare", "--resources", "VCPU:x"}, 0, "The answers agree."},
		{"in_tree by name", []string{"candidates", "--compare", "--resources", "PCPU:1", "--in-tree", "hostb"}, 0, "The answers agree."},
		{"no API named", []string{"candidates", "--compare", "--resources", "VCPU:1"}, 2, "--compare needs the live Placement API"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := tc.args
			if tc.name != "no API named" {
				args = append(append([]string{}, api...), args...)
			}
			out, errOut, code := rpctl(t, args...)
			if code != tc.wantCode || !strings.Contains(out+errOut, tc.want) {
				t.Fatalf("exit %d, want %d and %q\nstdout: %s\nstderr: %s", code, tc.wantCode, tc.want, out, errOut)
			}
		})
	}

	// A database copy that lags behind the API: the differences are named
	// and the exit code is 1.
	stale, sc := livePlacementDB(t)
	smallCloud(t, sc, 3)
	out, errOut, code := rpctl(t, append(api, "--placement-db", stale.URL, "-f", "json", "candidates", "--compare", "--resources", "VCPU:1")...)
	var doc struct {
		Equal       bool     `json:"equal"`
		Differences []string `json:"differences"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != 1 || doc.Equal || len(doc.Differences) == 0 {
		t.Fatalf("stale copy: exit %d, %v\nstdout: %s\nstderr: %s", code, err, out, errOut)
	}
	if !strings.Contains(strings.Join(doc.Differences, "\n"), "only from Placement") {
		t.Errorf("differences do not name Placement's extra candidates: %v", doc.Differences)
	}

	// Placement unreachable: 255, never 1.
	_, errOut, code = rpctl(t, "--os-endpoint", "http://127.0.0.1:1", "--os-token", "x", "candidates", "--compare", "--resources", "VCPU:1")
	if code != 255 || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
		t.Fatalf("dead API: exit %d, stderr %q", code, errOut)
	}
}
