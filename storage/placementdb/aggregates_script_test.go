package placementdb

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/inventory"
	"github.com/rpctl/rpctl/migrate"
	"github.com/rpctl/rpctl/storage"
)

// aggregateRows is every membership and provider generation, and every
// placement_aggregates uuid, as text.
func aggregateRows(t *testing.T, db *storage.DB) []string {
	t.Helper()
	var out []string
	for _, q := range []string{
		`SELECT CONCAT_WS(' ', 'agg', p.uuid, a.uuid) FROM resource_provider_aggregates x
			JOIN resource_providers p ON p.id = x.resource_provider_id JOIN placement_aggregates a ON a.id = x.aggregate_id`,
		`SELECT CONCAT_WS(' ', 'gen', uuid, generation) FROM resource_providers`,
		`SELECT CONCAT_WS(' ', 'known', uuid) FROM placement_aggregates`,
		`SELECT CONCAT_WS(' ', 'no-updated-at', uuid) FROM resource_providers WHERE generation > 1 AND updated_at IS NULL`,
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

// TestWriteAggregatesLeavesTheRowsOfOneByOne (issue 35): changes written
// as scripts (a transaction each, many per round trip) leave exactly the
// rows, generations and aggregates that SetProviderAggregates leaves
// writing them one at a time: additions of known and new aggregates (an
// upper-case spelling is the lower-case one), removals, both at once, a
// provider changed twice in a row.
func TestWriteAggregatesLeavesTheRowsOfOneByOne(t *testing.T) {
	ctx := context.Background()
	known := "5f2cd1a2-6a7e-4a8b-9c0d-000000000001"
	fresh := func(i int) string { return scriptUUID(9000 + i) }
	nodes := make([]migrate.NodeWrite, 30)
	for i := range nodes {
		nodes[i] = scriptNode(i+1, "host"+strings.Repeat("x", i%3)+string(rune('a'+i)), i%2, map[bool]string{true: known}[i%3 == 0])
	}
	var ws []migrate.AggregateWrite
	for i := range nodes {
		rp := nodes[i].Providers[0].UUID
		w := migrate.AggregateWrite{Provider: rp, Generation: 1, Add: []string{fresh(i % 4)}}
		if i%3 == 0 {
			w.Remove = []string{known}
		}
		if i%5 == 0 {
			w.Add = append(w.Add, strings.ToUpper(fresh(7)), known)
			w.Remove = nil
		}
		ws = append(ws, w)
		if i%7 == 0 {
			// The same provider again, from the generation just written.
			ws = append(ws, migrate.AggregateWrite{Provider: rp, Generation: 2, Remove: []string{fresh(i % 4)}})
		}
	}
	var dumps [2][]string
	for k, batch := range []bool{true, false} {
		db, ids := scriptPlacement(t, known)
		if errs := WriteNodes(ctx, db, ids, nodes); errors.Join(errs...) != nil {
			t.Fatal(errors.Join(errs...))
		}
		s := New(db)
		if batch {
			done, err := s.WriteAggregates(ctx, ws)
			if err != nil || done != len(ws) {
				t.Fatalf("WriteAggregates: %d of %d written: %v", done, len(ws), err)
			}
		} else {
			for _, w := range ws {
				gen, have, err := s.ProviderAggregates(ctx, w.Provider)
				if err != nil || gen != w.Generation {
					t.Fatalf("read %s: generation %d (%v), want %d", w.Provider, gen, err, w.Generation)
				}
				want := slices.DeleteFunc(slices.Clone(have), func(a string) bool { return slices.Contains(w.Remove, a) })
				for _, a := range w.Add {
					if !slices.Contains(want, strings.ToLower(a)) {
						want = append(want, a)
					}
				}
				if _, err := s.SetProviderAggregates(ctx, w.Provider, w.Generation, want); err != nil {
					t.Fatal(err)
				}
			}
		}
		dumps[k] = aggregateRows(t, db)
	}
	if len(dumps[0]) < 60 || !slices.Equal(dumps[0], dumps[1]) {
		t.Errorf("scripts left %d rows, one by one %d; first difference:\n%s", len(dumps[0]), len(dumps[1]), firstDiff(dumps[0], dumps[1]))
	}
}

// TestWriteAggregatesStopsAtTheFailedWrite: a change decided at a
// generation the provider no longer has, or for a provider that is gone,
// fails as a generation conflict with nothing of it written (not even the
// new aggregate it adds), the changes before it stay written and none after
// it is sent; an aggregate that is not a uuid is refused before anything
// of its change is sent.
func TestWriteAggregatesStopsAtTheFailedWrite(t *testing.T) {
	ctx := context.Background()
	db, ids := scriptPlacement(t)
	nodes := []migrate.NodeWrite{scriptNode(1, "one", 0, ""), scriptNode(2, "two", 0, ""), scriptNode(3, "three", 0, "")}
	if errs := WriteNodes(ctx, db, ids, nodes); errors.Join(errs...) != nil {
		t.Fatal(errors.Join(errs...))
	}
	s := New(db)
	rp := func(i int) string { return nodes[i].Providers[0].UUID }
	a, b, c := scriptUUID(5001), scriptUUID(5002), scriptUUID(5003)
	for _, tc := range []struct {
		name string
		ws   []migrate.AggregateWrite
		done int
		is   error
	}{
		{"stale generation", []migrate.AggregateWrite{{Provider: rp(0), Generation: 1, Add: []string{a}}, {Provider: rp(1), Generation: 7, Add: []string{b}}, {Provider: rp(2), Generation: 1, Add: []string{c}}}, 1, inventory.ErrGeneration},
		{"provider gone", []migrate.AggregateWrite{{Provider: scriptUUID(4444), Generation: 1, Add: []string{b}}}, 0, inventory.ErrGeneration},
		{"not a uuid", []migrate.AggregateWrite{{Provider: rp(1), Generation: 1, Add: []string{b}}, {Provider: rp(2), Generation: 1, Add: []string{"not-a-uuid"}}}, 1, nil},
	} {
		done, err := s.WriteAggregates(ctx, tc.ws)
		if done != tc.done || err == nil || (tc.is != nil && !errors.Is(err, tc.is)) {
			t.Errorf("%s: %d written, %v; want %d and an error (%v)", tc.name, done, err, tc.done, tc.is)
		}
	}
	got := aggregateRows(t, db)
	want := []string{"agg " + rp(0) + " " + a, "agg " + rp(1) + " " + b, "gen " + rp(0) + " 2", "gen " + rp(1) + " 2", "gen " + rp(2) + " 1", "known " + a, "known " + b}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// The connection went back clean: a next batch writes.
	if done, err := s.WriteAggregates(ctx, []migrate.AggregateWrite{{Provider: rp(2), Generation: 1, Add: []string{c}}}); done != 1 || err != nil {
		t.Errorf("next batch: %d, %v", done, err)
	}
}
