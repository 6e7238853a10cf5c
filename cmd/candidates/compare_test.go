package candidates_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/cmd/internal/cmdtest"
)

func TestCandidatesCompare(t *testing.T) {
	my, c := cmdtest.LivePlacementDB(t)
	cmdtest.SmallCloud(t, c, 4)
	api := []string{"--os-endpoint", my.Base, "--os-token", "admin"}
	for _, tc := range []struct {
		name     string
		args     []string
		wantCode int
		want     string
	}{
		{"API only", []string{"candidates", "--compare", "--resources", "VCPU:2,MEMORY_MB:1024"}, 0, "The answers agree."},
		{"API and database", []string{"--placement-db", my.URL, "candidates", "--compare", "--resources", "VCPU:2", "--required", "CUSTOM_GOLD"}, 0, "The answers agree."},
		{"nested and aggregates", []string{"candidates", "--compare", "--resources", "VCPU:1", "--group", "_N:resources=PCPU:2",
			"--group-policy", "none", "--member-of", "aaaaaaaa-0000-4000-8000-000000000000"}, 0, "The answers agree."},
		{"old microversion", []string{"candidates", "--compare", "--resources", "VCPU:1", "--microversion", "1.12"}, 0, "The answers agree."},
		{"both refuse", []string{"candidates", "--compare", "--resources", "VCPU:x"}, 0, "The answers agree."},
		{"in_tree by name", []string{"candidates", "--compare", "--resources", "PCPU:1", "--in-tree", "hostb"}, 0, "The answers agree."},
		{"no API named", []string{"candidates", "--compare", "--resources", "VCPU:1"}, 2, "--compare needs the live Placement API"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := tc.args
			if tc.name != "no API named" {
				args = append(append([]string{}, api...), args...)
			}
			out, errOut, code := cmdtest.Rpctl(t, args...)
			if code != tc.wantCode || !strings.Contains(out+errOut, tc.want) {
				t.Fatalf("exit %d, want %d and %q\nstdout: %s\nstderr: %s", code, tc.wantCode, tc.want, out, errOut)
			}
		})
	}

	// A database copy that lags behind the API: the differences are named
	// and the exit code is 1.
	stale, sc := cmdtest.LivePlacementDB(t)
	cmdtest.SmallCloud(t, sc, 3)
	out, errOut, code := cmdtest.Rpctl(t, append(api, "--placement-db", stale.URL, "-f", "json", "candidates", "--compare", "--resources", "VCPU:1")...)
	var doc struct {
		Equal       bool     `json:"equal"`
		Differences []string `json:"differences"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != 1 || doc.Equal || len(doc.Differences) == 0 {
		t.Fatalf("stale copy: exit %d, %v\nstdout: %s\nstderr: %s", code, err, out, errOut)
	}
	if !strings.Contains(strings.Join(doc.Differences, "\n"), "only from Placement") {
		t.Errorf("differences do not name Placement's extra candidates: %v", doc.Differences)
	}

	// Placement unreachable: 255, never 1.
	_, errOut, code = cmdtest.Rpctl(t, "--os-endpoint", "http://127.0.0.1:1", "--os-token", "x", "candidates", "--compare", "--resources", "VCPU:1")
	if code != 255 || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
		t.Fatalf("dead API: exit %d, stderr %q", code, errOut)
	}
}
