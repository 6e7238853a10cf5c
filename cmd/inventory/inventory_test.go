package inventory_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/cmd"
	"github.com/rpctl/rpctl/internal/iostreams"
	"github.com/rpctl/rpctl/internal/placementtest"
	"github.com/rpctl/rpctl/internal/testdb"
)

// storeBackend is one way the provider/inventory commands reach Placement.
// open returns the global flags that select it over a fresh Placement, and
// the base URL of a real placement-api over the same data (for setup the
// commands do not do, like allocations).
type storeBackend struct {
	name string
	open func(t *testing.T) (flags []string, base string)
}

// storeBackends are the backends every command test runs on; the API
// backend's wiring adds itself here.
var storeBackends = []storeBackend{{name: "database", open: openDatabaseBackend}, {name: "api", open: openAPIBackend}}

// openAPIBackend gives the commands only the real placement-api (noauth2):
// no Placement database flag at all.
func openAPIBackend(t *testing.T) ([]string, string) {
	p := placementtest.New(t)
	return []string{"--os-endpoint", p.Base, "--os-token", "admin"}, p.Base
}

func openDatabaseBackend(t *testing.T) ([]string, string) {
	p := placementtest.New(t)
	return []string{"--placement-db", p.URL}, p.Base
}

// Run is rpctl with stdin text and stdin-is-a-terminal.
func run(t *testing.T, stdin string, tty bool, args ...string) (string, string, int) {
	t.Helper()
	ios, in, out, errOut := iostreams.Test()
	in.WriteString(stdin)
	ios.SetStdinTTY(tty)
	code := cmd.Run(context.Background(), ios, "test", args)
	return out.String(), errOut.String(), code
}

const (
	tU1  = "11111111-1111-4111-8111-111111111111"
	tU2  = "22222222-2222-4222-8222-222222222222"
	tAgg = "aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa"
	tC1  = "cccccccc-cccc-4ccc-8ccc-cccccccccccc"
	tD1  = "dddddddd-dddd-4ddd-8ddd-dddddddddddd"
)

