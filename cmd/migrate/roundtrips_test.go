package migrate_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/cmd/internal/cmdtest"
	"github.com/rpctl/rpctl/internal/mysqlproxy"
	"github.com/rpctl/rpctl/internal/testdb"
)

// maxRoundTripsPerItem is issue 35's bound: a bulk command on the database
// backend costs at most this many client round trips per item, so that a
// database 0.2–1 ms away (a Galera VIP) does not multiply its time.
const maxRoundTripsPerItem = 0.2

// overBound are the jobs not yet within maxRoundTripsPerItem, with the
// round trips per item measured before their fix (issue 35): a job listed
// here that is within the bound fails the test too, so that it leaves the
// list when it is fixed.
var overBound = map[string]string{}

// TestBulkRoundTrips (issue 35) builds a 2,000-node sample cloud whose
// three databases are reached through a counting proxy (the cell mapping
// names the proxy too), runs each bulk migration, and fails when one costs
// more than maxRoundTripsPerItem round trips per item: the counts, not
// times, of what an operator's run against a remote database pays.
func TestBulkRoundTrips(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a 2,000-node cloud")
	}
	cell, api, placement := testdb.NewMySQL(t), testdb.NewMySQL(t), testdb.NewMySQL(t)
	proxy, err := mysqlproxy.Start(cell.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	via := func(m *testdb.MySQL) string { return m.Through(proxy.Addr()).URL }
	dbArgs := []string{"--api-db", via(api), "--placement-db", via(placement)}
	if _, errOut, code := cmdtest.Rpctl(t, "--cell-db", via(cell), "--api-db", via(api), "--placement-db", via(placement), "sample-cloud", "--nodes", "2000", "--seed", "1"); code != 0 {
		t.Fatalf("sample-cloud: exit %d: %s", code, errOut)
	}
	count := func(m *testdb.MySQL, q string) int {
		t.Helper()
		var n int
		if err := m.Admin.QueryRow(strings.ReplaceAll(q, "DB.", "`"+m.Name+"`.")).Scan(&n); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return n
	}
	nodes := count(cell, "SELECT COUNT(*) FROM DB.compute_nodes WHERE deleted = 0")
	memberships := count(api, "SELECT COUNT(*) FROM DB.aggregate_hosts")
	instances := count(cell, "SELECT COUNT(*) FROM DB.instances WHERE deleted = 0")
	type job struct {
		job   string
		args  []string
		items int
		unit  string
		exit  int
	}
	run := func(j job) {
		t.Helper()
		proxy.Reset()
		out, errOut, code := cmdtest.Rpctl(t, append(dbArgs, j.args...)...)
		got := proxy.Reset()
		if code != j.exit {
			t.Fatalf("%s: exit %d, want %d\n%s%s", j.job, code, j.exit, out, errOut)
		}
		if got.Unreadable != 0 {
			t.Fatalf("%s: %d connections the proxy could not read", j.job, got.Unreadable)
		}
		per := float64(got.RoundTrips) / float64(j.items)
		t.Logf("%s: %d round trips (%d connections) for %d %ss: %.3f per %s", j.job, got.RoundTrips, got.Connections, j.items, j.unit, per, j.unit)
		if why, known := overBound[j.job]; known {
			if per <= maxRoundTripsPerItem {
				t.Errorf("%s: %.3f round trips per %s is within the bound now: remove it from overBound (%s)", j.job, per, j.unit, why)
			}
		} else if per > maxRoundTripsPerItem {
			t.Errorf("%s: %.3f round trips per %s (%d for %d), want at most %.1f", j.job, per, j.unit, got.RoundTrips, j.items, maxRoundTripsPerItem)
		}
	}
	run(job{"inventory", []string{"migrate", "inventory"}, nodes, "node", 0})
	run(job{"aggregates", []string{"migrate", "aggregates"}, memberships, "membership", 0})
	run(job{"allocations", []string{"migrate", "allocations"}, instances, "instance", 0})

	// An aggregate's members edited at once.
	var agg string
	var members int
	if err := placement.Admin.QueryRow("SELECT pa.uuid, COUNT(*) FROM `"+placement.Name+"`.placement_aggregates pa JOIN `"+placement.Name+
		"`.resource_provider_aggregates m ON m.aggregate_id = pa.id GROUP BY pa.uuid ORDER BY COUNT(*) DESC, pa.uuid LIMIT 1").Scan(&agg, &members); err != nil {
		t.Fatal(err)
	}
	run(job{"inventory set --aggregate", []string{"inventory", "set", "--aggregate", agg, "VCPU:reserved=2", "--amend", "--yes"}, members, "provider", 0})

	// Orphans: instances deleted in the cell after their allocations were
	// written; audit --delete removes them (exit 4: found and deleted).
	const orphans = 200
	if _, err := cell.Admin.Exec("UPDATE `" + cell.Name + "`.instances SET deleted = id, deleted_at = NOW() WHERE deleted = 0 AND host IS NOT NULL ORDER BY id LIMIT " + fmt.Sprint(orphans)); err != nil {
		t.Fatal(err)
	}
	run(job{"claims audit --delete", []string{"claims", "audit", "--delete"}, orphans, "orphan", 4})

	// A layout switch of every node.
	run(job{"layout switch", []string{"migrate", "inventory", "--layout", "nested"}, nodes, "node", 0})
	// Provider config files applied to every compute node's root
	// ($COMPUTE_NODE): a custom inventory and a custom trait each.
	yaml := filepath.Join(t.TempDir(), "provider.yaml")
	if err := os.WriteFile(yaml, []byte("meta:\n  schema_version: '1.0'\nproviders:\n  - identification:\n      uuid: '$COMPUTE_NODE'\n"+
		"    inventories:\n      additional:\n        - CUSTOM_LICENSE: {total: 4}\n    traits:\n      additional: [CUSTOM_RACK_A]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	run(job{"provider apply", []string{"provider", "apply", "--file", yaml}, nodes, "provider", 0})
	if n := count(placement, "SELECT COUNT(*) FROM DB.inventories i JOIN DB.resource_classes rc ON rc.id = i.resource_class_id WHERE rc.name = 'CUSTOM_LICENSE'"); n != nodes {
		t.Errorf("provider apply: %d CUSTOM_LICENSE inventories, want one on each of the %d compute nodes", n, nodes)
	}
	if n := count(placement, "SELECT COUNT(*) FROM DB.resource_provider_traits rt JOIN DB.traits tr ON tr.id = rt.trait_id WHERE tr.name = 'CUSTOM_RACK_A'"); n != nodes {
		t.Errorf("provider apply: CUSTOM_RACK_A on %d providers, want each of the %d compute nodes", n, nodes)
	}
	if n := count(placement, "SELECT COUNT(*) FROM DB.resource_provider_aggregates"); n == 0 {
		t.Errorf("no aggregate membership in Placement after migrate aggregates")
	}
	if n := count(placement, "SELECT COUNT(DISTINCT consumer_id) FROM DB.allocations"); n == 0 {
		t.Errorf("no allocation in Placement after migrate allocations")
	}
}
