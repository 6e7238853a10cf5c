package placementdb

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/rpctl/rpctl/claims"
	"github.com/rpctl/rpctl/migrate"
	"github.com/rpctl/rpctl/storage"
)

// claimRows is every allocation, consumer and provider generation as text.
func claimRows(t *testing.T, db *storage.DB) []string {
	t.Helper()
	var out []string
	for _, q := range []string{
		`SELECT CONCAT_WS(' ', 'alloc', a.consumer_id, p.uuid, a.resource_class_id, a.used) FROM allocations a JOIN resource_providers p ON p.id = a.resource_provider_id`,
		`SELECT CONCAT_WS(' ', 'consumer', uuid, generation) FROM consumers`,
		`SELECT CONCAT_WS(' ', 'gen', uuid, generation) FROM resource_providers`,
	} {
		var rows []string
		if err := db.SelectContext(context.Background(), &rows, q); err != nil {
			t.Fatal(err)
		}
		out = append(out, rows...)
	}
	slices.Sort(out)
	return out
}

// TestRemoveConsumersFromProvidersAsOneByOne (issue 35): removals made in
// scripts leave exactly the rows RemoveConsumerFromProvider leaves one at
// a time: a consumer on one provider (its allocations and record go), on
// two (the other provider's and the consumer's generations go up), without
// a consumer record, and a consumer that no longer holds the provider
// (nothing changes).
func TestRemoveConsumersFromProvidersAsOneByOne(t *testing.T) {
	ctx := context.Background()
	nodes := []migrate.NodeWrite{scriptNode(1, "one", 0, ""), scriptNode(2, "two", 0, "")}
	var dumps [2][]string
	for k, batch := range []bool{true, false} {
		db, ids := scriptPlacement(t)
		if errs := WriteNodes(ctx, db, ids, nodes); errors.Join(errs...) != nil {
			t.Fatal(errors.Join(errs...))
		}
		rp := func(i int) string { return nodes[i].Providers[0].UUID }
		var ws []claims.Write
		for i := range 30 {
			allocs := map[string]claims.ProviderAllocation{rp(i % 2): {Resources: map[string]int64{"VCPU": 1}}}
			if i%3 == 0 {
				allocs[rp((i+1)%2)] = claims.ProviderAllocation{Resources: map[string]int64{"MEMORY_MB": 64}}
			}
			ws = append(ws, claims.Write{Consumer: fmt.Sprintf("c0000000-0000-4000-8000-%012d", i), Alloc: claims.Allocations{Allocations: allocs, ProjectID: "p", UserID: "u"}})
		}
		if n, err := (&ClaimsPlacement{DB: db}).PutAllocations(ctx, ws); err != nil || n != len(ws) {
			t.Fatalf("%d written: %v", n, err)
		}
		if _, err := db.ExecContext(ctx, "DELETE FROM consumers WHERE uuid IN (?, ?)", ws[4].Consumer, ws[6].Consumer); err != nil {
			t.Fatal(err)
		}
		var pid [2]int64
		for i := range pid {
			if err := db.GetContext(ctx, &pid[i], "SELECT id FROM resource_providers WHERE uuid = ?", rp(i)); err != nil {
				t.Fatal(err)
			}
		}
		var rs []claims.Removal
		for i, w := range ws {
			rs = append(rs, claims.Removal{Consumer: w.Consumer, ProviderID: pid[i%2]})
			if i == 9 {
				// Again: it no longer holds the provider.
				rs = append(rs, claims.Removal{Consumer: w.Consumer, ProviderID: pid[i%2]})
			}
		}
		l := ClaimsLedger{DB: db}
		if batch {
			if done, err := l.RemoveConsumersFromProviders(ctx, rs); err != nil || done != len(rs) {
				t.Fatalf("batch: %d of %d: %v", done, len(rs), err)
			}
		} else {
			for _, r := range rs {
				if _, err := l.RemoveConsumerFromProvider(ctx, r.Consumer, r.ProviderID); err != nil {
					t.Fatal(err)
				}
			}
		}
		dumps[k] = claimRows(t, db)
	}
	if len(dumps[0]) < 12 || !slices.Equal(dumps[0], dumps[1]) {
		t.Errorf("batch left %d rows, one by one %d; first difference:\n%s", len(dumps[0]), len(dumps[1]), firstDiff(dumps[0], dumps[1]))
	}
}
