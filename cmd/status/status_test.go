package status_test

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/cmd/internal/cmdtest"
	"github.com/rpctl/rpctl/internal/testdb"
)

func results(t *testing.T, js string) map[string]int {
	t.Helper()
	var doc cmdtest.StatusDoc
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, js)
	}
	if doc.Name != "Upgrade Check Results" {
		t.Errorf("name %q", doc.Name)
	}
	m := map[string]int{}
	for _, c := range doc.Checks {
		m[c.Check] = c.Result
	}
	return m
}

// TestStatusSampleCloudMigration is the proof: on a sample cloud in
// MariaDB (two cells, API, Placement) status exits 1 with the UUID, Resource
// Providers and Allocation Ratios checks warning; after `rpctl migrate all`
// it exits 0.
func TestStatusSampleCloudMigration(t *testing.T) {
	c1, c2, api, p := testdb.NewMySQL(t), testdb.NewMySQL(t), testdb.NewMySQL(t), testdb.NewMySQL(t)
	dbs := []string{"--cell-db", c1.URL, "--cell-db", c2.URL, "--api-db", api.URL, "--placement-db", p.URL}
	with := func(args ...string) []string { return append(append([]string(nil), dbs...), args...) }
	if out, errOut, code := cmdtest.Rpctl(t, with("init")...); code != 0 {
		t.Fatalf("init exit %d\n%s%s", code, out, errOut)
	}
	if out, errOut, code := cmdtest.Rpctl(t, with("sample-cloud", "--nodes", "60", "--seed", "5")...); code != 0 {
		t.Fatalf("sample-cloud exit %d\n%s%s", code, out, errOut)
	}

	// The whole run: nova-status' and placement-status' checks first. No
	// nova.conf gives [placement] credentials or [service_user]: those two
	// fail, as nova-status' would.
	all, errOut, code := cmdtest.Rpctl(t, with("status", "--json")...)
	if code != 2 {
		t.Errorf("before migration, every check: exit %d, want 2\n%s%s", code, all, errOut)
	}
	var doc cmdtest.StatusDoc
	if err := json.Unmarshal([]byte(all), &doc); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range doc.Checks {
		names = append(names, c.Check)
	}
	wantNames := "Cells v2, Placement API, Cinder API, Policy File JSON to YAML Migration, Older than N-1 computes, hw_machine_type unset, Service User Token Configuration, " +
		"Missing Root Provider IDs, Incomplete Consumers, Policy File JSON to YAML Migration, " +
		"Compute Node UUIDs, Resource Providers, Inventory Drift, Compute Node Inventories, Allocation Ratios, Instances Without Allocations, Over-committed Providers, Orphaned Providers, Service Versions, Aggregates in Sync, Database Cluster"
	if strings.Join(names, ", ") != wantNames {
		t.Errorf("checks:\n%s\nwant\n%s", strings.Join(names, ", "), wantNames)
	}
	if got := results(t, all); got["Placement API"] != 2 || got["Service User Token Configuration"] != 2 || got["Cells v2"] != 0 {
		t.Errorf("upstream checks without nova.conf: %v", got)
	}

	// rpctl's own checks, the migration's subject.
	out, errOut, code := cmdtest.Rpctl(t, with("status", "--check", "rpctl", "--json")...)
	if code != 1 {
		t.Errorf("before migration: exit %d, want 1\n%s%s", code, out, errOut)
	}
	got := results(t, out)
	for name, want := range map[string]int{
		"Compute Node UUIDs": 1, "Resource Providers": 1, "Allocation Ratios": 1, "Instances Without Allocations": 1,
		"Inventory Drift": 0, "Over-committed Providers": 0, "Orphaned Providers": 0, "Service Versions": 0, "Aggregates in Sync": 1,
	} {
		if got[name] != want {
			t.Errorf("before migration: %s = %d, want %d\n%s", name, got[name], want, out)
		}
	}
	table, _, tcode := cmdtest.Rpctl(t, with("status", "--check", "rpctl")...)
	if tcode != code || !strings.HasPrefix(table, "+---") || strings.Contains(table, "\x1b[") {
		t.Errorf("table: exit %d, plain table expected:\n%s", tcode, table)
	}
	// issue 39: -f json is the rows, result named as in every other
	// format; --json is oslo.upgradecheck's document.
	if fj, _, _ := cmdtest.Rpctl(t, with("-f", "json", "status")...); !sameChecks(t, fj, all) {
		t.Errorf("-f json says other than --json:\n%s\n%s", fj, all)
	}

	if out, errOut, code := cmdtest.Rpctl(t, with("migrate", "all")...); code != 0 {
		t.Errorf("migrate all: exit %d\n%s%s", code, out, errOut)
	}
	out, errOut, code = cmdtest.Rpctl(t, with("status", "--check", "rpctl", "--check", "placement-status")...)
	if code != 0 {
		t.Errorf("after migrate all: exit %d, want 0\n%s%s", code, out, errOut)
	}
}

