package migrate_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/cmd/internal/cmdtest"
	"github.com/rpctl/rpctl/internal/testdb"
)

// TestMigrateAllThroughPlacementAPI (issue 34): with a controller's
// nova.conf alone ([api_database], [placement] Keystone credentials, no
// Placement database), `migrate all` runs every step it can: the
// compute-node inventories, the aggregate sync and the allocation healing
// go through the real placement-api (checking Keystone tokens), Nova's own
// online migrations need no Placement, and placement-manage's two steps,
// which read rows the API does not show, fail alone saying what to give
// (exit 2, the others run). Afterwards the database says the inventories,
// aggregates and allocations are complete.
func TestMigrateAllThroughPlacementAPI(t *testing.T) {
	if !testdb.MySQLWanted() {
		t.Skip("skipping: needs MariaDB (RPCTL_TEST_MYSQL), python3-placement and keystone; run `make test`")
	}
	const pw = "ks-admin-pw"
	cell, api, place := testdb.NewMySQL(t), testdb.NewMySQL(t), testdb.NewMySQL(t)
	dbs := []string{"--cell-db", cell.URL, "--api-db", api.URL, "--placement-db", place.URL}
	if out, errOut, code := cmdtest.Rpctl(t, append(dbs, "sample-cloud", "--nodes", "8", "--seed", "5")...); code != 0 {
		t.Fatalf("sample-cloud: exit %d\n%s%s", code, out, errOut)
	}
	port := testdb.FreePort(t)
	placementURL := fmt.Sprintf("http://127.0.0.1:%d", port)
	keystoneURL := testdb.Keystone(t, pw, placementURL)
	testdb.PlacementAPIConf(t, place.URL, port, fmt.Sprintf("[keystone_authtoken]\nwww_authenticate_uri = %[1]s\nauth_url = %[1]s\nauth_type = password\nusername = admin\npassword = %[2]s\nproject_name = admin\nuser_domain_name = Default\nproject_domain_name = Default\n", keystoneURL, pw))
	conf := filepath.Join(t.TempDir(), "nova.conf")
	body := fmt.Sprintf("[api_database]\nconnection = %s\n[placement]\nauth_type = password\nauth_url = %s\nusername = admin\npassword = %s\nproject_name = admin\nuser_domain_name = Default\nproject_domain_name = Default\nregion_name = RegionOne\n", api.URL, keystoneURL, pw)
	if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	status := func() map[string]int {
		t.Helper()
		out, errOut, _ := cmdtest.Rpctl(t, append(dbs, "status", "--check", "rpctl", "--json")...)
		var doc cmdtest.StatusDoc
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatalf("status: %v\n%s%s", err, out, errOut)
		}
		got := map[string]int{}
		for _, c := range doc.Checks {
			got[c.Check] = c.Result
		}
		return got
	}
	before := status()
	if before["Resource Providers"] == 0 || before["Aggregates in Sync"] == 0 || before["Instances Without Allocations"] == 0 {
		t.Fatalf("nothing for the API steps to do: %v", before)
	}

	_, dryErr, dryCode := cmdtest.Rpctl(t, "--config-file", conf, "migrate", "all", "--dry-run")
	if dryCode != 2 || !strings.Contains(dryErr, "set_root_provider_ids: would fail: placement-manage's online migrations read and write Placement's database") ||
		strings.Contains(dryErr, "migrate_compute_node_inventory: would fail") {
		t.Errorf("dry run: exit %d\n%s", dryCode, dryErr)
	}
	out, errOut, code := cmdtest.Rpctl(t, "--config-file", conf, "migrate", "all")
	t.Logf("migrate all through the API: exit %d\n%s%s", code, out, errOut)
	if code != 2 {
		t.Errorf("exit %d, want 2 (placement-manage's steps failed, the others ran)", code)
	}
	if strings.Contains(errOut, "Error attempting to run migrate_compute_node_inventory") {
		t.Errorf("the inventory step failed through the API")
	}
	for _, want := range []string{
		"Error attempting to run set_root_provider_ids: placement-manage's online migrations read and write Placement's database",
		"Error attempting to run create_incomplete_consumers: placement-manage's online migrations",
		"give placement.conf with [placement_database] connection, or --placement-db",
		"rows matched query migrate_compute_node_inventory",
		"rows matched query aggregates",
		"rows matched query heal_allocations",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("no %q in the run's messages", want)
		}
	}
	after := status()
	for _, check := range []string{"Resource Providers", "Compute Node UUIDs", "Compute Node Inventories", "Allocation Ratios", "Aggregates in Sync", "Instances Without Allocations", "Over-committed Providers"} {
		if after[check] != 0 {
			t.Errorf("%s after migrate all through the API: %d (before: %d)", check, after[check], before[check])
		}
	}
}
