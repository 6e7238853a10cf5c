package migrate_test

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/internal/config"
	"github.com/rpctl/rpctl/migrate"
	"github.com/rpctl/rpctl/samplecloud"
	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/stores"
)

// concurrentWriter is a second writer racing the sync: before each of the
// sync's writes (up to times of them), it adds an aggregate of its own to
// the same provider through the same database, so the sync's generation is
// stale.
type concurrentWriter struct {
	migrate.AggregatePlacement
	times int
	agg   string
}

func (c *concurrentWriter) SetProviderAggregates(ctx context.Context, uuid string, gen int64, aggs []string) (int64, error) {
	if c.times > 0 {
		c.times--
		g, have, err := c.AggregatePlacement.ProviderAggregates(ctx, uuid)
		if err != nil {
			return 0, err
		}
		if !slices.Contains(have, c.agg) {
			have = append(have, c.agg)
		}
		if _, err := c.AggregatePlacement.SetProviderAggregates(ctx, uuid, g, have); err != nil {
			return 0, err
		}
	}
	return c.AggregatePlacement.SetProviderAggregates(ctx, uuid, gen, aggs)
}

// TestAggregateSyncSQLite syncs a sample cloud's aggregates on the embedded
// file: every Nova membership lands, Diff then finds nothing, a rerun
// writes nothing; a concurrent writer's change survives the re-read and
// retry, and a writer that always wins ends the run with Nova's code 3.
func TestAggregateSyncSQLite(t *testing.T) {
	ctx := context.Background()
	dbs, cloud := migratedSQLiteCloud(t)
	want := 0
	for _, a := range cloud.Aggregates {
		want += len(a.Hosts)
	}
	if want == 0 || len(cloud.Aggregates) < 3 {
		t.Fatalf("the sample cloud has %d aggregates, %d memberships", len(cloud.Aggregates), want)
	}
	newSync := func(p migrate.AggregatePlacement) (*migrate.AggregateSync, *bytes.Buffer) {
		var out bytes.Buffer
		return &migrate.AggregateSync{API: stores.AggregateAPI(dbs.API), Cells: stores.AggregateCells(dbs.Cells), Placement: p, Out: &out, Err: &out}, &out
	}
	const theirs = "0ddba11a-0000-4000-8000-000000000001"
	cases := []struct {
		name    string
		writer  *concurrentWriter // nil: the store itself
		exit    int
		added   int
		message string
	}{
		{name: "a concurrent change on the first write is re-read and kept", writer: &concurrentWriter{times: 1, agg: theirs}, exit: 0, added: want},
		{name: "rerun writes nothing", exit: 0, added: 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var p migrate.AggregatePlacement = stores.AggregatePlacement(dbs.Placement)
			if tc.writer != nil {
				tc.writer.AggregatePlacement = p
				p = tc.writer
			}
			s, out := newSync(p)
			res, err := s.Run(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if res.Exit != tc.exit || len(res.Added) != tc.added {
				t.Fatalf("exit %d, %d added; want %d, %d\n%s", res.Exit, len(res.Added), tc.exit, tc.added, out)
			}
			d, err := s.Diff(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(d.Missing)+len(d.Unresolved) != 0 {
				t.Errorf("after the sync Diff finds %d missing, %d unresolved", len(d.Missing), len(d.Unresolved))
			}
			// The concurrent writer's aggregate is explained by no Nova
			// aggregate: only --prune's list has it.
			if tc.writer != nil && (len(d.Stray) != 1 || d.Stray[0].Aggregate != theirs) {
				t.Errorf("strays %+v, want the concurrent writer's one", d.Stray)
			}
		})
	}
	t.Run("a writer that always wins ends with code 3", func(t *testing.T) {
		// A membership to add: one host leaves a Nova aggregate's provider.
		p := stores.AggregatePlacement(dbs.Placement)
		host := cloud.Aggregates[0].Hosts[0]
		var rp string
		for _, c := range cloud.Cells {
			for _, n := range c.ComputeNodes {
				if n.Host != nil && *n.Host == host && !n.IsDeleted() && n.UUID != nil {
					rp = *n.UUID
				}
			}
		}
		if rp == "" {
			// A NULL-uuid node got its uuid from the inventory migration.
			nodes, err := stores.AggregateCells(dbs.Cells)[0].ComputeNodesByHost(ctx)
			if err != nil {
				t.Fatal(err)
			}
			rp = nodes[host][0]
		}
		gen, have, err := p.ProviderAggregates(ctx, rp)
		if err != nil {
			t.Fatal(err)
		}
		have = slices.DeleteFunc(have, func(a string) bool { return a == cloud.Aggregates[0].UUID })
		if _, err := p.SetProviderAggregates(ctx, rp, gen, have); err != nil {
			t.Fatal(err)
		}
		s, out := newSync(&concurrentWriter{AggregatePlacement: p, times: 100, agg: theirs})
		res, err := s.Run(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if res.Exit != migrate.AggExitUpdate || !strings.Contains(out.String(), "Failed updating provider aggregates for host ("+host+"), provider ("+rp+") and aggregate ("+cloud.Aggregates[0].UUID+"). Error: ") {
			t.Errorf("exit %d:\n%s", res.Exit, out)
		}
	})
}

// TestAggregateHostSpellings (issue 37 row 14): an aggregate host spelled
// in another case or with trailing spaces is the host Nova finds on MySQL
// (its host_mappings and compute_nodes lookups compare under a
// case-insensitive, PAD SPACE collation): synced, not "run
// discover_hosts" (exit 4).
func TestAggregateHostSpellings(t *testing.T) {
	ctx := context.Background()
	dbs, cloud := migratedSQLiteCloud(t)
	a := cloud.Aggregates[0]
	if len(a.Hosts) < 2 {
		t.Fatalf("aggregate %s has %d hosts", a.Name, len(a.Hosts))
	}
	for _, sp := range []struct{ from, to string }{{a.Hosts[0], strings.ToUpper(a.Hosts[0])}, {a.Hosts[1], a.Hosts[1] + "  "}} {
		if _, err := dbs.API.ExecContext(ctx, `UPDATE aggregate_hosts SET host = ? WHERE host = ?`, sp.to, sp.from); err != nil {
			t.Fatal(err)
		}
	}
	var out bytes.Buffer
	s := &migrate.AggregateSync{API: stores.AggregateAPI(dbs.API), Cells: stores.AggregateCells(dbs.Cells), Placement: stores.AggregatePlacement(dbs.Placement), Out: &out, Err: &out}
	res, err := s.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if res.Exit != migrate.AggExitOK || strings.Contains(out.String(), "discover_hosts") {
		t.Fatalf("exit %d:\n%s", res.Exit, out.String())
	}
	d, err := s.Diff(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Missing)+len(d.Unresolved) != 0 {
		t.Errorf("after the sync Diff finds %d missing, %d unresolved: %+v %+v", len(d.Missing), len(d.Unresolved), d.Missing, d.Unresolved)
	}
}

// migratedSQLiteCloud is a 20-node sample cloud on SQLite whose inventory
// is migrated (flat), so that its aggregates can be synced.
func migratedSQLiteCloud(t *testing.T) (*storage.Databases, *samplecloud.Cloud) {
	t.Helper()
	dbs, cloud := sqliteCloud(t, samplecloud.Options{Nodes: 20, Seed: 9})
	inv := &migrate.Inventory{Cells: cellStores(dbs.Cells...), Placement: placementStore(dbs.Placement), Config: migrate.InventoryConfig{Layout: migrate.LayoutFlat, Ratios: config.DefaultOptions().Ratios}, Parallel: 1}
	if sum, err := (&migrate.Runner{Migrations: []migrate.Migration{inv}}).Run(context.Background(), 0, true); err != nil || sum.Exit != 0 {
		t.Fatalf("inventory: %+v %v", sum, err)
	}
	return dbs, cloud
}

// TestAggregateSyncProgress (issue 35): the sync reports every membership
// of Nova's aggregates, in order, ending at the total, so that a 100,000-
// node run shows its rate and ETA instead of minutes of silence.
func TestAggregateSyncProgress(t *testing.T) {
	dbs, cloud := migratedSQLiteCloud(t)
	want := 0
	for _, a := range cloud.Aggregates {
		want += len(a.Hosts)
	}
	if want == 0 {
		t.Fatal("the sample cloud has no aggregate host")
	}
	var calls [][2]int
	var out bytes.Buffer
	s := &migrate.AggregateSync{API: stores.AggregateAPI(dbs.API), Cells: stores.AggregateCells(dbs.Cells), Placement: stores.AggregatePlacement(dbs.Placement), Out: &out, Err: &out,
		Progress: func(done, total int) { calls = append(calls, [2]int{done, total}) }}
	if res, err := s.Run(context.Background()); err != nil || res.Exit != migrate.AggExitOK {
		t.Fatalf("sync: %+v %v\n%s", res, err, out.String())
	}
	if len(calls) != want+1 {
		t.Fatalf("%d progress calls for %d memberships, want %d", len(calls), want, want+1)
	}
	for i, c := range calls {
		if c != [2]int{i, want} {
			t.Fatalf("call %d is %v, want [%d %d]", i, c, i, want)
		}
	}
}