// TestStatusEmbedded runs status on the embedded SQLite file: the same
// checks, the same exit code, --json equal to -f json.
func TestStatusEmbedded(t *testing.T) {
	db := filepath.Join(t.TempDir(), "cloud.db")
	if out, errOut, code := cmdtest.Rpctl(t, "--db", db, "sample-cloud", "--nodes", "30", "--seed", "3"); code != 0 {
		t.Fatalf("sample-cloud exit %d\n%s%s", code, out, errOut)
	}
	out, errOut, code := cmdtest.Rpctl(t, "--db", db, "status", "--json")
	// No nova.conf: Placement API and Service User Token Configuration
	// fail as nova-status' would.
	if code != 2 {
		t.Errorf("exit %d, want 2\n%s%s", code, out, errOut)
	}
	got := results(t, out)
	if got["Compute Node UUIDs"] != 1 || got["Allocation Ratios"] != 1 || got["Resource Providers"] != 1 ||
		got["Placement API"] != 2 || got["Service User Token Configuration"] != 2 || got["Cells v2"] != 0 {
		t.Errorf("unexpected results %v", got)
	}
	own, _, ocode := cmdtest.Rpctl(t, "--db", db, "status", "--check", "rpctl", "--json")
	if ocode != 1 || strings.Contains(own, "Cells v2") || !strings.Contains(own, "Compute Node UUIDs") {
		t.Errorf("--check rpctl: exit %d, want 1 and rpctl's checks only\n%s", ocode, own)
	}
	if fj, _, _ := cmdtest.Rpctl(t, "--db", db, "-f", "json", "status"); !sameChecks(t, fj, out) {
		t.Errorf("-f json says other than --json:\n%s\n%s", fj, out)
	}
	if yj, _, _ := cmdtest.Rpctl(t, "--db", db, "-f", "yaml", "status", "--check", "rpctl"); !strings.Contains(yj, "result: Warning") {
		t.Errorf("-f yaml: %s", yj)
	}
	if fj, _, _ := cmdtest.Rpctl(t, "--db", db, "-f", "json", "status", "--check", "rpctl", "-c", "result"); !strings.Contains(fj, `"result": "Warning"`) || strings.Contains(fj, `"check"`) {
		t.Errorf("-f json -c result: %s", fj)
	}
	alias, _, acode := cmdtest.Rpctl(t, "--db", db, "upgrade", "check", "--json")
	if alias != out || acode != code {
		t.Errorf("rpctl upgrade check differs from rpctl status: exit %d\n%s", acode, alias)
	}
	one, _, ocode := cmdtest.Rpctl(t, "--db", db, "status", "--check", "service-versions", "--json")
	if ocode != 0 || !strings.Contains(one, `"checks": [{"check": "Service Versions", "result": 0, "details": null, "source": "the cell database of the --db file"}]`) {
		t.Errorf("--check service-versions: exit %d\n%s", ocode, one)
	}
}

// TestStatusUsageErrors: a bad command line exits 255, never 1 or 2 (which
// CI would read as the cloud's warning or failure), with one line.
func TestStatusUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"status", "--check", "nope"},
		{"status", "--bogus"},
		{"status", "--min-service-version", "0"},
		{"-f", "xml", "status"},
		{"upgrade", "check", "--min-service-version", "abc"},
		{"status", "--release", "2025.2"},
		{"upgrade", "check", "--release", "epoxy"},
	} {
		out, errOut, code := cmdtest.Rpctl(t, args...)
		if code != 255 {
			t.Errorf("%q: exit %d, want 255", args, code)
		}
		if out != "" || strings.Count(errOut, "\n") != 1 || !strings.HasPrefix(errOut, "rpctl: ") {
			t.Errorf("%q: want one error line, got stdout %q stderr %q", args, out, errOut)
		}
	}
}

// TestStatusUnknownRelease: --release names what rpctl knows.
func TestStatusUnknownRelease(t *testing.T) {
	_, errOut, code := cmdtest.Rpctl(t, "status", "--release", "2025.2")
	if want := `rpctl: --release: rpctl knows the rules of zed, 2023.1, 2023.2, 2024.1, 2024.2, 2025.1, not "2025.2"` + "\n"; code != 255 || errOut != want {
		t.Errorf("exit %d, stderr %q; want 255, %q", code, errOut, want)
	}
}

// TestStatusNoDatabases: nothing configured fails every check that needs a
// database, saying how to configure it, and exits 255: a config error is not
// a verdict on the cloud.
func TestStatusNoDatabases(t *testing.T) {
	out, _, code := cmdtest.Rpctl(t, "status", "--json")
	if code != 255 {
		t.Errorf("exit %d, want 255\n%s", code, out)
	}
	if !bytes.Contains([]byte(out), []byte("no database configured for the Nova cell")) {
		t.Errorf("no hint how to configure the cell database:\n%s", out)
	}
}

