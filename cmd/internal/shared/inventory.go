package shared

import (
	"context"
	"strconv"
	"strings"

	"github.com/rpctl/rpctl/inventory"
)

// InventoryRow is one class of `inventory list`: osc-placement's columns,
// then capacity and free.
type InventoryRow struct {
	ResourceClass   string `json:"resource_class"`
	AllocationRatio Ratio  `json:"allocation_ratio"`
	MinUnit         int64  `json:"min_unit"`
	MaxUnit         int64  `json:"max_unit"`
	Reserved        int64  `json:"reserved"`
	StepSize        int64  `json:"step_size"`
	Total           int64  `json:"total"`
	Used            int64  `json:"used"`
	Capacity        int64  `json:"capacity"`
	Free            int64  `json:"free"`
}

var InventoryHeaders = []string{"resource_class", "allocation_ratio", "min_unit", "max_unit", "reserved", "step_size", "total", "used", "capacity", "free"}

// Cells are the row's typed cells, in inventoryHeaders' order.
func (r InventoryRow) Cells() []any {
	return []any{r.ResourceClass, float64(r.AllocationRatio), r.MinUnit, r.MaxUnit, r.Reserved, r.StepSize,
		r.Total, r.Used, r.Capacity, r.Free}
}

// Ratio is an allocation ratio, printed in JSON as Python prints a float
// (4.0, not 4), as osc-placement does.
type Ratio float64

// MarshalJSON writes Python's repr of the float.
func (r Ratio) MarshalJSON() ([]byte, error) { return []byte(PyFloat(float64(r))), nil }

func Itoa(n int64) string { return strconv.FormatInt(n, 10) }

// PyFloat prints a float as Python's repr does (4.0, 1.1, 1e+20).
func PyFloat(x float64) string {
	s := strconv.FormatFloat(x, 'g', -1, 64)
	if !strings.ContainsAny(s, ".eEn") {
		s += ".0"
	}
	return s
}

func newRow(class string, v inventory.Inventory, used int64) InventoryRow {
	return InventoryRow{ResourceClass: class, AllocationRatio: Ratio(v.AllocationRatio), MinUnit: v.MinUnit, MaxUnit: v.MaxUnit,
		Reserved: v.Reserved, StepSize: v.StepSize, Total: v.Total, Used: used, Capacity: v.Capacity(), Free: v.Capacity() - used}
}

// InventoryRows reads a provider's inventories with their usage, by class.
func InventoryRows(ctx context.Context, st inventory.Store, uuid string) ([]InventoryRow, error) {
	_, inv, err := st.ListInventories(ctx, uuid)
	if err != nil {
		return nil, err
	}
	_, usage, err := st.Usages(ctx, uuid)
	if err != nil {
		return nil, err
	}
	rows := []InventoryRow{}
	for _, v := range inv {
		rows = append(rows, newRow(v.Class, v.Inventory, usage[v.Class]))
	}
	return rows, nil
}