// TestStoreCommands runs the provider, inventory, usage, resource-class and
// trait commands in one scenario on every backend: each step's exit code,
// and what standard output and error must (and must not) contain.
func TestStoreCommands(t *testing.T) {
	for _, be := range storeBackends {
		t.Run(be.name, func(t *testing.T) {
			testdb.RequirePython(t, "placement")
			flags, base := be.open(t)
			for i, st := range []struct {
				args     []string
				stdin    string
				tty      bool
				code     int
				out, err []string // substrings that must appear
				notOut   []string
				setup    func()
			}{
				{args: []string{"provider", "create", "cn1", "--uuid", tU1}, out: []string{tU1, "| generation           | 0"}},
				{args: []string{"provider", "create", "cn1_numa0", "--parent", "cn1", "--uuid", tU2}, out: []string{"parent_provider_uuid | " + tU1}},
				{args: []string{"provider", "create", "cn1"}, code: 2, err: []string{"Conflicting resource provider name: cn1 already exists."}},
				{args: []string{"provider", "create", "x", "--parent", "nope"}, code: 2, err: []string{`no resource provider with uuid or name "nope"`}},
				{args: []string{"provider", "show", "nope"}, code: 2, err: []string{`no resource provider with uuid or name "nope"`}},
				// issue 21: names complete on either backend.
				{args: []string{"__complete", "provider", "show", "cn1_"}, out: []string{"cn1_numa0\n:4\n"}},
				{args: []string{"__complete", "inventory", "show", "cn1", "MEMORY_"}, out: []string{"MEMORY_MB\n"}},
				{args: []string{"provider", "list", "-f", "value"}, out: []string{tU1 + " cn1 0 " + tU1 + " None", tU2 + " cn1_numa0 0 " + tU1 + " " + tU1}},
				{args: []string{"inventory", "set", "cn1", "VCPU=16", "VCPU:allocation_ratio=4.0", "MEMORY_MB=4096", "MEMORY_MB:reserved=512", "--changes"},
					out: []string{"| changed | VCPU"}},
				// issue 21: the request is a --verbose diagnostic, never raw on stdout.
				{args: []string{"inventory", "set", "cn1", "VCPU:reserved=2", "--amend", "--dry-run"}, out: []string{"would change"}, notOut: []string{"PUT ", "changed |"}},
				{args: []string{"inventory", "set", "cn1", "VCPU:reserved=2", "--amend", "--dry-run", "--verbose"}, out: []string{"would change", "reserved=0", "reserved=2"}, notOut: []string{"PUT "}, err: []string{
					"would send: PUT /resource_providers/" + tU1 + `/inventories {"resource_provider_generation":1,"inventories":{"MEMORY_MB":{"total":4096,"reserved":512,"min_unit":1,"max_unit":2147483647,"step_size":1,"allocation_ratio":1.0},"VCPU":{"total":16,"reserved":2,"min_unit":1,"max_unit":2147483647,"step_size":1,"allocation_ratio":4.0}}}`}},
				{args: []string{"inventory", "show", "cn1", "VCPU", "-f", "json"}, out: []string{`"reserved": 0`, `"capacity": 64`}},
				{args: []string{"inventory", "set", "cn1", "VCPU:reserved=2", "--amend", "--changes"}, out: []string{"| changed", "| 2          |"}},
				{args: []string{"inventory", "set", "cn1", "VCPU:reserved=2", "--amend", "--changes"}, out: []string{"unchanged"}},
				// issue 39: by default what osc prints: the inventories left,
				// read classes first in Placement's order, ratios as floats.
				{args: []string{"inventory", "set", "cn1", "VCPU:reserved=2", "--amend", "-f", "value"}, out: []string{"VCPU 4.0 1 2147483647 2 1 16\nMEMORY_MB 1.0 1 2147483647 512 1 4096\n"}},
				{args: []string{"inventory", "set", "cn1", "VCPU:reserved=2", "--amend", "-f", "json", "-c", "resource_class", "-c", "allocation_ratio"}, out: []string{`[
  {
    "resource_class": "VCPU",
    "allocation_ratio": 4.0
  },
  {
    "resource_class": "MEMORY_MB",
    "allocation_ratio": 1.0
  }
]`}},
				{args: []string{"inventory", "list", tU1, "-f", "json"}, out: []string{
					`"resource_class": "VCPU",
    "allocation_ratio": 4.0,
    "min_unit": 1,
    "max_unit": 2147483647,
    "reserved": 2,
    "step_size": 1,
    "total": 16,
    "used": 0,
    "capacity": 56,
    "free": 56`}},
				{args: []string{"inventory", "set", "cn1", "VCPU:reserved=17", "--amend"}, code: 2, err: []string{"VCPU: reserved 17 is greater than total 16"}},
				{args: []string{"inventory", "set", "cn1", "VCPU:total=0", "--amend"}, code: 2, err: []string{"VCPU: total = 0 is outside 1..2147483647"}},
				{args: []string{"inventory", "set", "cn1", "VCPU:max_unit=2147483648", "--amend"}, code: 2, err: []string{"max_unit = 2147483648 is outside"}},
				{args: []string{"inventory", "set", "cn1", "VCPU:min_unit=5", "VCPU:max_unit=4", "--amend"}, code: 2, err: []string{"VCPU: min_unit 5 is greater than max_unit 4"}},
				// issue 37 row 4: a 0 ratio, which Placement's schema lets
				// through (no minimum) though it leaves no capacity, is refused.
				{args: []string{"inventory", "set", "cn1", "VCPU:allocation_ratio=0", "--amend"}, code: 2, err: []string{"VCPU: allocation_ratio = 0 would leave no capacity"}},
				{args: []string{"inventory", "set", "cn1", "VCPU:allocation_ratio=-1", "--amend"}, code: 2, err: []string{"allocation_ratio"}},
				{args: []string{"inventory", "set", "cn1", "VCPU:bogus=1"}, code: 2, err: []string{`unknown field "bogus"`}},
				{args: []string{"inventory", "set", "cn1", "vcpu=1"}, code: 2, err: []string{`must match ^[A-Z0-9_]+$`}},
				{args: []string{"inventory", "set", "cn1", "VCPU:reserved=x"}, code: 2, err: []string{`reserved must be a number`}},
				{args: []string{"inventory", "set", "cn1", "VCPU:reserved=1"}, code: 2, err: []string{"VCPU: total is required"}},
				{args: []string{"inventory", "set", "cn1", "CUSTOM_NOPE=1", "--amend"}, code: 2, err: []string{"No such resource class CUSTOM_NOPE"}},
				{args: []string{"inventory", "set", "nope", "VCPU=1"}, code: 2, err: []string{`no resource provider with uuid or name "nope"`}},
				{setup: func() {
					code, body := testdb.PlacementDo(t, "PUT", base, "/allocations/"+tC1, "1.39",
						fmt.Sprintf(`{"allocations": {%q: {"resources": {"VCPU": 8}}}, "project_id": %q, "user_id": %q, "consumer_generation": null, "consumer_type": "INSTANCE"}`, tU1, tC1, tC1))
					if code != 204 {
						t.Fatalf("allocate: %d %s", code, body)
					}
				}},
				{args: []string{"inventory", "set", "cn1", "VCPU:total=3", "--amend"}, out: []string{"| VCPU "},
					err: []string{"warning: cn1 (" + tU1 + ") VCPU: usage 8 exceeds the new capacity 4"}},
				// Usage is read, on both backends, only when a change removes a
				// class or lowers its capacity: used is null when it was not.
				{args: []string{"inventory", "set", "cn1", "VCPU:allocation_ratio=8.0", "--amend", "-f", "json", "--changes"}, out: []string{`"used": null`}, notOut: []string{`"used": 8`}},
				{args: []string{"inventory", "set", "cn1", "VCPU:allocation_ratio=4.0", "--amend", "-f", "json", "--changes"}, out: []string{`"used": 8`}},
				{args: []string{"inventory", "set", "cn1", "MEMORY_MB=4096", "--yes"}, code: 2, err: []string{"cannot remove VCPU (8 used)"}},
				{args: []string{"inventory", "delete", "cn1", "VCPU"}, code: 2, err: []string{"cannot remove VCPU (8 used)"}},
				{args: []string{"inventory", "delete", "cn1", "DISK_GB"}, code: 2, err: []string{"no inventory of class DISK_GB"}},
				{args: []string{"inventory", "set", "cn1", "VCPU=16", "VCPU:allocation_ratio=4.0"}, stdin: "n\n", tty: true, code: 1,
					err: []string{"this removes MEMORY_MB", "not confirmed"}},
				{args: []string{"inventory", "show", "cn1", "MEMORY_MB", "-f", "value"}, out: []string{"MEMORY_MB\n1.0\n1\n2147483647\n512\n1\n4096\n0\n3584\n3584\n"}},
				// issue 21: show is cliff's ShowOne: -c picks fields.
				{args: []string{"inventory", "show", "cn1", "MEMORY_MB", "-f", "value", "-c", "total"}, out: []string{"4096\n"}, notOut: []string{"512"}},
				{args: []string{"provider", "show", "cn1", "-f", "value", "-c", "name"}, out: []string{"cn1\n"}, notOut: []string{"None"}},
				{args: []string{"inventory", "list", "cn1", "-f", "value", "-c", "resource_class", "-c", "max_unit", "--sort-column", "max_unit", "--sort-descending"}, out: []string{"MEMORY_MB 2147483647\n"}},
				{args: []string{"inventory", "set", "cn1", "VCPU=16", "VCPU:allocation_ratio=4.0"}, stdin: "y\n", tty: true,
					err: []string{"this removes MEMORY_MB"}, out: []string{"| VCPU "}, notOut: []string{"MEMORY_MB"}},
				{args: []string{"inventory", "list", "cn1", "-f", "value"}, out: []string{"VCPU 4.0 1 2147483647 0 1 16 8 64 56"}, notOut: []string{"MEMORY_MB"}},
				{args: []string{"usage", "show", "cn1", "-f", "json"}, out: []string{`"resource_class": "VCPU",
    "usage": 8`}},
				{args: []string{"provider", "show", "cn1", "--allocations"}, out: []string{"{'" + tC1 + "': {'resources': {'VCPU': 8}, 'consumer_generation': 1}}"}},
				// issue 21: osc's allocation show|set|unset by consumer.
				{args: []string{"allocation", "show", tC1, "-f", "value"}, out: []string{tU1 + " ", " {'VCPU': 8} " + tC1 + " " + tC1 + " INSTANCE\n"}},
				{args: []string{"allocation", "show", tC1, "-f", "json", "-c", "resources"}, out: []string{`"VCPU": 8`}, notOut: []string{"project_id"}},
				{args: []string{"allocation", "set", tC1, "--allocation", "rp=" + tU1 + ",VCPU=4", "-f", "value", "-c", "resources"}, out: []string{"{'VCPU': 4}\n"}},
				{args: []string{"allocation", "set", tC1, "--allocation", "rp=" + tU1 + ",VCPU=100000"}, code: 2},
				{args: []string{"allocation", "set", tC1, "--allocation", "rp=" + tU1 + ",VCPU=0"}, code: 2, err: []string{"not a positive integer"}},
				{args: []string{"allocation", "unset", tC1, "--resource-class", "DISK_GB"}, code: 2, err: []string{"holds no DISK_GB"}},
				{args: []string{"allocation", "set", tC1, "--allocation", "rp=" + tU1 + ",VCPU=8", "-f", "value", "-c", "resources"}, out: []string{"{'VCPU': 8}\n"}},
				{args: []string{"allocation", "show", "bad"}, code: 2, err: []string{`consumer "bad" is not a uuid`}},
				{args: []string{"allocation", "set", tD1, "--allocation", "rp=" + tU1 + ",VCPU=1"}, code: 2, err: []string{"needs --project-id and --user-id"}},
				{args: []string{"allocation", "set", tD1, "--allocation", "rp=" + tU1 + ",VCPU=1", "--project-id", "pD", "--user-id", "uD", "-f", "value", "-c", "project_id"}, out: []string{"pD\n"}},
				{args: []string{"allocation", "unset", tD1, "-f", "value"}},
				{args: []string{"allocation", "show", tD1, "-f", "value"}, notOut: []string{"VCPU"}},
				// issue 21: osc's resource usage show PROJECT; issue 39: the
				// sums per class at every microversion, the consumer types
				// of 1.38 as rows with --by-consumer-type.
				{args: []string{"usage", "project", tC1, "-f", "value"}, out: []string{"VCPU 8\n"}},
				{args: []string{"usage", "project", tC1, "--user-id", tC1, "-f", "json", "--by-consumer-type"}, out: []string{`"consumer_type": "INSTANCE"`, `"resource_class": "VCPU"`, `"usage": 8`, `"consumer_count": 1`}},
				{args: []string{"usage", "project", tC1, "--user-id", tU1, "-f", "value"}, notOut: []string{"VCPU"}},
				{args: []string{"usage", "project", tU1, "-f", "value"}, notOut: []string{"VCPU"}},
				{args: []string{"provider", "list", "--in-tree", "cn1_numa0", "-f", "value"}, out: []string{tU1, tU2}},
				{args: []string{"provider", "list", "--resources", "VCPU:56", "-f", "value"}, out: []string{tU1}},
				{args: []string{"provider", "list", "--resources", "VCPU:57", "-f", "value"}, notOut: []string{tU1}},
				{args: []string{"provider", "tree", "cn1_numa0"}, out: []string{"cn1 (" + tU1 + ") generation", "VCPU 8/64 used, 56 free", "└── cn1_numa0 (" + tU2 + ")"}},
				{args: []string{"resource-class", "create", "CUSTOM_GPU", "--changes", "-f", "value"}, out: []string{"CUSTOM_GPU\ncreated\n"}},
				{args: []string{"resource-class", "create", "CUSTOM_GPU", "--changes", "-f", "value"}, out: []string{"CUSTOM_GPU\nexists\n"}},
				{args: []string{"resource-class", "create", "CUSTOM_GPU"}, notOut: []string{"CUSTOM_GPU"}},
				{args: []string{"resource-class", "create", "GPU"}, code: 2},
				{args: []string{"resource-class", "list", "-f", "value"}, out: []string{"VCPU\n", "CUSTOM_GPU\n"}},
				{args: []string{"resource-class", "delete", "VCPU"}, code: 2, err: []string{"Cannot delete standard resource class VCPU"}},
				{args: []string{"inventory", "set", "cn1_numa0", "CUSTOM_GPU=2"}, out: []string{"CUSTOM_GPU"}},
				{args: []string{"resource-class", "delete", "CUSTOM_GPU"}, code: 2, err: []string{"in use"}},
				{args: []string{"trait", "create", "CUSTOM_FAST"}, notOut: []string{"CUSTOM_FAST"}},
				{args: []string{"trait", "create", "CUSTOM_FAST", "--changes", "-f", "value"}, out: []string{"CUSTOM_FAST\nexists\n"}},
				{args: []string{"trait", "create", "FAST"}, code: 2, err: []string{"The trait is invalid"}},
				{args: []string{"provider", "trait", "add", "cn1", "CUSTOM_FAST", "HW_CPU_X86_AVX2"}, out: []string{"CUSTOM_FAST", "HW_CPU_X86_AVX2"}},
				{args: []string{"provider", "list", "--required", "CUSTOM_FAST", "-f", "value"}, out: []string{tU1}, notOut: []string{tU2}},
				{args: []string{"trait", "list", "--name", "startswith:CUSTOM_", "--associated", "true", "-f", "value"}, out: []string{"CUSTOM_FAST"}},
				{args: []string{"trait", "delete", "CUSTOM_FAST"}, code: 2, err: []string{"in use"}},
				{args: []string{"provider", "trait", "remove", "cn1", "CUSTOM_FAST"}, out: []string{"HW_CPU_X86_AVX2"}, notOut: []string{"CUSTOM_FAST"}},
				// issue 21: removing what the provider lacks says so; nothing written.
				{args: []string{"provider", "trait", "remove", "cn1", "CUSTOM_FAST"}, code: 2, err: []string{"trait not set: CUSTOM_FAST (the provider has: HW_CPU_X86_AVX2); nothing removed"}},
				{args: []string{"provider", "aggregate", "remove", "cn1", tAgg}, code: 2, err: []string{"aggregate not set: " + tAgg}},
				{args: []string{"provider", "trait", "set", "cn1", "CUSTOM_NOPE"}, code: 2, err: []string{"No such trait CUSTOM_NOPE"}},
				{args: []string{"provider", "trait", "list", "cn1", "-f", "value"}, out: []string{"HW_CPU_X86_AVX2"}},
				{args: []string{"trait", "delete", "CUSTOM_FAST"}},
				{args: []string{"trait", "delete", "CUSTOM_FAST"}, code: 2, err: []string{"No such trait"}},
				{args: []string{"provider", "aggregate", "add", "cn1", tAgg}, out: []string{tAgg}},
				{args: []string{"provider", "aggregate", "add", "cn1_numa0", tAgg}, out: []string{tAgg}},
				{args: []string{"provider", "aggregate", "add", "cn1", "not-a-uuid"}, code: 2},
				// A batch validates every provider before writing any: cn1_numa0
				// has no VCPU to amend, so cn1 is not written either.
				{args: []string{"inventory", "set", tAgg, "--aggregate", "VCPU:allocation_ratio=2.0", "--amend"}, code: 2,
					notOut: []string{"changed"}, err: []string{"cn1_numa0", "VCPU: total is required", "1 of 2 providers would get records Placement refuses; nothing written"}},
				// issue 21: a dry run's summary says what would change.
				{args: []string{"inventory", "set", tAgg, "--aggregate", "CUSTOM_GPU=2", "--amend", "--dry-run"},
					err: []string{"2 providers: 1 would change, 1 unchanged, 0 conflicts, 0 failed"}, notOut: []string{"PUT "}},
				{args: []string{"inventory", "set", tAgg, "--aggregate", "CUSTOM_GPU=2", "--amend", "-f", "value", "-c", "resource_provider", "-c", "resource_class", "-c", "total"},
					err: []string{"2 providers: 1 changed, 1 unchanged, 0 conflicts, 0 failed"}, out: []string{tU1 + " VCPU 16\n" + tU1 + " CUSTOM_GPU 2\n", tU2 + " CUSTOM_GPU 2\n"}},
				// An aggregate's lowered capacity is checked after the writes:
				// cn1, left without room, has its usage read and warned of;
				// cn1_numa0 still has room, so its usage is not read (null).
				{args: []string{"allocation", "set", tC1, "--allocation", "rp=" + tU1 + ",VCPU=8,CUSTOM_GPU=2", "-f", "value", "-c", "resources"}, out: []string{"'CUSTOM_GPU': 2"}},
				{args: []string{"inventory", "set", tAgg, "--aggregate", "CUSTOM_GPU:allocation_ratio=0.5", "--amend", "-f", "json", "--changes"},
					out: []string{`"used": 2`, `"used": null`}, err: []string{"cn1 (" + tU1 + ") CUSTOM_GPU: usage 2 exceeds the new capacity 1", "2 providers: 2 changed"},
					notOut: []string{`"used": 0`}},
				{args: []string{"allocation", "set", tC1, "--allocation", "rp=" + tU1 + ",VCPU=8", "-f", "value", "-c", "resources"}, out: []string{"{'VCPU': 8}\n"}},
				{args: []string{"provider", "aggregate", "list", "cn1", "-f", "value"}, out: []string{tAgg}},
				// issue 21: a tree as rows, without box drawing.
				{args: []string{"provider", "tree", "cn1", "-f", "csv"}, out: []string{"\"uuid\",\"name\",\"depth\",", "\"cn1_numa0\",1,"}, notOut: []string{"└", "├", "│"}},
				{args: []string{"provider", "tree", "cn1", "-f", "value", "-c", "name", "-c", "depth"}, out: []string{"cn1 0\n", "cn1_numa0 1\n"}, notOut: []string{"└", "├", "│"}},
				// issue 21: osc's commands and flag names on both backends.
				{args: []string{"provider", "create", "p3", "--parent-provider", "cn1_numa0", "-f", "value", "-c", "parent_provider_uuid"}, out: []string{tU2 + "\n"}},
				{args: []string{"provider", "set", "p3", "--name", "p3b", "-f", "value", "-c", "name", "-c", "parent_provider_uuid"}, out: []string{"p3b\n" + tU2 + "\n"}},
				{args: []string{"provider", "set", "p3b", "--parent-provider", "cn1", "-f", "value", "-c", "parent_provider_uuid", "-c", "root_provider_uuid"}, out: []string{tU1 + "\n" + tU1 + "\n"}},
				{args: []string{"provider", "set", "cn1", "--parent-provider", "p3b"}, code: 2, err: []string{"creating loop in the provider tree is not allowed"}},
				{args: []string{"provider", "set", "p3b", "--name", "cn1"}, code: 2, err: []string{"already exists"}},
				{args: []string{"provider", "set", "p3b"}, code: 2, err: []string{"nothing to change"}},
				{args: []string{"provider", "set", "cn1_numa0", "--no-parent", "-f", "value", "-c", "parent_provider_uuid", "-c", "root_provider_uuid"}, out: []string{tU2 + "\nNone\n"}},
				{args: []string{"provider", "set", "cn1_numa0", "--parent", "cn1", "-f", "value", "-c", "root_provider_uuid"}, out: []string{tU1 + "\n"}},
				{args: []string{"inventory", "set", "p3b", "--resource", "VCPU=4", "--resource", "MEMORY_MB=64"}, out: []string{"VCPU", "MEMORY_MB"}},
				{args: []string{"inventory", "delete", "p3b", "--resource-class", "VCPU"}, notOut: []string{"VCPU"}},
				{args: []string{"inventory", "list", "p3b", "-f", "value", "-c", "resource_class"}, out: []string{"MEMORY_MB\n"}, notOut: []string{"VCPU"}},
				{args: []string{"inventory", "delete", "p3b", "--changes", "-f", "value", "-c", "outcome", "-c", "resource_class"}, out: []string{"changed MEMORY_MB\n"}},
				{args: []string{"inventory", "list", "p3b", "-f", "value"}, notOut: []string{"MEMORY_MB"}},
				{args: []string{"provider", "delete", "p3b"}},
				{args: []string{"provider", "aggregate", "set", "cn1"}},
				{args: []string{"provider", "aggregate", "list", "cn1", "-f", "value"}, notOut: []string{tAgg}},
				{args: []string{"provider", "delete", "cn1"}, code: 2, err: []string{"It has child resource providers"}},
				{args: []string{"provider", "delete", "cn1_numa0"}},
				{args: []string{"provider", "delete", "cn1"}, code: 2, err: []string{"Resource provider has allocations"}},
				{args: []string{"inventory", "set", "cn1", "VCPU:reserved=1", "--amend", "--parallel", "0"}, code: 2, err: []string{`--parallel "0": must be at least 1`}},
			} {
				if st.setup != nil {
					st.setup()
					continue
				}
				out, errOut, code := run(t, st.stdin, st.tty, append(append([]string{}, flags...), st.args...)...)
				if code != st.code {
					t.Fatalf("step %d rpctl %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", i, strings.Join(st.args, " "), code, st.code, out, errOut)
				}
				for _, w := range st.out {
					if !strings.Contains(out, w) {
						t.Errorf("step %d rpctl %s: stdout lacks %q:\n%s", i, strings.Join(st.args, " "), w, out)
					}
				}
				for _, w := range st.notOut {
					if strings.Contains(out, w) {
						t.Errorf("step %d rpctl %s: stdout has %q:\n%s", i, strings.Join(st.args, " "), w, out)
					}
				}
				for _, w := range st.err {
					if !strings.Contains(errOut, w) {
						t.Errorf("step %d rpctl %s: stderr lacks %q:\n%s", i, strings.Join(st.args, " "), w, errOut)
					}
				}
			}
		})
	}
}

