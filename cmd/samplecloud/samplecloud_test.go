package samplecloud_test

import (
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/cmd/internal/cmdtest"
	"github.com/rpctl/rpctl/internal/nova"
	"github.com/rpctl/rpctl/internal/testdb"
	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/apidb"
	"github.com/rpctl/rpctl/storage/schema"
)

func TestSampleCloudAndComputeNodeList(t *testing.T) {
	db := filepath.Join(t.TempDir(), "rpctl.db")
	out, errOut, code := cmdtest.Rpctl(t, "--db", db, "sample-cloud", "--nodes", "12", "--seed", "3", "--bad-rows", "2", "-f", "json")
	if code != 0 {
		t.Fatalf("sample-cloud: exit %d: %s", code, errOut)
	}
	var sum []struct {
		Cell         string `json:"cell"`
		ComputeNodes *int   `json:"compute_nodes"`
		Bad          *int   `json:"bad_compute_nodes"`
		HostMappings *int   `json:"host_mappings"`
	}
	if err := json.Unmarshal([]byte(out), &sum); err != nil || len(sum) != 2 || *sum[0].ComputeNodes != 12 || *sum[0].Bad != 2 || *sum[1].HostMappings != 14 {
		t.Fatalf("summary %s (%v)", out, err)
	}
	if _, errOut, code := cmdtest.Rpctl(t, "--db", db, "sample-cloud"); code != 255 || !strings.Contains(errOut, "already has") {
		t.Fatalf("second run: exit %d: %s", code, errOut)
	}

	out, errOut, code = cmdtest.Rpctl(t, "--db", db, "compute-node", "list", "-f", "value")
	if code != 0 {
		t.Fatalf("list: exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 14 {
		t.Fatalf("%d live rows, want 14:\n%s", len(lines), out)
	}
	// Node 1 has a NULL uuid and Stein's default ratios; node 2 a uuid and
	// 0.0 ratios (the first nodes' formats do not depend on the seed).
	if f := strings.Fields(lines[0]); f[2] != "-" || f[8] != "16.0" || f[9] != "1.5" || f[10] != "1.0" || f[11] != "False" {
		t.Errorf("row 1: %q", lines[0])
	}
	if f := strings.Fields(lines[1]); f[2] == "-" || f[8] != "0.0" {
		t.Errorf("row 2: %q", lines[1])
	}
	all, _, _ := cmdtest.Rpctl(t, "--db", db, "compute-node", "list", "--all", "-f", "value")
	if n := len(strings.Split(strings.TrimSpace(all), "\n")); n <= len(lines) || !strings.Contains(all, " True") {
		t.Errorf("--all: %d rows, no deleted one:\n%s", n, all)
	}
	if _, errOut, code := cmdtest.Rpctl(t, "--db", db, "compute-node", "list", "--cell", "nope"); code != 255 || !strings.Contains(errOut, `no cell named "nope"`) {
		t.Errorf("unknown cell: exit %d: %s", code, errOut)
	}
	out, _, _ = cmdtest.Rpctl(t, "--db", db, "compute-node", "list", "-f", "json")
	var rows []map[string]any
	if err := json.Unmarshal([]byte(out), &rows); err != nil || rows[0]["uuid"] != nil || rows[0]["cell"] != "cell1" {
		t.Errorf("json: %v %v", err, rows[0])
	}
}

// TestSampleCloudCoherent (issue 21): sample-cloud maps cell0 as Nova
// always has it, so cell0's database must exist with the cell schema (as
// map_cell0 then db sync leave it), reachable through its mapping's URL by
// Nova's own SQLAlchemy; a Placement database given gets Placement's schema,
// which the real placement-api then serves; and status runs on the result.
func TestSampleCloudCoherent(t *testing.T) {
	t.Parallel()
	for _, backend := range []string{"sqlite-files", "sqlite-embedded", "mariadb"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			var dbArgs []string
			var apiURL, placementURL string
			switch backend {
			case "sqlite-files":
				apiURL, placementURL = "sqlite:///"+filepath.Join(dir, "api.db"), "sqlite:///"+filepath.Join(dir, "placement.db")
				dbArgs = []string{"--cell-db", "sqlite:///" + filepath.Join(dir, "cell1.db"), "--api-db", apiURL, "--placement-db", placementURL}
			case "sqlite-embedded":
				apiURL = "sqlite:///" + filepath.Join(dir, "cloud.db")
				dbArgs = []string{"--db", filepath.Join(dir, "cloud.db")}
			case "mariadb":
				cell, api, placement := testdb.NewMySQL(t), testdb.NewMySQL(t), testdb.NewMySQL(t)
				apiURL, placementURL = api.URL, placement.URL
				dbArgs = []string{"--cell-db", cell.URL, "--api-db", apiURL, "--placement-db", placementURL}
			}
			if _, errOut, code := cmdtest.Rpctl(t, append(dbArgs, "sample-cloud", "--nodes", "4")...); code != 0 {
				t.Fatalf("sample-cloud: exit %d: %s", code, errOut)
			}
			ctx := context.Background()
			api := testdb.Open(t, apiURL, storage.RoleAPI)
			mappings, err := apidb.ListCellMappings(ctx, api)
			if err != nil || len(mappings) != 2 || mappings[0].UUID != nova.Cell0UUID || mappings[0].Name != "cell0" || mappings[0].DatabaseConnection == mappings[1].DatabaseConnection {
				t.Fatalf("cell mappings %+v (%v): want cell0 (its own database) and cell1", mappings, err)
			}
			cell0 := testdb.Open(t, mappings[0].DatabaseConnection, storage.RoleCell)
			for _, table := range schema.Tables(schema.PartCell) {
				if ok, err := cell0.TableExists(ctx, table); !ok || err != nil {
					t.Errorf("cell0 (%s) has no table %s (%v)", cell0.Label(), table, err)
				}
			}
			// Nova reaches cell0 through the mapping with SQLAlchemy.
			testdb.RequirePython(t, "sqlalchemy", "pymysql")
			script := "import sys, sqlalchemy as sa; e = sa.create_engine(sys.argv[1]); print(' '.join(sorted(sa.inspect(e).get_table_names())))"
			out, err := exec.Command(testdb.Python, "-c", script, mappings[0].DatabaseConnection).CombinedOutput()
			if err != nil || !strings.Contains(" "+string(out), " instances ") || !strings.Contains(string(out), "compute_nodes") {
				t.Errorf("SQLAlchemy on cell0's mapping: %v: %s", err, out)
			}
			if placementURL != "" {
				// The real placement-api serves the schema sample-cloud
				// created: an empty, pre-migration Placement.
				code, body := testdb.PlacementDo(t, "GET", testdb.PlacementAPI(t, placementURL), "/resource_providers", "1.39", "")
				if code != 200 || !strings.Contains(string(body), `"resource_providers": []`) {
					t.Errorf("placement-api on sample-cloud's Placement database: %d %s", code, body)
				}
			}
			if out, errOut, code := cmdtest.Rpctl(t, append(dbArgs, "status", "--check", "rpctl", "-f", "value")...); code != 1 || !strings.Contains(out, "Compute Node UUIDs Warning") {
				t.Errorf("status after sample-cloud: exit %d, want 1 (a pre-migration cloud warns)\n%s%s", code, out, errOut)
			}
		})
	}
}
