package cmd_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

func TestSampleCloudAndComputeNodeList(t *testing.T) {
	db := filepath.Join(t.TempDir(), "rpctl.db")
	out, errOut, code := rpctl(t, "--db", db, "sample-cloud", "--nodes", "12", "--seed", "3", "--bad-rows", "2", "-f", "json")
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
	if _, errOut, code := rpctl(t, "--db", db, "sample-cloud"); code != 255 || !strings.Contains(errOut, "already has") {
		t.Fatalf("second run: exit %d: %s", code, errOut)
	}

	out, errOut, code = rpctl(t, "--db", db, "compute-node", "list", "-f", "value")
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
	all, _, _ := rpctl(t, "--db", db, "compute-node", "list", "--all", "-f", "value")
	if n := len(strings.Split(strings.TrimSpace(all), "\n")); n <= len(lines) || !strings.Contains(all, " True") {
		t.Errorf("--all: %d rows, no deleted one:\n%s", n, all)
	}
	if _, errOut, code := rpctl(t, "--db", db, "compute-node", "list", "--cell", "nope"); code != 255 || !strings.Contains(errOut, `no cell named "nope"`) {
		t.Errorf("unknown cell: exit %d: %s", code, errOut)
	}
	out, _, _ = rpctl(t, "--db", db, "compute-node", "list", "-f", "json")
	var rows []map[string]any
	if err := json.Unmarshal([]byte(out), &rows); err != nil || rows[0]["uuid"] != nil || rows[0]["cell"] != "cell1" {
		t.Errorf("json: %v %v", err, rows[0])
	}
}
