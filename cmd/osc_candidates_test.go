package cmd_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/cmd/internal/cmdtest"
)

// TestDifferentialOSCCandidates (issue 39): given only API credentials,
// rpctl candidates asks the live Placement and prints what osc-placement's
// allocation candidate list prints for the same request and microversion,
// in every format, plain and with -c, --sort-column and --sort-descending
// (osc's spellings --resource and --forbidden and rpctl's --resources and
// --required alike); --explain, which needs the model, is refused naming
// the database flags.
func TestDifferentialOSCCandidates(t *testing.T) { differentialOSCCandidates(t, oscOf(t, "zed")) }

// TestDifferentialOSCCandidates2025_1 is TestDifferentialOSCCandidates
// against 2025.1's own code (issue 33): osc-placement 4.6.0 in the release
// chroot and Placement 13's placement-api, which answers both tools.
func TestDifferentialOSCCandidates2025_1(t *testing.T) {
	differentialOSCCandidates(t, oscOf(t, "2025.1"))
}

func differentialOSCCandidates(t *testing.T, p oscPlacement) {
	api := []string{"--os-endpoint", p.Base, "--os-token", "admin"}
	rpctl := func(args ...string) (string, string, int) {
		return cmdtest.Rpctl(t, append(slices.Clip(api), args...)...)
	}
	for _, line := range [][]string{
		{"provider", "create", "cmp-a", "--uuid", oscCN1},
		{"provider", "create", "cmp-b", "--uuid", oscCN2},
		{"provider", "create", "cmp-a_numa0", "--uuid", oscNUMA, "--parent-provider", oscCN1},
		{"provider", "create", "shared-disk", "--uuid", oscSS},
		{"inventory", "set", oscCN1, "VCPU=16", "VCPU:allocation_ratio=4.0", "MEMORY_MB=8192", "MEMORY_MB:reserved=512"},
		{"inventory", "set", oscCN2, "VCPU=8", "MEMORY_MB=4096", "DISK_GB=100"},
		{"inventory", "set", oscNUMA, "PCPU=4"},
		{"inventory", "set", oscSS, "DISK_GB=1000"},
		{"trait", "create", "CUSTOM_SLOW"},
		{"provider", "trait", "set", oscCN1, "HW_CPU_X86_AVX2", "COMPUTE_VOLUME_MULTI_ATTACH"},
		{"provider", "trait", "set", oscCN2, "HW_CPU_X86_AVX2", "CUSTOM_SLOW"},
		{"provider", "trait", "set", oscSS, "MISC_SHARES_VIA_AGGREGATE"},
		{"provider", "aggregate", "set", oscCN1, oscAgg},
		{"provider", "aggregate", "set", oscSS, oscAgg},
		{"allocation", "set", oscInst, "--allocation", "rp=" + oscCN1 + ",VCPU=2,MEMORY_MB=1024", "--project-id", oscProj, "--user-id", oscUser},
	} {
		if _, errOut, code := rpctl(line...); code != 0 {
			t.Fatalf("fixture %v: exit %d: %s", line, code, errOut)
		}
	}
	sh := startOSCShellCmd(t, p.batch())
	list := func(args ...string) []string { return append([]string{"allocation", "candidate", "list"}, args...) }
	cases := []oscCase{
		{osc: list("--resource", "VCPU=1", "--resource", "MEMORY_MB=512"), rpctl: []string{"candidates", "--resource", "VCPU=1", "--resource", "MEMORY_MB=512"}, version: "1.39", sortBy: "resource provider"},
		{osc: list("--resource", "VCPU=1", "--resource", "MEMORY_MB=512"), rpctl: []string{"candidates", "--resources", "VCPU:1,MEMORY_MB:512"}, version: "1.17", sortBy: "inventory used/capacity"},
		{osc: list("--resource", "VCPU=1"), rpctl: []string{"candidates", "--resources", "VCPU:1"}, version: "1.12", sortBy: "allocation"},
		{osc: list("--resource", "VCPU=1"), rpctl: []string{"candidates", "--resources", "VCPU:1"}, version: "1.10", sortBy: "resource provider"},
		{osc: list("--resource", "VCPU=1", "--resource", "DISK_GB=10"), rpctl: []string{"candidates", "--resource", "VCPU=1", "--resource", "DISK_GB=10"}, version: "1.39", sortBy: "#"},
		{osc: list("--resource", "VCPU=1", "--resource", "PCPU=1"), rpctl: []string{"candidates", "--resources", "VCPU:1,PCPU:1"}, version: "1.29", sortBy: "traits"},
		{osc: list("--resource", "VCPU=1", "--required", "HW_CPU_X86_AVX2", "--forbidden", "CUSTOM_SLOW"), rpctl: []string{"candidates", "--resource", "VCPU=1", "--required", "HW_CPU_X86_AVX2", "--forbidden", "CUSTOM_SLOW"}, version: "1.22", sortBy: "traits"},
		{osc: list("--resource", "VCPU=1", "--member-of", oscAgg), rpctl: []string{"candidates", "--resource", "VCPU=1", "--member-of", "in:" + oscAgg}, version: "1.39", sortBy: "resource provider"},
		{osc: list("--resource", "VCPU=1", "--limit", "1"), rpctl: []string{"candidates", "--resource", "VCPU=1", "--limit", "1"}, version: "1.16", sortBy: "allocation"},
	}
	compared := 0
	for _, tc := range cases {
		oscArgs := func(opts ...string) []string {
			return slices.Concat(api, []string{"--os-placement-api-version", tc.version}, tc.osc, opts)
		}
		js, code := sh.run(t, oscArgs("-f", "json"))
		if code != 0 {
			t.Fatalf("openstack %v: exit %d", tc.osc, code)
		}
		tc.list = true
		cols := oscColumns(t, js, true)
		for _, v := range oscVariants(t, tc, cols) {
			want, wcode := sh.run(t, oscArgs(v.osc...))
			got, errOut, code := rpctl(slices.Concat([]string{"--os-placement-api-version", tc.version}, tc.rpctl, v.rpctl)...)
			if wcode != 0 || code != 0 || got != want {
				t.Errorf("rpctl %v %v at %s (exit %d) vs openstack %v %v (exit %d): %s\nrpctl:\n%s\nosc:\n%s", tc.rpctl, v.rpctl, tc.version, code, tc.osc, v.osc, wcode, errOut, got, want)
			}
			compared++
		}
	}
	t.Logf("%d outputs of %d requests compared byte for byte", compared, len(cases))
	_, errOut, code := rpctl("candidates", "--resources", "VCPU:1", "--explain")
	if code != 2 || !strings.Contains(errOut, "--explain needs the built-in core's model") || !strings.Contains(errOut, "--placement-db") {
		t.Errorf("candidates --explain through the API: exit %d, want 2 naming the database flags: %s", code, errOut)
	}
	_, errOut, code = rpctl("candidates", "--resources", "VCPU:1", "--in-tree", "nope")
	if code != 2 || !strings.Contains(errOut, "nope") {
		t.Errorf("candidates --in-tree nope through the API: exit %d, want 2: %s", code, errOut)
	}
}
