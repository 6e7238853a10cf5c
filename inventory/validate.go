package inventory

import (
	"fmt"
	"math"
	"unicode/utf8"

	"github.com/rpctl/rpctl/internal/lazyre"
)

// MaxInt is Placement's db_const.MAX_INT, the bound of every integer field.
const MaxInt = 0x7FFFFFFF

// MaxRatio is Placement's db_const.SQL_SP_FLOAT_MAX, the bound of
// allocation_ratio (a single-precision FLOAT column).
const MaxRatio = 3.40282e+38

// Defaults are the values Placement gives the fields a PUT leaves out
// (handlers/inventory.py INVENTORY_DEFAULTS); total has none.
var Defaults = Inventory{Reserved: 0, MinUnit: 1, MaxUnit: MaxInt, StepSize: 1, AllocationRatio: 1.0}

var classPattern = &lazyre.Regexp{Expr: `^[A-Z0-9_]+$`}

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
	switch r := v.AllocationRatio; {
	case math.IsNaN(r) || math.IsInf(r, 0):
		// JSON has no NaN or infinity, and MySQL's FLOAT column refuses
		// them: Placement never stores one.
		return fmt.Errorf("%s: allocation_ratio = %v is not a finite number", class, r)
	case r > MaxRatio:
		return fmt.Errorf("%s: allocation_ratio = %g is greater than the maximum %g", class, r, MaxRatio)
	}
	return nil
}

// Validate is the one check of an inventory record, made before anything
// is written or sent (inventory set, provider apply): Placement's schema
// (CheckSchema), its capacity rule (from 1.26, (total - reserved) *
// allocation_ratio must not be negative: reserved at most total), and
// rpctl's own rules that some allocation can satisfy the record: an
// allocation_ratio above 0, min_unit at most max_unit, and a multiple of
// step_size between them. The error names the class and the field.
//
// Placement 8.0.0 stores a 0 ratio (schemas/inventory.py puts no minimum on
// allocation_ratio; handlers/inventory.py's _validate_inventory_capacity
// refuses a capacity of 0 only below microversion 1.26), but the capacity
// int((total - reserved) * 0) is 0: nothing can be allocated from it, and
// Nova reads a 0.0 ratio as "unset" everywhere else (the [DEFAULT] options,
// the compute_nodes columns). rpctl refuses it, as it refuses a negative one.
func Validate(class string, v Inventory) error {
	if err := CheckSchema(class, v); err != nil {
		return err
	}
	switch {
	case v.Reserved > v.Total:
		return fmt.Errorf("%s: reserved %d is greater than total %d", class, v.Reserved, v.Total)
	case v.AllocationRatio < 0:
		return fmt.Errorf("%s: allocation_ratio = %g is negative (the capacity would be below zero)", class, v.AllocationRatio)
	case v.AllocationRatio == 0:
		return fmt.Errorf("%s: allocation_ratio = 0 would leave no capacity (nothing could be allocated, and Nova reads a 0.0 ratio as unset); give a ratio above 0", class)
	case v.MinUnit > v.MaxUnit:
		return fmt.Errorf("%s: min_unit %d is greater than max_unit %d", class, v.MinUnit, v.MaxUnit)
	}
	// The smallest amount allowed is min_unit rounded up to step_size.
	if first := (v.MinUnit + v.StepSize - 1) / v.StepSize * v.StepSize; first > v.MaxUnit {
		return fmt.Errorf("%s: no amount from min_unit %d to max_unit %d is a multiple of step_size %d", class, v.MinUnit, v.MaxUnit, v.StepSize)
	}
	return nil
}

// MaxExternalID is the longest project or user id Placement accepts
// (schemas/allocation.py maxLength, the projects and users tables'
// external_id VARCHAR(255)).
const MaxExternalID = 255

// CheckExternalID reports a project or user id Placement would refuse: empty
// or longer than MaxExternalID characters. what names the flag or field.
func CheckExternalID(what, id string) error {
	switch n := utf8.RuneCountInString(id); {
	case n == 0:
		return fmt.Errorf("%s is empty", what)
	case n > MaxExternalID:
		return fmt.Errorf("%s is %d characters long; Placement accepts at most %d", what, n, MaxExternalID)
	}
	return nil
}

// CheckClassName reports a resource class name Placement's schema would
// refuse (^[A-Z0-9_]+$).
func CheckClassName(class string) error {
	if !classPattern.Get().MatchString(class) {
		return fmt.Errorf("resource class %q: must match ^[A-Z0-9_]+$", class)
	}
	return nil
}
