package inventory

import (
	"fmt"
	"regexp"
)

// MaxInt is Placement's db_const.MAX_INT, the bound of every integer field.
const MaxInt = 0x7FFFFFFF

// MaxRatio is Placement's db_const.SQL_SP_FLOAT_MAX, the bound of
// allocation_ratio (a single-precision FLOAT column).
const MaxRatio = 3.40282e+38

// Defaults are the values Placement gives the fields a PUT leaves out
// (handlers/inventory.py INVENTORY_DEFAULTS); total has none.
var Defaults = Inventory{Reserved: 0, MinUnit: 1, MaxUnit: MaxInt, StepSize: 1, AllocationRatio: 1.0}

var classPattern = regexp.MustCompile(`^[A-Z0-9_]+$`)

// CheckSchema applies the JSON-schema limits Placement puts on one
// inventory record (schemas/inventory.py): total 1..MAX_INT, reserved
// 0..MAX_INT, min_unit, max_unit and step_size 1..MAX_INT, allocation_ratio
// at most SQL_SP_FLOAT_MAX. The error names the class and field.
func CheckSchema(class string, v Inventory) error {
	for _, f := range []struct {
		name string
		val  int64
		min  int64
	}{{"total", v.Total, 1}, {"reserved", v.Reserved, 0}, {"min_unit", v.MinUnit, 1}, {"max_unit", v.MaxUnit, 1}, {"step_size", v.StepSize, 1}} {
		if f.val < f.min || f.val > MaxInt {
			return fmt.Errorf("%s: %s = %d is outside %d..%d", class, f.name, f.val, f.min, MaxInt)
		}
	}
	if v.AllocationRatio > MaxRatio {
		return fmt.Errorf("%s: allocation_ratio = %g is greater than the maximum %g", class, v.AllocationRatio, MaxRatio)
	}
	return nil
}

// CheckClassName reports a resource class name Placement's schema would
// refuse (^[A-Z0-9_]+$).
func CheckClassName(class string) error {
	if !classPattern.MatchString(class) {
		return fmt.Errorf("resource class %q: must match ^[A-Z0-9_]+$", class)
	}
	return nil
}
