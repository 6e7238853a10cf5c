package migrate_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/cmd/internal/cmdtest"
	"github.com/rpctl/rpctl/internal/testdb"
)

// TestMigrateAllBadRowsThreeCells (issue 34's proof): a 3-cell cloud whose
// cell1 holds 3 bad compute node rows (sample-cloud --bad-rows 3: a
// truncated pci_stats, a truncated numa_topology, and three negative
// totals in one row). One `migrate all` migrates cells 2 and 3 fully —
// inventories, ratios, allocations and every aggregate membership of
// their hosts (the aggregate sync used to stop at the first bad host,
// leaving 16 memberships of all three cells out) — and cell1 but its bad
// rows; exit 2. The summary lists exactly the skipped records, the row
// with three bad columns once with all three, and each aggregate host left
// out naming the row that caused it and its bad columns; with no
// --log-file it says nothing was logged.
func TestMigrateAllBadRowsThreeCells(t *testing.T) {
	if !testdb.MySQLWanted() {
		t.Skip("skipping: needs MariaDB (RPCTL_TEST_MYSQL); run `make test`")
	}
	c1, c2, c3, api, place := testdb.NewMySQL(t), testdb.NewMySQL(t), testdb.NewMySQL(t), testdb.NewMySQL(t), testdb.NewMySQL(t)
	all := []string{"--cell-db", c1.URL, "--cell-db", c2.URL, "--cell-db", c3.URL, "--api-db", api.URL, "--placement-db", place.URL}
	if out, errOut, code := cmdtest.Rpctl(t, append(all, "sample-cloud", "--nodes", "12", "--seed", "7", "--bad-rows", "3")...); code != 0 {
		t.Fatalf("sample-cloud: exit %d\n%s%s", code, out, errOut)
	}
	// An instance on the host of the row with three bad columns: it
	// cannot be healed, and says why (not Placement's "Unable to find
	// resource provider", which rpctl candidates cannot explain).
	if _, err := c1.Admin.Exec("UPDATE `" + c1.Name + "`.instances SET host = 'bad-0003', node = 'bad-0003.example.org' WHERE deleted = 0 AND vm_state = 'active' AND task_state IS NULL ORDER BY id LIMIT 1"); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := cmdtest.Rpctl(t, append(all, "migrate", "all")...)
	t.Logf("migrate all: exit %d\n%s", code, errOut)
	if code != 2 {
		t.Errorf("migrate all: exit %d, want 2 (rows skipped)", code)
	}
	summary := errOut[strings.Index(errOut, "Skipped, not migrated"):]
	lines := strings.Split(strings.TrimSpace(summary), "\n")
	if lines[0] != "Skipped, not migrated (7):" {
		t.Fatalf("summary header %q", lines[0])
	}
	listed := lines[1:8]
	wantLines := []*regexp.Regexp{
		regexp.MustCompile(`^  migrate_compute_node_inventory: cell \w+: compute node id=\d+ \(bad-0001\.example\.org\): pci_stats=.*: unexpected end of JSON input$`),
		regexp.MustCompile(`^  migrate_compute_node_inventory: cell \w+: compute node id=\d+ \(bad-0002\.example\.org\): numa_topology=.*: unexpected end of JSON input$`),
		regexp.MustCompile(`^  migrate_compute_node_inventory: cell \w+: compute node id=(\d+) \(bad-0003\.example\.org\): vcpus=-16: [^;]+; memory_mb=-65536: [^;]+; local_gb=-1: [^;]+$`),
		regexp.MustCompile(`^  aggregates: cell \w+: host bad-0003 \(aggregates az1\): not placed in its aggregates: migrate_compute_node_inventory skipped its compute node \(cell \w+: compute node id=\d+\), so it has no resource provider \(bad: vcpus, memory_mb, local_gb\); fix that row`),
		regexp.MustCompile(`^  aggregates: cell \w+: host bad-0001 \(aggregates [^)]+\): .*\(bad: pci_stats\)`),
		regexp.MustCompile(`^  aggregates: cell \w+: host bad-0002 \(aggregates [^)]+\): .*\(bad: numa_topology\)`),
		regexp.MustCompile(`^  heal_allocations: cell \w+: instance [-0-9a-f]{36} \(bad-0003\): not healed: migrate_compute_node_inventory skipped its compute node \(cell \w+: compute node id=\d+\), so it has no resource provider \(bad: vcpus, memory_mb, local_gb\); fix that row`),
	}
	for i, re := range wantLines {
		if i >= len(listed) || !re.MatchString(listed[i]) {
			t.Errorf("summary line %d: %q, want %s", i+1, listed[min(i, len(listed)-1)], re)
		}
	}
	if !strings.Contains(summary, "Nothing was logged: these lines are on standard error only (give --log-file FILE") {
		t.Errorf("the summary does not say nothing was logged:\n%s", summary)
	}
	if strings.Count(errOut, "Skipped migrate_compute_node_inventory") != 3 {
		t.Errorf("the inventory step skipped %d rows, want 3 (one line each, every bad column in it)", strings.Count(errOut, "Skipped migrate_compute_node_inventory"))
	}

	// Cells 2 and 3: nothing left to do, by rpctl's checks of those cells.
	status := func(args ...string) map[string]string {
		t.Helper()
		out, errOut, _ := cmdtest.Rpctl(t, append(args, "status", "--check", "rpctl", "--json")...)
		var doc cmdtest.StatusDoc
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatalf("status: %v\n%s%s", err, out, errOut)
		}
		got := map[string]string{}
		for _, c := range doc.Checks {
			d := ""
			if c.Details != nil {
				d = *c.Details
			}
			got[c.Check] = []string{"Success", "Warning", "Failure"}[c.Result] + " " + d
		}
		return got
	}
	rest := status("--cell-db", c2.URL, "--cell-db", c3.URL, "--placement-db", place.URL)
	for _, check := range []string{"Compute Node UUIDs", "Resource Providers", "Inventory Drift", "Compute Node Inventories", "Allocation Ratios", "Instances Without Allocations", "Over-committed Providers"} {
		if !strings.HasPrefix(rest[check], "Success") {
			t.Errorf("cells 2 and 3: %s: %s", check, rest[check])
		}
	}
	// The whole cloud: only cell1's bad rows are left, and the only
	// aggregate memberships missing are the bad hosts'.
	whole := status(all...)
	if w := whole["Compute Node UUIDs"]; !strings.HasPrefix(w, "Warning 3 compute nodes have a NULL uuid") || !strings.Contains(w, "bad-0001.example.org, bad-0002.example.org, bad-0003.example.org") {
		t.Errorf("Compute Node UUIDs: %s", w)
	}
	agg := whole["Aggregates in Sync"]
	if strings.Contains(agg, "missing from Placement") || !strings.Contains(agg, "cannot be mirrored") {
		t.Errorf("Aggregates in Sync after migrate all: %s", agg)
	}
	for _, h := range []string{"bad-0001", "bad-0002", "bad-0003"} {
		if !strings.Contains(agg, h) {
			t.Errorf("Aggregates in Sync does not name %s: %s", h, agg)
		}
	}
	if strings.Contains(agg, "cmp") {
		t.Errorf("a good host's memberships are still missing: %s", agg)
	}

	// Again, with --log-file: the same rows are skipped (nothing else is
	// left), and they are in the log.
	logFile := filepath.Join(t.TempDir(), "migrate.log")
	_, errOut, code = cmdtest.Rpctl(t, append(all, "--log-file", logFile, "migrate", "all")...)
	if code != 2 || !strings.Contains(errOut, "Skipped, not migrated (7):") || !strings.Contains(errOut, "These are also in --log-file "+logFile) {
		t.Errorf("second run: exit %d\n%s", code, errOut)
	}
	logged, err := os.ReadFile(logFile)
	if err != nil || strings.Count(string(logged), "msg=skipped") != 7 || !strings.Contains(string(logged), "memory_mb=-65536") {
		t.Errorf("the log holds %d skipped records (%v):\n%s", strings.Count(string(logged), "msg=skipped"), err, logged)
	}
}