// TestStoreCommandsEmbedded runs the common edits on the embedded SQLite
// file (no placement-api reads it; the MariaDB scenario above is compared
// with the real API).
func TestStoreCommandsEmbedded(t *testing.T) {
	db := t.TempDir() + "/cloud.db"
	if _, errOut, code := run(t, "", false, "--db", db, "init"); code != 0 {
		t.Fatalf("init: exit %d: %s", code, errOut)
	}
	for i, st := range []struct {
		args []string
		code int
		out  string
	}{
		{[]string{"provider", "create", "cn1", "--uuid", tU1}, 0, tU1},
		{[]string{"provider", "create", "numa0", "--parent", "cn1", "--uuid", tU2}, 0, tU2},
		{[]string{"inventory", "set", "cn1", "VCPU=16", "VCPU:allocation_ratio=4.0", "MEMORY_MB=1024", "--changes"}, 0, "changed"},
		{[]string{"inventory", "set", "cn1", "VCPU:reserved=4", "--amend", "--changes"}, 0, "reserved=4"},
		{[]string{"inventory", "set", "cn1", "MEMORY_MB:reserved=0", "--amend", "-f", "csv"}, 0, "\"resource_class\",\"allocation_ratio\",\"min_unit\",\"max_unit\",\"reserved\",\"step_size\",\"total\"\n\"VCPU\",4.0,1,2147483647,4,1,16\n\"MEMORY_MB\",1.0,1,2147483647,0,1,1024\n"},
		{[]string{"inventory", "set", "cn1", "VCPU:allocation_ratio=0", "--amend"}, 2, ""},
		{[]string{"inventory", "set", "cn1", "VCPU:allocation_ratio=0.0", "MEMORY_MB=2048", "--amend"}, 2, ""},
		{[]string{"inventory", "list", "cn1", "-f", "value"}, 0, "VCPU 4.0 1 2147483647 4 1 16 0 48 48"},
		{[]string{"inventory", "delete", "cn1", "MEMORY_MB", "--changes"}, 0, "MEMORY_MB"},
		{[]string{"provider", "list", "--resources", "VCPU:48", "-f", "value"}, 0, tU1},
		{[]string{"provider", "trait", "set", "cn1", "HW_CPU_X86_AVX2"}, 0, "HW_CPU_X86_AVX2"},
		{[]string{"provider", "aggregate", "add", "numa0", tAgg}, 0, tAgg},
		{[]string{"provider", "list", "--member-of", tAgg, "-f", "value"}, 0, tU2},
		{[]string{"provider", "delete", "cn1"}, 2, ""},
		{[]string{"provider", "delete", "numa0"}, 0, ""},
		{[]string{"provider", "delete", "cn1"}, 0, ""},
	} {
		out, errOut, code := run(t, "", false, append([]string{"--db", db}, st.args...)...)
		if code != st.code || !strings.Contains(out, st.out) {
			t.Fatalf("step %d rpctl %s: exit %d (want %d), stdout lacks %q?\n%s\n%s", i, strings.Join(st.args, " "), code, st.code, st.out, out, errOut)
		}
	}
}
