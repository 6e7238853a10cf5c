package inventory_test

import (
	"math"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/inventory"
)

// TestValidate: the one check every writer of inventory records runs
// before writing (inventory set, provider apply) names the class, the field
// and the rule.
func TestValidate(t *testing.T) {
	rec := func(edit func(v *inventory.Inventory)) inventory.Inventory {
		v := inventory.Defaults
		v.Total = 48
		edit(&v)
		return v
	}
	for _, tc := range []struct {
		name string
		v    inventory.Inventory
		err  string
	}{
		{"defaults", rec(func(*inventory.Inventory) {}), ""},
		{"reserved equals total", rec(func(v *inventory.Inventory) { v.Reserved = 48 }), ""},
		{"ratio 0", rec(func(v *inventory.Inventory) { v.AllocationRatio = 0 }), "VCPU: allocation_ratio = 0 would leave no capacity"},
		{"tiny ratio", rec(func(v *inventory.Inventory) { v.AllocationRatio = 0.001 }), ""},
		{"nan", rec(func(v *inventory.Inventory) { v.AllocationRatio = math.NaN() }), "VCPU: allocation_ratio = NaN is not a finite number"},
		{"+inf", rec(func(v *inventory.Inventory) { v.AllocationRatio = math.Inf(1) }), "allocation_ratio = +Inf is not a finite number"},
		{"-inf", rec(func(v *inventory.Inventory) { v.AllocationRatio = math.Inf(-1) }), "allocation_ratio = -Inf is not a finite number"},
		{"above float max", rec(func(v *inventory.Inventory) { v.AllocationRatio = 1e39 }), "greater than the maximum 3.40282e+38"},
		{"negative ratio", rec(func(v *inventory.Inventory) { v.AllocationRatio = -1 }), "allocation_ratio = -1 is negative"},
		{"reserved above total", rec(func(v *inventory.Inventory) { v.Reserved = 49 }), "VCPU: reserved 49 is greater than total 48"},
		{"total 0", rec(func(v *inventory.Inventory) { v.Total = 0 }), "total = 0 is outside 1..2147483647"},
		{"total above MAX_INT", rec(func(v *inventory.Inventory) { v.Total = 1 << 31 }), "total = 2147483648 is outside"},
		{"min above max", rec(func(v *inventory.Inventory) { v.MinUnit, v.MaxUnit = 3, 2 }), "min_unit 3 is greater than max_unit 2"},
		{"no multiple of step", rec(func(v *inventory.Inventory) { v.MinUnit, v.MaxUnit, v.StepSize = 5, 7, 4 }), "no amount from min_unit 5 to max_unit 7 is a multiple of step_size 4"},
		{"a multiple of step", rec(func(v *inventory.Inventory) { v.MinUnit, v.MaxUnit, v.StepSize = 5, 8, 4 }), ""},
	} {
		err := inventory.Validate("VCPU", tc.v)
		if (tc.err == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.err)
		}
	}
}

// TestCheckExternalID: Placement's project and user ids are 1 to 255
// characters.
func TestCheckExternalID(t *testing.T) {
	for _, tc := range []struct {
		id  string
		err string
	}{
		{"p", ""},
		{strings.Repeat("é", 255), ""},
		{"", "--project is empty"},
		{strings.Repeat("p", 256), "--project is 256 characters long; Placement accepts at most 255"},
		{strings.Repeat("p", 300), "300 characters"},
	} {
		err := inventory.CheckExternalID("--project", tc.id)
		if (tc.err == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%d chars: err = %v, want %q", len(tc.id), err, tc.err)
		}
	}
}
