package migrate

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/internal/config"
	"github.com/rpctl/rpctl/inventory"
)

type switchReader struct {
	Placement
	rows []AllocationRow
}

func (r switchReader) SwitchAllocations(_ context.Context, tree, targets []string) ([]AllocationRow, map[[2]string]int64, map[[2]string]inventory.Inventory, error) {
	usage := map[[2]string]int64{}
	for _, a := range r.rows {
		usage[[2]string{a.Provider, a.Class}] += a.Used
	}
	return r.rows, usage, nil, nil
}

// A flat node with 3 VCPU allocated switches to a tree whose NUMA cells
// hold 2 each: the allocation fits neither cell and the switch is refused,
// naming the node, the consumer and the class; with 2 allocated it moves
// to the first cell.
func TestLayoutSwitchMovesOrRefuses(t *testing.T) {
	cfg := &InventoryConfig{Ratios: config.Ratios{InitialCPU: 1, InitialRAM: 1, InitialDisk: 1}}
	st := &PlacementState{Providers: map[string]*PProvider{
		"r": {UUID: "r", Name: "host1", Generation: 3, Inventories: map[string]inventory.Inventory{"VCPU": {Total: 4, MinUnit: 1, MaxUnit: 4, StepSize: 1, AllocationRatio: 1}},
			Traits: map[string]bool{}, Aggregates: map[string]bool{}, Used: map[string]bool{"VCPU": true}},
	}, ByName: map[string]string{"host1": "r"}}
	cell := func(n string) DesiredProvider {
		return DesiredProvider{UUID: n, Name: "host1_" + n, ParentUUID: "r", Inventories: map[string]DesiredInventory{"VCPU": inv(2, 0, 2, RatioCPU, nil)}}
	}
	desired := []DesiredProvider{{UUID: "r", Name: "host1", Inventories: map[string]DesiredInventory{}}, cell("numa0"), cell("numa1")}
	for _, tc := range []struct {
		used    int64
		wantTo  string
		wantErr string
	}{
		{2, "numa0", ""},
		{3, "", "node host1: consumer i1 holds VCPU 3 on r and no provider of the new layout has room"},
	} {
		w, _, err := cfg.Diff(desired, st)
		if err != nil || w == nil {
			t.Fatalf("diff: %v %v", w, err)
		}
		err = cfg.planMoves(context.Background(), switchReader{rows: []AllocationRow{{Consumer: "i1", Provider: "r", Class: "VCPU", Used: tc.used}}}, w)
		if tc.wantErr != "" {
			if !errors.Is(err, ErrLayoutSwitch) || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("used %d: %v, want %q", tc.used, err, tc.wantErr)
			}
			continue
		}
		if err != nil || len(w.Moves) != 1 || w.Moves[0].To != tc.wantTo || w.Moves[0].From != "r" {
			t.Errorf("used %d: moves %+v, %v", tc.used, w.Moves, err)
		}
	}
}
