package galeratest

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/rpctl/rpctl/internal/mysqlproxy"
	"github.com/rpctl/rpctl/internal/testdb"
)

// maxRoundTripsPerItem is issue 35's bound (cmd/migrate's
// TestBulkRoundTrips holds plain MariaDB to it).
const maxRoundTripsPerItem = 0.2

// TestGaleraBulkRoundTrips is issue 35's round-trip count on a Galera
// node: the 400-node sample cloud migrated through a counting proxy in
// front of node 2, each bulk job within maxRoundTripsPerItem round trips
// per item. The jobs that write many small transactions (inventory,
// aggregates, inventory set --aggregate, audit --delete, a layout switch,
// provider apply) do so as guarded scripts there (storage.TakesScripts);
// one statement per round trip they cost 7 to 23 round trips per item
// (measured with TakesScripts false on Galera).
func TestGaleraBulkRoundTrips(t *testing.T) {
	g := testdb.NewGalera(t)
	bin := testdb.BuildRpctl(t)
	c := newCloud(t, g, "rt")
	mustRun(t, bin, c.flags(0, "init")...)
	mustRun(t, bin, c.flags(0, "sample-cloud", "--nodes", sampleNodes, "--seed", sampleSeed)...)
	cfg, err := mysql.ParseDSN(g.Prefix[1])
	if err != nil {
		t.Fatal(err)
	}
	proxy, err := mysqlproxy.Start(cfg.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	via := func(url string) string { return strings.Replace(url, "@"+cfg.Addr+"/", "@"+proxy.Addr()+"/", 1) }
	// The cell is read through node 2 directly: the cell mapping names
	// node 1 (sample-cloud's), and the jobs' writes are Placement's.
	dbArgs := []string{"--cell-db", c.cell[1], "--api-db", via(c.api[1]), "--placement-db", via(c.placement[1])}
	count := func(db int, q string) int {
		t.Helper()
		var n int
		if err := g.Open(t, 1, c.names[db]).QueryRow(q).Scan(&n); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return n
	}
	nodes := count(0, "SELECT COUNT(*) FROM compute_nodes WHERE deleted = 0")
	memberships := count(1, "SELECT COUNT(*) FROM aggregate_hosts")
	instances := count(0, "SELECT COUNT(*) FROM instances WHERE deleted = 0")
	const orphans = 200
	type job struct {
		job   string
		args  []string
		items int
		unit  string
	}
	for _, j := range []job{
		{"inventory", []string{"migrate", "inventory"}, nodes, "node"},
		{"aggregates", []string{"migrate", "aggregates"}, memberships, "membership"},
		{"allocations", []string{"migrate", "allocations"}, instances, "instance"},
		{"inventory set --aggregate", nil, 0, "provider"},
		{"claims audit --delete", []string{"claims", "audit", "--delete"}, orphans, "orphan"},
		{"layout switch", []string{"migrate", "inventory", "--layout", "nested"}, nodes, "node"},
		{"provider apply", nil, nodes, "provider"},
	} {
		args, exit := j.args, 0
		switch j.job {
		case "inventory set --aggregate":
			// An aggregate's members edited at once: an aggregate of every
			// compute node (the sample cloud's have 134 members at most,
			// too few to tell the job's round trips per item from its
			// fixed ones).
			const agg = "0e7a6c9b-5d1f-4c2a-9f3e-2b8d4a6c1e07"
			p := g.Open(t, 0, c.names[2])
			for _, q := range []string{
				"INSERT INTO placement_aggregates (created_at, uuid) VALUES (NOW(), '" + agg + "')",
				"INSERT INTO resource_provider_aggregates (created_at, resource_provider_id, aggregate_id) SELECT NOW(), rp.id, pa.id FROM resource_providers rp JOIN placement_aggregates pa ON pa.uuid = '" + agg + "' WHERE rp.parent_provider_id IS NULL",
			} {
				if _, err := p.Exec(q); err != nil {
					t.Fatal(err)
				}
			}
			j.items = count(2, "SELECT COUNT(*) FROM resource_provider_aggregates m JOIN placement_aggregates pa ON pa.id = m.aggregate_id WHERE pa.uuid = '"+agg+"'")
			args = []string{"inventory", "set", "--aggregate", agg, "VCPU:reserved=2", "--amend", "--yes"}
		case "claims audit --delete":
			// Orphans: instances deleted in the cell after their
			// allocations were written (exit 4: found and deleted).
			if _, err := g.Open(t, 0, c.names[0]).Exec("UPDATE instances SET deleted = id, deleted_at = NOW() WHERE deleted = 0 AND host IS NOT NULL ORDER BY id LIMIT " + strconv.Itoa(orphans)); err != nil {
				t.Fatal(err)
			}
			exit = 4
		}
		if j.job == "provider apply" {
			yaml := filepath.Join(t.TempDir(), "provider.yaml")
			if err := os.WriteFile(yaml, []byte("meta:\n  schema_version: '1.0'\nproviders:\n  - identification:\n      uuid: '$COMPUTE_NODE'\n"+
				"    inventories:\n      additional:\n        - CUSTOM_LICENSE: {total: 4}\n    traits:\n      additional: [CUSTOM_RACK_A]\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			args = []string{"provider", "apply", "--file", yaml}
		}
		proxy.Reset()
		r := run(bin, append(dbArgs, args...)...)
		got := proxy.Reset()
		if r.code != exit {
			t.Fatalf("%s: exit %d, want %d\n%s%s", j.job, r.code, exit, r.out, r.errOut)
		}
		if got.Unreadable != 0 {
			t.Fatalf("%s: %d connections the proxy could not read", j.job, got.Unreadable)
		}
		per := float64(got.RoundTrips) / float64(j.items)
		t.Logf("%s: %d round trips (%d connections) for %d %ss: %.3f per %s", j.job, got.RoundTrips, got.Connections, j.items, j.unit, per, j.unit)
		if per > maxRoundTripsPerItem {
			t.Errorf("%s: %.3f round trips per %s (%d for %d), want at most %.1f", j.job, per, j.unit, got.RoundTrips, j.items, maxRoundTripsPerItem)
		}
	}
	if n := count(2, "SELECT COUNT(*) FROM inventories i JOIN resource_classes rc ON rc.id = i.resource_class_id WHERE rc.name = 'CUSTOM_LICENSE'"); n != nodes {
		t.Errorf("provider apply: %d CUSTOM_LICENSE inventories, want one on each of the %d compute nodes", n, nodes)
	}
}
