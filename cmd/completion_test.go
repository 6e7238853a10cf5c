package cmd_test

import (
	"strings"
	"testing"

	"github.com/rpctl/rpctl/cmd/internal/cmdtest"
)

// TestCompletion: flag values come from the fixed lists and, for cells,
// resource classes, traits and providers, from the databases.
func TestCompletion(t *testing.T) {
	db := goldenCloud(t)
	if _, errOut, code := cmdtest.Rpctl(t, "--db", db, "migrate", "inventory"); code != 0 {
		t.Fatal(errOut)
	}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"__complete", "-f", ""}, []string{"csv", "json", "prometheus", "table", "value", "yaml"}},
		{[]string{"__complete", "compute-node", "list", "--quote", ""}, []string{"all", "minimal", "none", "nonnumeric"}},
		{[]string{"__complete", "migrate", "inventory", "--layout", ""}, []string{"flat", "nested"}},
		{[]string{"--db", db, "__complete", "migrate", "all", "--cell", ""}, []string{"cell1"}},
		{[]string{"--db", db, "__complete", "candidates", "--resources", "VCPU:2,MEMORY"}, []string{"VCPU:2,MEMORY_MB:"}},
		{[]string{"--db", db, "__complete", "candidates", "--required", "!COMPUTE_NO"}, []string{"!COMPUTE_NODE"}},
		{[]string{"--db", db, "__complete", "candidates", "--in-tree", "cmp1-00001"}, []string{"cmp1-00001.example.org"}},
		// issue 21: positional provider, class and trait names.
		{[]string{"--db", db, "__complete", "provider", "show", "cmp1-00001"}, []string{"cmp1-00001.example.org"}},
		{[]string{"--db", db, "__complete", "inventory", "show", "cmp1-00001.example.org", "MEMORY_"}, []string{"MEMORY_MB"}},
		{[]string{"--db", db, "__complete", "provider", "trait", "add", "cmp1-00001.example.org", "COMPUTE_NODE"}, []string{"COMPUTE_NODE"}},
		{[]string{"--db", db, "__complete", "trait", "delete", "COMPUTE_NODE"}, []string{"COMPUTE_NODE"}},
		{[]string{"--db", db, "__complete", "resource-class", "delete", "MEMORY_"}, []string{"MEMORY_MB"}},
		// issue 39: osc's spellings complete as rpctl's do.
		{[]string{"--db", db, "__complete", "provider", "trait", "set", "cmp1-00001.example.org", "--trait", "COMPUTE_NODE"}, []string{"COMPUTE_NODE"}},
		{[]string{"--db", db, "__complete", "provider", "trait", "delete", "cmp1-00001"}, []string{"cmp1-00001.example.org"}},
		{[]string{"--db", db, "__complete", "trait", "show", "COMPUTE_NODE"}, []string{"COMPUTE_NODE"}},
		{[]string{"--db", db, "__complete", "resource-class", "show", "MEMORY_"}, []string{"MEMORY_MB"}},
		{[]string{"--db", db, "__complete", "inventory", "class", "set", "cmp1-00001"}, []string{"cmp1-00001.example.org"}},
		{[]string{"--db", db, "__complete", "inventory", "class", "set", "cmp1-00001.example.org", "MEMORY_"}, []string{"MEMORY_MB"}},
		{[]string{"--db", db, "__complete", "claims", "audit", "--resource_provider", "cmp1-00001"}, []string{"cmp1-00001.example.org"}},
		// issue 39: check names, flavors, aggregates, and inventory set's
		// edits after its one provider (no provider name again).
		{[]string{"__complete", "status", "--check", "compute-node-"}, []string{"compute-node-uuids", "compute-node-inventories"}},
		{[]string{"__complete", "upgrade", "check", "--check", "placement-"}, []string{"placement-api", "placement-status"}},
		{[]string{"--db", db, "__complete", "candidates", "--flavor", "m1.sm"}, []string{"m1.small"}},
		{[]string{"--db", db, "__complete", "capacity", "--flavor", "m1.x"}, []string{"m1.xlarge", "m1.xxlarge"}},
		{[]string{"--db", db, "__complete", "capacity", "--aggregate", "az"}, []string{"az1", "az2", "az3"}},
		{[]string{"--db", db, "__complete", "inventory", "set", "cmp1-00001.example.org", "MEMORY_"}, []string{"MEMORY_MB:"}},
		{[]string{"--db", db, "__complete", "inventory", "set", "cmp1-00001.example.org", "VCPU:allocation_ratio=4.0", "VCPU:r"}, []string{"VCPU:reserved="}},
		{[]string{"--db", db, "__complete", "inventory", "set", "cmp1-00001.example.org", "cmp1-0000"}, nil},
		{[]string{"--db", db, "__complete", "inventory", "delete", "cmp1-00001.example.org", "VCPU", "MEMORY_"}, []string{"MEMORY_MB"}},
	} {
		out, _, code := cmdtest.Rpctl(t, tc.args...)
		lines := strings.Split(strings.TrimSpace(out), "\n")
		got := lines[:len(lines)-1] // the last line is the directive
		if code != 0 || strings.Join(got, " ") != strings.Join(tc.want, " ") {
			t.Errorf("%q: %q, want %q", tc.args, got, tc.want)
		}
	}
}