// TestStatusComputeInventoriesEmbedded: after `migrate all` every provider
// holds what its nova-compute would report; an inventory edited by hand
// warns (exit 1) naming the node and the class, and passes again once
// `migrate inventory --force` rewrote it, or once the edit is undone.
func TestStatusComputeInventoriesEmbedded(t *testing.T) {
	run := onEmbedded(t)
	run(0, "sample-cloud", "--nodes", "12", "--seed", "3")
	run(0, "migrate", "all")
	check := []string{"status", "--check", "compute-node-inventories", "--json"}
	if out := run(0, check...); results(t, out)["Compute Node Inventories"] != 0 {
		t.Fatalf("after migrate all:\n%s", out)
	}
	const node = "cmp1-00001.example.org"
	for _, undo := range []func(){
		func() { run(0, "migrate", "inventory", "--force") },
		func() { run(0, "inventory", "set", node, "MEMORY_MB:reserved=512", "--amend") },
	} {
		run(0, "inventory", "set", node, "MEMORY_MB:reserved=1024", "--amend")
		out := run(1, check...)
		if !strings.Contains(out, node+" MEMORY_MB reserved 1024->512") {
			t.Errorf("the warning does not name the node, class and field:\n%s", out)
		}
		run(1, "status", "--check", "rpctl") // rpctl's whole run warns too
		undo()
		if out := run(0, check...); results(t, out)["Compute Node Inventories"] != 0 {
			t.Errorf("after the undo:\n%s", out)
		}
	}
	run(0, "status", "--check", "rpctl")
}

// TestStatusComputeInventoriesNested: a cloud migrated with --layout
// nested is checked against the nested plan (Success, the nodes named with
// the warning that nova-compute rewrites them); an edit of a NUMA child is
// a Warning naming the child and the class.
func TestStatusComputeInventoriesNested(t *testing.T) {
	run := onEmbedded(t)
	run(0, "sample-cloud", "--nodes", "6", "--seed", "3")
	run(0, "migrate", "all", "--layout", "nested")
	check := []string{"status", "--check", "compute-node-inventories", "--json"}
	out := run(0, check...)
	if !strings.Contains(out, "with --layout nested") || !strings.Contains(out, "rewrites these when it starts") {
		t.Errorf("the nested nodes are not named:\n%s", out)
	}
	const child = "cmp1-00001.example.org_NUMA0"
	run(0, "inventory", "set", child, "MEMORY_MB:reserved=7", "--amend")
	out = run(1, check...)
	if !strings.Contains(out, child+" MEMORY_MB reserved 7->") {
		t.Errorf("the warning does not name the NUMA child, class and field:\n%s", out)
	}
	run(0, "migrate", "inventory", "--layout", "nested")
	run(0, check...)
}

// onEmbedded returns a runner of rpctl commands on a new embedded database
// file that fails the test unless a command exits as wanted, and returns
// its stdout.
func onEmbedded(t *testing.T) func(want int, args ...string) string {
	db := filepath.Join(t.TempDir(), "cloud.db")
	return func(want int, args ...string) string {
		t.Helper()
		out, errOut, code := cmdtest.Rpctl(t, append([]string{"--db", db}, args...)...)
		if code != want {
			t.Fatalf("%q: exit %d, want %d\n%s%s", args, code, want, out, errOut)
		}
		return out
	}
}

// sameChecks tells whether rows (-f json: [{"check", "result": name,
// "details"}]) say what doc (--json: oslo.upgradecheck's document, result
// 0/1/2) says, check by check.
func sameChecks(t *testing.T, rows, doc string) bool {
	t.Helper()
	var r []struct {
		Check, Result string
		Details       *string
	}
	var d struct {
		Checks []struct {
			Check   string
			Result  int
			Details *string
		}
	}
	if err := json.Unmarshal([]byte(rows), &r); err != nil {
		t.Errorf("-f json: %v\n%s", err, rows)
		return false
	}
	if err := json.Unmarshal([]byte(doc), &d); err != nil {
		t.Errorf("--json: %v\n%s", err, doc)
		return false
	}
	names := []string{"Success", "Warning", "Failure"}
	if len(r) != len(d.Checks) || len(r) == 0 {
		return false
	}
	for i, c := range d.Checks {
		det := func(p *string) string {
			if p == nil {
				return ""
			}
			return *p
		}
		if r[i].Check != c.Check || r[i].Result != names[c.Result] || det(r[i].Details) != det(c.Details) {
			t.Logf("check %d: %+v vs %+v", i, r[i], c)
			return false
		}
	}
	return true
}
