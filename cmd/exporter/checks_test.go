package exporter_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/cmd/internal/cmdtest"
	"github.com/rpctl/rpctl/status"
)

// TestExporterChecksEqualStatus (issue 34): on clouds where rpctl's checks
// warn and fail (before any migration, with bad rows; after it, with
// drifted, over-committed and orphaned providers), with the checks' flags
// (--release, --min-service-version, --check) and a nova.conf whose policy
// file is JSON, the exporter's rpctl_status_check_result equals `rpctl
// status --json`, check by check. Every check listed in mustWarn warns or
// fails in at least one case, so that the comparison is not only of
// Successes (nova-status' and placement-status' checks are compared the
// same way on Nova's own schemas, in TestUpstreamChecksDifferential).
func TestExporterChecksEqualStatus(t *testing.T) {
	dir := t.TempDir()
	fresh := filepath.Join(dir, "fresh.db")
	mustRpctl(t, "--db", fresh, "sample-cloud", "--nodes", "6", "--seed", "3", "--bad-rows", "3")
	migrated := filepath.Join(dir, "migrated.db")
	mustRpctl(t, "--db", migrated, "sample-cloud", "--nodes", "6", "--seed", "3")
	mustRpctl(t, "--db", migrated, "migrate", "all")
	policy := filepath.Join(dir, "policy.json")
	conf := filepath.Join(dir, "nova.conf")
	if err := os.WriteFile(policy, []byte(`{"os_compute_api:servers:index": ""}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(conf, []byte("[oslo_policy]\npolicy_file = "+policy+"\n[service_user]\nsend_service_user_token = true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// drift makes the migrated cloud's providers disagree with their
	// compute nodes, one of them over-committed, and adds an orphan.
	drift := func(t *testing.T) {
		out, _, _ := cmdtest.Rpctl(t, "--db", migrated, "provider", "list", "-f", "value", "-c", "uuid")
		for _, p := range strings.Fields(out) {
			mustRpctl(t, "--db", migrated, "inventory", "set", p, "MEMORY_MB:total=600", "--amend")
		}
		mustRpctl(t, "--db", migrated, "provider", "create", "orphan-rp")
	}
	warned := map[string]bool{}
	for _, tc := range []struct {
		name   string
		before func(t *testing.T)
		args   []string
		checks []string
	}{
		{name: "before migration, bad rows", args: []string{"--db", fresh}},
		{name: "2025.1, newer services wanted", args: []string{"--db", fresh}, checks: []string{"--release", "2025.1", "--min-service-version", "9999"}},
		{name: "json policy", args: []string{"--db", fresh, "--config-file", conf}},
		{name: "only rpctl's", args: []string{"--db", fresh}, checks: []string{"--check", "rpctl"}},
		{name: "migrated", args: []string{"--db", migrated}},
		{name: "drifted", before: drift, args: []string{"--db", migrated}},
		{name: "drifted, two checks", args: []string{"--db", migrated}, checks: []string{"--check", "inventory-drift", "--check", "Over-committed Providers"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.before != nil {
				tc.before(t)
			}
			res, code := cmdtest.ExporterEqualsStatus(t, tc.args, tc.checks)
			if len(res) == 0 || code == 0 || code == status.ExitCrashed {
				t.Errorf("status: exit %d, %d checks: the case should warn or fail with a verdict", code, len(res))
			}
			for _, r := range res {
				if r.Result != 0 {
					warned[r.Check] = true
				}
			}
		})
	}
	mustWarn := []string{status.CheckPlacementAPI, status.CheckPolicyJSON, status.CheckOldComputes, status.CheckMachineTypeUnset, status.CheckServiceUserToken,
		"Compute Node UUIDs", "Resource Providers", "Inventory Drift", "Compute Node Inventories", "Allocation Ratios", "Instances Without Allocations",
		"Over-committed Providers", "Orphaned Providers", "Service Versions", status.CheckAggregatesInSync}
	for _, c := range mustWarn {
		if !warned[c] {
			t.Errorf("no case made %q warn or fail", c)
		}
	}
	var all []string
	for c := range warned {
		all = append(all, c)
	}
	slices.Sort(all)
	t.Logf("checks compared while warning or failing: %q", all)
}

func mustRpctl(t *testing.T, args ...string) {
	t.Helper()
	if out, errOut, code := cmdtest.Rpctl(t, args...); code != 0 {
		t.Fatalf("rpctl %q: exit %d\n%s%s", args, code, out, errOut)
	}
}
