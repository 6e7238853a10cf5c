package migrate_test

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/inventory"
	"github.com/rpctl/rpctl/migrate"
	"github.com/rpctl/rpctl/storage/stores"
)

// batchWriter is a database that takes batches (issue 35), on SQLite: it
// writes each change of a batch through SetProviderAggregates at the
// generation it was decided at, and stops at the first that fails. From
// write number from on (batched or not) its racer, when set, adds an
// aggregate of another writer to the same provider first, as
// concurrentWriter does.
type batchWriter struct {
	migrate.AggregatePlacement
	scan    migrate.AggregateScanner
	racer   *concurrentWriter
	from    int // the racer's first write
	writes  int
	batches int
}

func (b *batchWriter) AllProviderAggregates(ctx context.Context) (map[string]migrate.ProviderAggregates, error) {
	return b.scan.AllProviderAggregates(ctx)
}

func (b *batchWriter) WriteAggregates(ctx context.Context, ws []migrate.AggregateWrite) (int, error) {
	b.batches++
	for i, w := range ws {
		_, have, err := b.ProviderAggregates(ctx, w.Provider)
		if err != nil {
			return i, err
		}
		want := slices.DeleteFunc(slices.Clone(have), func(a string) bool { return slices.Contains(w.Remove, a) })
		for _, a := range w.Add {
			if !slices.Contains(want, a) {
				want = append(want, a)
			}
		}
		if _, err := b.SetProviderAggregates(ctx, w.Provider, w.Generation, want); err != nil {
			return i, err
		}
	}
	return len(ws), nil
}

// SetProviderAggregates is every write, batched or one by one: the racer's
// from write number from on.
func (b *batchWriter) SetProviderAggregates(ctx context.Context, uuid string, gen int64, aggs []string) (int64, error) {
	b.writes++
	if b.racer != nil && b.writes > b.from {
		return b.racer.SetProviderAggregates(ctx, uuid, gen, aggs)
	}
	return b.AggregatePlacement.SetProviderAggregates(ctx, uuid, gen, aggs)
}

// TestAggregateSyncBatchesAsOneByOne (issue 35): a sync whose writes are
// decided ahead and sent in batches prints the same lines, exits with the
// same code and leaves the same memberships as the sync writing one
// membership at a time, also when another writer changes a provider
// between the decision and the write (the batch stops there, that write is
// retried one by one, and the run goes on in a new batch) and when that
// writer always wins (Nova's code 3 at the same membership).
func TestAggregateSyncBatchesAsOneByOne(t *testing.T) {
	ctx := context.Background()
	const theirs = "0ddba11a-0000-4000-8000-000000000001"
	cases := []struct {
		name        string
		from, times int // the racer's first write and how many it races
		exit        int
		batches     int // at least
	}{
		{name: "no other writer", times: 0, exit: 0, batches: 1},
		{name: "another writer before the first write", from: 0, times: 1, exit: 0, batches: 2},
		{name: "another writer in the middle of the batch", from: 7, times: 1, exit: 0, batches: 2},
		{name: "another writer that always wins", from: 4, times: 1000, exit: migrate.AggExitUpdate, batches: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var outs [2]string
			var members [2]map[string]migrate.ProviderAggregates
			var added [2]int
			for k, batched := range []bool{true, false} {
				dbs, _ := migratedSQLiteCloud(t)
				store := stores.AggregatePlacement(dbs.Placement)
				racer := &concurrentWriter{AggregatePlacement: store, times: tc.times, agg: theirs}
				var p migrate.AggregatePlacement
				bw := &batchWriter{AggregatePlacement: store, scan: store.(migrate.AggregateScanner), from: tc.from}
				if tc.times > 0 {
					bw.racer = racer
				}
				p = bw
				if !batched {
					// The same writes without the batch writer.
					p = oneByOne{bw}
				}
				nodes, err := stores.AggregateCells(dbs.Cells)[0].ComputeNodesByHost(ctx)
				if err != nil {
					t.Fatal(err)
				}
				// Nodes without a uuid got a random one from the
				// inventory migration: the runs are compared by host.
				host := map[string]string{}
				var names []string
				for h, us := range nodes {
					for _, u := range us {
						host[u] = h
						names = append(names, u, "provider-of-"+h)
					}
				}
				var out bytes.Buffer
				s := &migrate.AggregateSync{API: stores.AggregateAPI(dbs.API), Cells: stores.AggregateCells(dbs.Cells), Placement: p, Out: &out, Err: &out, Verbose: true}
				res, err := s.Run(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if res.Exit != tc.exit {
					t.Errorf("batched=%v: exit %d, want %d\n%s", batched, res.Exit, tc.exit, out.String())
				}
				if batched && bw.batches < tc.batches {
					t.Errorf("%d batches, want at least %d", bw.batches, tc.batches)
				}
				outs[k], added[k] = strings.NewReplacer(names...).Replace(out.String()), len(res.Added)
				all, err := store.(migrate.AggregateScanner).AllProviderAggregates(ctx)
				if err != nil {
					t.Fatal(err)
				}
				members[k] = map[string]migrate.ProviderAggregates{}
				for u, pa := range all {
					if host[u] == "" {
						t.Fatalf("provider %s is no compute node's", u)
					}
					members[k][host[u]] = pa
				}
			}
			if outs[0] != outs[1] || added[0] != added[1] {
				t.Errorf("batched: %d added, printed\n%s\none by one: %d added, printed\n%s", added[0], outs[0], added[1], outs[1])
			}
			for h, pa := range members[1] {
				got := members[0][h]
				// Against a writer that always wins, the batched run makes
				// one attempt more (the batch's, then Nova's four), and
				// that writer one more generation.
				if (got.Generation != pa.Generation && tc.times < 1000) || !slices.Equal(got.Aggregates, pa.Aggregates) {
					t.Errorf("provider of %s: batched %+v, one by one %+v", h, got, pa)
				}
			}
			if len(members[0]) != len(members[1]) || added[0] == 0 {
				t.Errorf("%d and %d providers, %d added", len(members[0]), len(members[1]), added[0])
			}
		})
	}
}

// oneByOne is a batchWriter that does not take batches.
type oneByOne struct{ b *batchWriter }

func (o oneByOne) ProviderAggregates(ctx context.Context, uuid string) (int64, []string, error) {
	return o.b.ProviderAggregates(ctx, uuid)
}

func (o oneByOne) SetProviderAggregates(ctx context.Context, uuid string, gen int64, aggs []string) (int64, error) {
	return o.b.SetProviderAggregates(ctx, uuid, gen, aggs)
}

func (o oneByOne) ListProviders(ctx context.Context, f inventory.ProviderFilter) ([]inventory.Provider, error) {
	return o.b.ListProviders(ctx, f)
}

func (o oneByOne) AllProviderAggregates(ctx context.Context) (map[string]migrate.ProviderAggregates, error) {
	return o.b.AllProviderAggregates(ctx)
}
