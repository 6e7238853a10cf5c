package inventory_test

import (
	"strings"
	"testing"

	"github.com/rpctl/rpctl/internal/testdb"
)

// TestInventoryClassSet (issue 39): osc's resource provider inventory class
// set P CLASS --total N [--reserved ...] on every backend: the class's
// record replaced (defaults for the fields not given), the other classes
// kept, the resulting record printed as osc prints it; a class the
// provider has not is Placement's 400 (exit 2, osc exits 1).
func TestInventoryClassSet(t *testing.T) {
	for _, be := range storeBackends {
		t.Run(be.name, func(t *testing.T) {
			testdb.RequirePython(t, "placement")
			flags, _ := be.open(t)
			rpctl := func(args ...string) (string, string, int) {
				t.Helper()
				return run(t, "", false, append(append([]string{}, flags...), args...)...)
			}
			for _, args := range [][]string{{"provider", "create", "cn1", "--uuid", tU1},
				{"inventory", "set", "cn1", "VCPU=16", "VCPU:allocation_ratio=4.0", "VCPU:max_unit=8", "MEMORY_MB=4096", "MEMORY_MB:reserved=512"}} {
				if _, errOut, code := rpctl(args...); code != 0 {
					t.Fatalf("%v: exit %d: %s", args, code, errOut)
				}
			}
			const memory = "MEMORY_MB 1.0 1 2147483647 512 1 4096\n"
			for _, st := range []struct {
				name      string
				args      []string
				code      int
				out, errs string
				list      string // inventory list -f value -c resource_class ... afterwards
			}{
				{"total only: defaults for the rest", []string{tU1, "VCPU", "--total", "32", "-f", "value"}, 0,
					"1.0\n1\n2147483647\n0\n1\n32\n", "", "VCPU 1.0 1 2147483647 0 1 32\n" + memory},
				{"every field, by name", []string{"cn1", "VCPU", "--total", "24", "--reserved", "2", "--min_unit", "2", "--max_unit", "12", "--step_size", "2", "--allocation_ratio", "2.5", "-f", "json"}, 0,
					"{\n  \"allocation_ratio\": 2.5,\n  \"min_unit\": 2,\n  \"max_unit\": 12,\n  \"reserved\": 2,\n  \"step_size\": 2,\n  \"total\": 24\n}\n", "",
					"VCPU 2.5 2 12 2 2 24\n" + memory},
				{"table", []string{tU1, "VCPU", "--total", "8", "--allocation_ratio", "4"}, 0,
					"+------------------+------------+\n| Field            | Value      |\n+------------------+------------+\n| allocation_ratio | 4.0        |\n| min_unit         | 1          |\n| max_unit         | 2147483647 |\n| reserved         | 0          |\n| step_size        | 1          |\n| total            | 8          |\n+------------------+------------+\n",
					"", "VCPU 4.0 1 2147483647 0 1 8\n" + memory},
				{"a class the provider has not", []string{tU1, "DISK_GB", "--total", "100"}, 2, "",
					"No inventory record with resource class for resource provider " + tU1 + ": DISK_GB", "VCPU 4.0 1 2147483647 0 1 8\n" + memory},
				{"no --total", []string{tU1, "VCPU", "--reserved", "1"}, 2, "", "--total is required", "VCPU 4.0 1 2147483647 0 1 8\n" + memory},
				{"reserved above total", []string{tU1, "VCPU", "--total", "4", "--reserved", "5"}, 2, "", "VCPU: reserved 5 is greater than total 4", "VCPU 4.0 1 2147483647 0 1 8\n" + memory},
				{"bad class name", []string{tU1, "vcpu", "--total", "4"}, 2, "", "must match", "VCPU 4.0 1 2147483647 0 1 8\n" + memory},
				{"unknown provider", []string{"nope", "VCPU", "--total", "4"}, 2, "", `no resource provider with uuid or name "nope"`, "VCPU 4.0 1 2147483647 0 1 8\n" + memory},
				{"osc's spelling only: --max-unit is no flag", []string{tU1, "VCPU", "--total", "4", "--max-unit", "2"}, 255, "", "unknown flag: --max-unit", "VCPU 4.0 1 2147483647 0 1 8\n" + memory},
			} {
				out, errOut, code := rpctl(append([]string{"inventory", "class", "set"}, st.args...)...)
				if code != st.code || out != st.out || !strings.Contains(errOut, st.errs) {
					t.Errorf("%s: inventory class set %v: exit %d, want %d\nstdout %q, want %q\nstderr %q, want it to hold %q", st.name, st.args, code, st.code, out, st.out, errOut, st.errs)
				}
				list, errOut, code := rpctl("inventory", "list", tU1, "-f", "value", "-c", "resource_class", "-c", "allocation_ratio", "-c", "min_unit", "-c", "max_unit", "-c", "reserved", "-c", "step_size", "-c", "total", "--sort-column", "resource_class", "--sort-descending")
				if code != 0 || list != st.list {
					t.Errorf("%s: inventories afterwards (exit %d) %q, want %q %s", st.name, code, list, st.list, errOut)
				}
			}
		})
	}
}
