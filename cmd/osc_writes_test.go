package cmd_test

import (
	"slices"
	"testing"

	"github.com/rpctl/rpctl/cmd/internal/cmdtest"
)

// oscPrintingWrite is an osc-placement write that prints the state it
// leaves without a generation, and rpctl's spelling of it: both are run
// from the same state (reset, rpctl commands) and must print the same.
type oscPrintingWrite struct {
	name       string
	osc, rpctl []string
	version    string
	sortBy     string
	reset      [][]string
	// show: osc's command is a ShowOne (one record), not a Lister.
	show bool
	// mayFail: the reset commands may fail (a delete of what is not
	// there yet).
	mayFail bool
}

// TestDifferentialOSCInventorySet (issue 39): rpctl's inventory set prints
// by default what osc-placement's resource provider inventory set prints —
// the inventories the provider is left with, in osc's order, ratios as
// floats — and provider create and set what osc's print, in every format, plain and with -c, --sort-column and
// --sort-descending, on the database backend and through the API, each
// against osc on the same real placement-api from the same state.
func TestDifferentialOSCInventorySet(t *testing.T) { differentialOSCInventorySet(t, "zed") }

// TestDifferentialOSCInventorySet2025_1 is TestDifferentialOSCInventorySet
// against 2025.1's own code (issue 33): osc-placement 4.6.0 in the release
// chroot and Placement 13's placement-api on a database its db sync made,
// rpctl on that database and through that API.
func TestDifferentialOSCInventorySet2025_1(t *testing.T) { differentialOSCInventorySet(t, "2025.1") }

// oscInventorySetKnown are the differences of differentialOSCInventorySet
// not fixed yet, by release, backend and case: still run and compared,
// their mismatches logged rather than failed, and counted in the log. Not
// failed either when one does not show: the one listed depends on
// MariaDB's plan for Placement 13's unordered read (a table with few rows
// is scanned in written order), which showed in 3 and in 8 of 10 outputs
// on two runs; a run where it shows in none is no news.
var oscInventorySetKnown = map[[3]string]string{
	// Placement 13's schema dropped inventories_resource_provider_id_idx:
	// its read of a provider's inventories (placement/objects/inventory.py
	// _get_inventory_by_provider_id, no ORDER BY) now goes through the
	// unique (resource_provider_id, resource_class_id) key and returns the
	// classes in class id order; rpctl's database backend still reads them
	// in the order they were written (storage/placementdb inventoryList:
	// ORDER BY i.id), Zed's plan.
	{"2025.1", "database", "aggregate"}: "issue 33: inventory order on Placement 13's schema",
	// The same read through the API: osc and rpctl each read Placement
	// 13 after their own reset of the inventories, and its unordered read
	// may come back in written order for one and in class id order for
	// the other (seen once in four full runs, CI of 79ca7ca).
	{"2025.1", "api", "aggregate"}: "issue 33: inventory order on Placement 13's schema (its own read, not ordered)",
}

