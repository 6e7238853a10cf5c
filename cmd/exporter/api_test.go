package exporter_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/cmd/internal/cmdtest"
	"github.com/rpctl/rpctl/internal/testdb"
)

// TestExporterThroughPlacementAPI (issue 34): with a controller's nova.conf
// alone ([placement] credentials, no Placement database) the exporter
// reads Placement through the real placement-api. On a migrated cloud
// with drift, its capacity series (os-capacity's free capacity per flavor
// and per host, every inventory's allocated and allocatable capacity, the
// usage per project) are those the database path publishes on the same
// rows, sample for sample, and so is capacity -f prometheus; its check
// results equal `rpctl status --json` through the same API; the audit
// publishes.
func TestExporterThroughPlacementAPI(t *testing.T) {
	if !testdb.MySQLWanted() {
		t.Skip("skipping: needs MariaDB (RPCTL_TEST_MYSQL) and python3-placement; run `make test`")
	}
	cell, api, place := testdb.NewMySQL(t), testdb.NewMySQL(t), testdb.NewMySQL(t)
	dbs := []string{"--cell-db", cell.URL, "--api-db", api.URL}
	withDB := append(append([]string{}, dbs...), "--placement-db", place.URL)
	for _, args := range [][]string{
		append(withDB, "sample-cloud", "--nodes", "6", "--seed", "34"),
		append(withDB, "migrate", "all"),
	} {
		if out, errOut, code := cmdtest.Rpctl(t, args...); code != 0 {
			t.Fatalf("%q: exit %d\n%s%s", args, code, out, errOut)
		}
	}
	// Drift: one provider's memory shrunk, so that usage is not all alike.
	out, _, _ := cmdtest.Rpctl(t, append(withDB, "provider", "list", "-f", "value", "-c", "uuid")...)
	mustRpctl(t, append(withDB, "inventory", "set", strings.Fields(out)[0], "MEMORY_MB:total=4096", "--amend")...)

	base := testdb.PlacementAPI(t, place.URL)
	conf := filepath.Join(t.TempDir(), "nova.conf")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf("[placement]\nauth_type = admin_token\ntoken = admin\nendpoint_override = %s\n", base)), 0o600); err != nil {
		t.Fatal(err)
	}
	withAPI := append(append([]string{}, dbs...), "--config-file", conf)

	fromDB := collectOnce(t, nil, withDB...)[0]
	fromAPI := collectOnce(t, nil, withAPI...)[0]
	if len(fromAPI.errors["capacity"]) > 0 || len(fromAPI.errors["audit"]) > 0 {
		t.Errorf("errors through the API: %v", fromAPI.errors)
	}
	capacityLines := func(page string) []string {
		var out []string
		for _, l := range strings.Split(page, "\n") {
			if strings.HasPrefix(l, "openstack_") {
				out = append(out, l)
			}
		}
		return out
	}
	want, got := capacityLines(fromDB.page), capacityLines(fromAPI.page)
	if len(want) < 10 || strings.Join(want, "\n") != strings.Join(got, "\n") {
		t.Errorf("capacity series through the API differ from the database path's (%d vs %d lines)\ndatabase:\n%s\nAPI:\n%s", len(want), len(got), strings.Join(want, "\n"), strings.Join(got, "\n"))
	}
	if !strings.Contains(fromDB.page, "openstack_project_usage{") {
		t.Errorf("the database path published no project usage: nothing compared")
	}
	if !strings.Contains(fromAPI.page, "\nrpctl_claims_orphans ") {
		t.Errorf("no audit through the API (rpctl_claims_orphans)")
	}
	dbProm, _, _ := cmdtest.Rpctl(t, append(withDB, "capacity", "-f", "prometheus")...)
	apiProm, errOut, code := cmdtest.Rpctl(t, append(withAPI, "capacity", "-f", "prometheus")...)
	if code != 0 || apiProm != dbProm || !strings.Contains(apiProm, "openstack_project_usage{") {
		t.Errorf("capacity -f prometheus through the API (exit %d) differs from the database path's\n%s\n%s", code, rowDiff(dbProm, apiProm), errOut)
	}
	// The checks through the API: the exporter's results are status's.
	res, _ := cmdtest.ExporterEqualsStatus(t, withAPI, nil)
	if len(res) == 0 {
		t.Errorf("no check results through the API")
	}
}

// rowDiff lists the lines only one side has.
func rowDiff(want, got string) string {
	count := map[string]int{}
	for _, l := range strings.Split(want, "\n") {
		count[l]++
	}
	for _, l := range strings.Split(got, "\n") {
		count[l]--
	}
	var b strings.Builder
	for l, n := range count {
		if n > 0 {
			fmt.Fprintf(&b, "- %s\n", l)
		} else if n < 0 {
			fmt.Fprintf(&b, "+ %s\n", l)
		}
	}
	return b.String()
}
