package placementdb

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/claims"
	"github.com/rpctl/rpctl/internal/placementtest"
	"github.com/rpctl/rpctl/inventory"
	"github.com/rpctl/rpctl/storage"
)

// TestOneConsumerPerUUID (issue 37 row 1): every uuid the database backend
// writes — a consumer's, a provider's in an allocation, an aggregate's, a
// released consumer's — is one row whatever its spelling: written lower
// case, on SQLite (which compares exactly, and used to keep two consumers)
// and on MariaDB (which compares case-insensitively, and used to fail with
// a duplicate key).
func TestOneConsumerPerUUID(t *testing.T) {
	ctx := context.Background()
	const (
		rpLower  = "abcdef00-1111-4111-8111-111111111111"
		consumer = "eeeeeeee-1111-4000-8000-000000000002"
		aggLower = "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee"
		project  = "dddddddd-dddd-4ddd-8ddd-dddddddddddd"
	)
	for _, tc := range []struct {
		name string
		open func(testing.TB) *storage.DB
	}{{"sqlite", placementtest.SQLite}, {"mariadb", placementtest.MySQL}} {
		t.Run(tc.name, func(t *testing.T) {
			db := tc.open(t)
			if _, err := EnsurePlacementNames(ctx, db, nil, nil, nil); err != nil {
				t.Fatal(err)
			}
			st := New(db)
			p, err := st.CreateProvider(ctx, inventory.ProviderSpec{Name: "cmp", UUID: strings.ToUpper(rpLower)})
			if err != nil {
				t.Fatal(err)
			}
			if p.UUID != rpLower {
				t.Errorf("provider created as %s, want %s", p.UUID, rpLower)
			}
			if _, err := st.ReplaceInventories(ctx, rpLower, p.Generation, map[string]inventory.Inventory{
				"VCPU": {Total: 16, MinUnit: 1, MaxUnit: 16, StepSize: 1, AllocationRatio: 1}}); err != nil {
				t.Fatal(err)
			}
			cp := &ClaimsPlacement{DB: db}
			put := func(spelling, rp string, vcpu int64) {
				t.Helper()
				got, err := cp.ConsumerAllocations(ctx, []string{spelling})
				if err != nil {
					t.Fatal(err)
				}
				a := claims.Allocations{ProjectID: project, UserID: project,
					Allocations: map[string]claims.ProviderAllocation{rp: {Resources: map[string]int64{"VCPU": vcpu}}}}
				if cur := got[spelling]; cur != nil {
					a.ConsumerGeneration = cur.ConsumerGeneration
				}
				if _, err := cp.PutAllocations(ctx, []claims.Write{{Consumer: spelling, Alloc: a}}); err != nil {
					t.Fatalf("PUT %s: %v", spelling, err)
				}
			}
			put(strings.ToUpper(consumer), strings.ToUpper(rpLower), 1)
			put(consumer, rpLower, 2)
			put("{"+strings.ToUpper(consumer)+"}", rpLower, 3)
			var consumers []string
			if err := db.SelectContext(ctx, &consumers, `SELECT uuid FROM consumers`); err != nil {
				t.Fatal(err)
			}
			var used []int64
			if err := db.SelectContext(ctx, &used, `SELECT used FROM allocations`); err != nil {
				t.Fatal(err)
			}
			if len(consumers) != 1 || consumers[0] != consumer || len(used) != 1 || used[0] != 3 {
				t.Errorf("consumers %q holding %v, want one, %s, holding [3]", consumers, used, consumer)
			}
			// Aggregates: one, lower case, whichever spellings are given.
			gen, _, err := st.ProviderAggregates(ctx, rpLower)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := st.SetProviderAggregates(ctx, rpLower, gen, []string{strings.ToUpper(aggLower), aggLower}); err != nil {
				t.Fatal(err)
			}
			var aggs []string
			if err := db.SelectContext(ctx, &aggs, `SELECT uuid FROM placement_aggregates`); err != nil {
				t.Fatal(err)
			}
			if len(aggs) != 1 || aggs[0] != aggLower {
				t.Errorf("aggregates %q, want [%s]", aggs, aggLower)
			}
			// Release by another spelling releases the one consumer.
			if ok, err := (ClaimsLedger{DB: db}).Release(ctx, strings.ToUpper(consumer)); err != nil || !ok {
				t.Errorf("release: %v %v", ok, err)
			}
			var left int
			if err := db.GetContext(ctx, &left, `SELECT COUNT(*) FROM allocations`); err != nil || left != 0 {
				t.Errorf("after the release %d allocations (%v)", left, err)
			}
		})
	}
}

// TestProviderLookupIgnoresCase (issue 37 row 14): a provider stored with
// an upper-case uuid (the migration writes a compute node's uuid as its
// row spells it) is found by any spelling, as MySQL's collation finds it,
// on SQLite too, and another spelling of it cannot be created.
func TestProviderLookupIgnoresCase(t *testing.T) {
	ctx := context.Background()
	const lower = "52302ca3-8af9-44c0-afea-39a97523e21a"
	upper := strings.ToUpper(lower)
	for _, tc := range []struct {
		name string
		open func(testing.TB) *storage.DB
	}{{"sqlite", placementtest.SQLite}, {"mariadb", placementtest.MySQL}} {
		t.Run(tc.name, func(t *testing.T) {
			db := tc.open(t)
			if _, err := EnsurePlacementNames(ctx, db, nil, nil, nil); err != nil {
				t.Fatal(err)
			}
			if _, err := db.ExecContext(ctx, db.Rebind(`INSERT INTO resource_providers (uuid, name, generation, created_at) VALUES (?, 'cmp', 0, ?)`), upper, db.Now()); err != nil {
				t.Fatal(err)
			}
			if _, err := db.ExecContext(ctx, `UPDATE resource_providers SET root_provider_id = id`); err != nil {
				t.Fatal(err)
			}
			st := New(db)
			for _, spelling := range []string{lower, upper, "52302ca3-8AF9-44c0-afea-39A97523E21A"} {
				p, err := st.GetProvider(ctx, spelling)
				if err != nil || p.Name != "cmp" {
					t.Errorf("GetProvider(%s): %+v, %v", spelling, p, err)
				}
				ps, err := st.ListProviders(ctx, inventory.ProviderFilter{UUID: spelling})
				if err != nil || len(ps) != 1 {
					t.Errorf("ListProviders(uuid=%s): %+v, %v", spelling, ps, err)
				}
				ps, err = st.ListProviders(ctx, inventory.ProviderFilter{InTree: spelling})
				if err != nil || len(ps) != 1 {
					t.Errorf("ListProviders(in_tree=%s): %+v, %v", spelling, ps, err)
				}
				if _, _, err := st.Inventories(ctx, spelling); err != nil {
					t.Errorf("Inventories(%s): %v", spelling, err)
				}
			}
			_, err := st.CreateProvider(ctx, inventory.ProviderSpec{Name: "other", UUID: lower})
			if !errors.Is(err, inventory.ErrConflict) || !strings.Contains(err.Error(), "uuid: "+lower) {
				t.Errorf("CreateProvider of another spelling: %v, want a uuid conflict", err)
			}
		})
	}
}
