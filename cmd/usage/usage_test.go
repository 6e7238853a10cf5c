package usage_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/cmd/internal/cmdtest"
	"github.com/rpctl/rpctl/cmd/usage"
	"github.com/rpctl/rpctl/inventory"
)

func TestSumByClass(t *testing.T) {
	for _, tc := range []struct {
		name   string
		groups []inventory.UsageGroup
		want   []inventory.ClassAmount
	}{
		{"none", nil, nil},
		// Before 1.38 Placement's order is kept as it is.
		{"ungrouped", []inventory.UsageGroup{{Usages: []inventory.ClassAmount{{Class: "MEMORY_MB", Amount: 512}, {Class: "VCPU", Amount: 2}}}},
			[]inventory.ClassAmount{{Class: "MEMORY_MB", Amount: 512}, {Class: "VCPU", Amount: 2}}},
		{"types added up, Placement's class order", []inventory.UsageGroup{
			{ConsumerType: "INSTANCE", Consumers: 2, Usages: []inventory.ClassAmount{{Class: "MEMORY_MB", Amount: 512}, {Class: "CUSTOM_GPU", Amount: 1}}},
			{ConsumerType: "MIGRATION", Consumers: 1, Usages: []inventory.ClassAmount{{Class: "VCPU", Amount: 2}, {Class: "MEMORY_MB", Amount: 256}}},
			{ConsumerType: "unknown", Consumers: 1, Usages: []inventory.ClassAmount{{Class: "CUSTOM_AA", Amount: 3}}},
		}, []inventory.ClassAmount{{Class: "VCPU", Amount: 2}, {Class: "MEMORY_MB", Amount: 768}, {Class: "CUSTOM_AA", Amount: 3}, {Class: "CUSTOM_GPU", Amount: 1}}},
	} {
		if got := usage.SumByClass(tc.groups); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestUsageProject (issue 39): usage project prints the sums per class on
// both backends and at every microversion (what Placement answers before
// 1.38: through the API at 1.37 it is Placement's own sum), not osc
// 4.0.0's rendering of the 1.38 grouped answer; --by-consumer-type prints
// the groups as rows and needs 1.38, also on the database backend.
func TestUsageProject(t *testing.T) {
	const (
		rp   = "11111111-1111-4111-8111-111111111111"
		proj = "dddddddd-dddd-4ddd-8ddd-dddddddddddd"
		user = "eeeeeeee-eeee-4eee-8eee-eeeeeeeeeeee"
	)
	cmdtest.OnBothBackends(t, func(t *testing.T, rpctl func(args ...string) (string, string, int)) {
		for _, line := range [][]string{
			{"provider", "create", "cmp", "--uuid", rp},
			{"inventory", "set", rp, "VCPU=64", "MEMORY_MB=8192"},
			{"allocation", "set", "c1c1c1c1-cccc-4ccc-8ccc-cccccccccccc", "--allocation", "rp=" + rp + ",VCPU=2,MEMORY_MB=512", "--project-id", proj, "--user-id", user, "--consumer-type", "INSTANCE"},
			{"allocation", "set", "c2c2c2c2-cccc-4ccc-8ccc-cccccccccccc", "--allocation", "rp=" + rp + ",VCPU=4,MEMORY_MB=1024", "--project-id", proj, "--user-id", user, "--consumer-type", "MIGRATION"},
			{"allocation", "set", "c3c3c3c3-cccc-4ccc-8ccc-cccccccccccc", "--allocation", "rp=" + rp + ",MEMORY_MB=256", "--project-id", proj, "--user-id", user, "--consumer-type", "INSTANCE"},
		} {
			if _, errOut, code := rpctl(line...); code != 0 {
				t.Fatalf("%v: exit %d: %s", line, code, errOut)
			}
		}
		for _, tc := range []struct {
			args      []string
			code      int
			out, errs string
		}{
			{[]string{"-f", "value"}, 0, "VCPU 6\nMEMORY_MB 1792\n", ""},
			{[]string{"--os-placement-api-version", "1.37", "-f", "value"}, 0, "VCPU 6\nMEMORY_MB 1792\n", ""},
			{[]string{"--os-placement-api-version", "1.38", "-f", "value"}, 0, "VCPU 6\nMEMORY_MB 1792\n", ""},
			{[]string{"--by-consumer-type", "-f", "value"}, 0, "INSTANCE VCPU 2 2\nINSTANCE MEMORY_MB 768 2\nMIGRATION VCPU 4 1\nMIGRATION MEMORY_MB 1024 1\n", ""},
			{[]string{"--by-consumer-type", "-f", "csv", "-c", "consumer_type", "-c", "usage"}, 0, "\"consumer_type\",\"usage\"\n\"INSTANCE\",2\n\"INSTANCE\",768\n\"MIGRATION\",4\n\"MIGRATION\",1024\n", ""},
			{[]string{"--by-consumer-type", "--os-placement-api-version", "1.37"}, 2, "", "--by-consumer-type needs Placement microversion 1.38"},
		} {
			args := append([]string{"usage", "project", proj}, tc.args...)
			if i := slices.Index(tc.args, "--os-placement-api-version"); i >= 0 {
				args = append(slices.Clone(tc.args[i:i+2]), append([]string{"usage", "project", proj}, slices.Delete(slices.Clone(tc.args), i, i+2)...)...)
			}
			out, errOut, code := rpctl(args...)
			if code != tc.code || out != tc.out || !strings.Contains(errOut, tc.errs) {
				t.Errorf("rpctl %v: exit %d, want %d\nstdout %q, want %q\nstderr %q, want it to hold %q", args, code, tc.code, out, tc.out, errOut, tc.errs)
			}
		}
	})
}
