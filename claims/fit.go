package claims

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/rpctl/rpctl/inventory"
)

// InventoryUse is one inventory of a provider with what is already allocated
// from it, as a claim writer reads them inside its transaction.
type InventoryUse struct {
	inventory.Inventory
	Used int64
}

// CheckAllocation is Placement's _check_capacity_exceeded for one
// consumer's resources on provider rp: have holds the provider's
// inventories by class (absent: none). It returns "" when the resources
// fit, else Placement's own detail message for the first class, in class
// order, that does not. A provider with no inventory of any requested
// class is refused first, as Placement does.
func CheckAllocation(rp string, res map[string]int64, have map[string]*InventoryUse) string {
	classes := slices.Sorted(maps.Keys(res))
	hasAny := false
	for _, rc := range classes {
		if have[rc] != nil {
			hasAny = true
		}
	}
	if !hasAny {
		return fmt.Sprintf("Unable to allocate inventory: Inventory for '%s' on resource provider '%s' invalid.", strings.Join(classes, ", "), rp)
	}
	for _, rc := range classes {
		n := res[rc]
		if n == 0 {
			continue
		}
		h := have[rc]
		if h == nil {
			return fmt.Sprintf("Unable to allocate inventory: Inventory for '%s' on resource provider '%s' invalid.", rc, rp)
		}
		if n < h.MinUnit || n > h.MaxUnit || (h.StepSize != 0 && n%h.StepSize != 0) {
			return fmt.Sprintf("Unable to allocate inventory: Allocation for resource provider '%s' that does not fit min_unit, max_unit, or step_size of %s.", rp, rc)
		}
		// Compared as floats, as Placement compares them, not truncated.
		if float64(h.Total-h.Reserved)*h.AllocationRatio < float64(h.Used+n) {
			return fmt.Sprintf("Unable to allocate inventory: Unable to create allocation for '%s' on resource provider '%s'. The requested amount would exceed the capacity.", rc, rp)
		}
	}
	return ""
}

// CheckWritten is the re-check of a write: have holds, for the classes of
// res, the provider's inventories with the usage read again once the write
// is in (a locking read, which sees other writers' committed rows). It
// returns "" when no class is over its capacity, else Placement's
// capacity message saying why the first check passed.
func CheckWritten(rp string, res map[string]int64, have map[string]*InventoryUse) string {
	for _, rc := range slices.Sorted(maps.Keys(res)) {
		h := have[rc]
		if res[rc] == 0 || h == nil {
			continue
		}
		if capacity := float64(h.Total-h.Reserved) * h.AllocationRatio; float64(h.Used) > capacity {
			return fmt.Sprintf("Unable to allocate inventory: Unable to create allocation for '%s' on resource provider '%s'. The requested amount would exceed the capacity (%d used of %g once written: another writer's allocations landed during this one).", rc, rp, h.Used, capacity)
		}
	}
	return ""
}