func differentialOSCInventorySet(t *testing.T, release string) {
	res := func(args ...string) []string {
		return append([]string{"resource", "provider", "inventory", "set"}, args...)
	}
	set := func(args ...string) []string { return append([]string{"inventory", "set"}, args...) }
	cn1Reset := []string{"inventory", "set", oscCN1, "VCPU=8", "VCPU:allocation_ratio=4.0", "MEMORY_MB=4096", "DISK_GB=100", "--yes"}
	aggReset := []string{"inventory", "set", oscAgg, "--aggregate", "--amend", "DISK_GB:reserved=0"}
	cases := []oscPrintingWrite{
		{name: "amend, a new class", osc: res(oscCN1, "--amend", "--resource", "DISK_GB:reserved=5", "--resource", "CUSTOM_GPU=4", "--resource", "VCPU:allocation_ratio=2"),
			rpctl:   set(oscCN1, "--amend", "--resource", "DISK_GB:reserved=5", "--resource", "CUSTOM_GPU=4", "--resource", "VCPU:allocation_ratio=2"),
			version: "1.39", sortBy: "total", reset: [][]string{cn1Reset}},
		{name: "amend, rpctl's positional spelling", osc: res(oscCN1, "--amend", "--resource", "MEMORY_MB:reserved=512", "--resource", "CUSTOM_GPU=4"),
			rpctl:   set(oscCN1, "MEMORY_MB:reserved=512", "CUSTOM_GPU=4", "--amend"),
			version: "1.1", sortBy: "reserved", reset: [][]string{cn1Reset}},
		{name: "amend, nothing changes", osc: res(oscCN1, "--amend", "--resource", "VCPU=8"),
			rpctl:   set(oscCN1, "--amend", "--resource", "VCPU=8"),
			version: "1.39", sortBy: "resource_class", reset: [][]string{cn1Reset}},
		{name: "replace, in the order named", osc: res(oscCN2, "--resource", "MEMORY_MB=2048", "--resource", "VCPU=4", "--resource", "MEMORY_MB:reserved=1", "--resource", "VCPU:allocation_ratio=16.0", "--resource", "DISK_GB=10"),
			rpctl:   set(oscCN2, "--resource", "MEMORY_MB=2048", "--resource", "VCPU=4", "--resource", "MEMORY_MB:reserved=1", "--resource", "VCPU:allocation_ratio=16.0", "--resource", "DISK_GB=10"),
			version: "1.39", sortBy: "allocation_ratio", reset: [][]string{{"inventory", "delete", oscCN2}}},
		{name: "replace, a class removed", osc: res(oscCN1, "--resource", "DISK_GB=200", "--resource", "VCPU=8"),
			rpctl:   set(oscCN1, "--resource", "DISK_GB=200", "--resource", "VCPU=8", "--yes"),
			version: "1.39", sortBy: "total", reset: [][]string{cn1Reset}},
		{name: "aggregate", osc: res(oscAgg, "--aggregate", "--amend", "--resource", "DISK_GB:reserved=2"),
			rpctl:   set(oscAgg, "--aggregate", "--amend", "--resource", "DISK_GB:reserved=2"),
			version: "1.39", sortBy: "resource_provider", reset: [][]string{cn1Reset, aggReset}},
		// osc's other writes that print their result: resource provider
		// create and set (ShowOne).
		{name: "provider create", osc: []string{"resource", "provider", "create", "cmp-new", "--uuid", oscNUMA},
			rpctl: []string{"provider", "create", "cmp-new", "--uuid", oscNUMA}, version: "1.39", show: true,
			reset: [][]string{{"provider", "delete", oscNUMA}}, mayFail: true},
		{name: "provider create, a child", osc: []string{"resource", "provider", "create", "cmp-new", "--uuid", oscNUMA, "--parent-provider", oscCN1},
			rpctl: []string{"provider", "create", "cmp-new", "--uuid", oscNUMA, "--parent-provider", oscCN1}, version: "1.14", show: true,
			reset: [][]string{{"provider", "delete", oscNUMA}}, mayFail: true},
		{name: "provider create, 1.1", osc: []string{"resource", "provider", "create", "cmp-new", "--uuid", oscNUMA},
			rpctl: []string{"provider", "create", "cmp-new", "--uuid", oscNUMA}, version: "1.1", show: true,
			reset: [][]string{{"provider", "delete", oscNUMA}}, mayFail: true},
		{name: "provider set, renamed", osc: []string{"resource", "provider", "set", oscCN3, "--name", "cmp-z"},
			rpctl: []string{"provider", "set", oscCN3, "--name", "cmp-z"}, version: "1.39", show: true,
			reset: [][]string{{"provider", "set", oscCN3, "--name", "cmp-c"}}, mayFail: true},
	}
	for _, be := range []string{"database", "api"} {
		t.Run(be, func(t *testing.T) {
			p := oscOf(t, release)
			api := []string{"--os-endpoint", p.Base, "--os-token", "admin"}
			flags := api
			if be == "database" {
				flags = []string{"--placement-db", p.URL}
			}
			rpctl := func(args ...string) (string, string, int) {
				return cmdtest.Rpctl(t, append(slices.Clip(flags), args...)...)
			}
			for _, line := range [][]string{
				{"provider", "create", "cmp-a", "--uuid", oscCN1},
				{"provider", "create", "cmp-b", "--uuid", oscCN2},
				{"provider", "create", "cmp-c", "--uuid", oscCN3},
				{"resource-class", "create", "CUSTOM_GPU"},
				cn1Reset,
				{"inventory", "set", oscCN3, "DISK_GB=50", "MEMORY_MB=1024"},
				{"provider", "aggregate", "set", oscCN1, oscAgg},
				{"provider", "aggregate", "set", oscCN3, oscAgg},
			} {
				if _, errOut, code := rpctl(line...); code != 0 {
					t.Fatalf("fixture %v: exit %d: %s", line, code, errOut)
				}
			}
			sh := startOSCShellCmd(t, p.batch())
			reset := func(tc oscPrintingWrite) {
				t.Helper()
				for _, r := range tc.reset {
					if _, errOut, code := rpctl(r...); code != 0 && !tc.mayFail {
						t.Fatalf("reset %v: exit %d: %s", r, code, errOut)
					}
				}
			}
			osc := func(tc oscPrintingWrite, opts ...string) (string, int) {
				reset(tc)
				return sh.run(t, slices.Concat(api, []string{"--os-placement-api-version", tc.version}, tc.osc, opts))
			}
			compared := 0
			differs := map[string]int{}
			for _, tc := range cases {
				known := oscInventorySetKnown[[3]string{release, be, tc.name}]
				js, code := osc(tc, "-f", "json")
				if code != 0 {
					t.Fatalf("%s: openstack %v: exit %d", tc.name, tc.osc, code)
				}
				cols := oscColumns(t, js, !tc.show)
				for _, v := range oscVariants(t, oscCase{osc: tc.osc, list: !tc.show, sortBy: tc.sortBy}, cols) {
					want, wcode := osc(tc, v.osc...)
					reset(tc)
					got, errOut, code := rpctl(slices.Concat([]string{"--os-placement-api-version", tc.version}, tc.rpctl, v.rpctl)...)
					if wcode != 0 || code != 0 || got != want {
						report := t.Errorf
						if known != "" {
							differs[tc.name]++
							report = func(format string, args ...any) {
								t.Logf("known difference (%s): "+format, append([]any{known}, args...)...)
							}
						}
						report("%s: rpctl %v %v (exit %d) vs openstack %v %v (exit %d): %s\nrpctl:\n%s\nosc:\n%s", tc.name, tc.rpctl, v.rpctl, code, tc.osc, v.osc, wcode, errOut, got, want)
					}
					compared++
				}
				if known != "" && differs[tc.name] == 0 {
					t.Logf("%s: known difference %q did not show this run", tc.name, known)
				}
			}
			t.Logf("%d outputs of %d writes compared byte for byte, %d of them known to differ", compared, len(cases), sum(differs))
		})
	}
}
