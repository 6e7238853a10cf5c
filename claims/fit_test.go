package claims

import (
	"strings"
	"testing"

	"github.com/rpctl/rpctl/inventory"
)

func TestCheckAllocation(t *testing.T) {
	vcpu := func(total, reserved, used int64, ratio float64) *InventoryUse {
		return &InventoryUse{Inventory: inventory.Inventory{Total: total, Reserved: reserved, MinUnit: 1, MaxUnit: total, StepSize: 1, AllocationRatio: ratio}, Used: used}
	}
	for _, tc := range []struct {
		name string
		res  map[string]int64
		have map[string]*InventoryUse
		want string // "" fits, else a piece of Placement's message
	}{
		{"fits", map[string]int64{"VCPU": 2}, map[string]*InventoryUse{"VCPU": vcpu(4, 0, 2, 1)}, ""},
		{"exactly full", map[string]int64{"VCPU": 4}, map[string]*InventoryUse{"VCPU": vcpu(4, 0, 12, 4)}, ""},
		{"over capacity", map[string]int64{"VCPU": 3}, map[string]*InventoryUse{"VCPU": vcpu(4, 1, 1, 1)}, "would exceed the capacity"},
		{"no inventory at all", map[string]int64{"VCPU": 1, "MEMORY_MB": 1}, map[string]*InventoryUse{}, "Inventory for 'MEMORY_MB, VCPU' on resource provider 'rp' invalid"},
		{"one class missing", map[string]int64{"VCPU": 1, "DISK_GB": 1}, map[string]*InventoryUse{"VCPU": vcpu(4, 0, 0, 1)}, "Inventory for 'DISK_GB'"},
		{"above max_unit", map[string]int64{"VCPU": 5}, map[string]*InventoryUse{"VCPU": vcpu(4, 0, 0, 16)}, "does not fit min_unit, max_unit, or step_size of VCPU"},
		{"zero amount skipped", map[string]int64{"VCPU": 0, "DISK_GB": 0}, map[string]*InventoryUse{"VCPU": vcpu(1, 1, 0, 1)}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := CheckAllocation("rp", tc.res, tc.have)
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Errorf("CheckAllocation = %q, want %q", got, tc.want)
			}
		})
	}
}
