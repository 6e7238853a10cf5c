package claims

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/candidates"
)

// modelPlacement is fakePlacement with providers the core can search.
type modelPlacement struct {
	*fakePlacement
	in *candidates.ModelInput
}

func (p *modelPlacement) PlacementModel(context.Context) (*candidates.ModelInput, error) {
	return p.in, nil
}

func classID(name string) int64 {
	for i, c := range candidates.StandardResourceClasses() {
		if c == name {
			return int64(i)
		}
	}
	panic(name)
}

// treeInput is rp1 with two NUMA children (VCPU 2 / MEMORY_MB 512 each)
// and, when shared, DISK_GB on a sharing provider of rp1's aggregate
// (else on rp1).
func treeInput(shared bool) *candidates.ModelInput {
	in := &candidates.ModelInput{
		Providers: []candidates.ProviderRow{{ID: 1, UUID: "rp1", Name: "h1"}, {ID: 2, UUID: "numa0", Name: "h1_NUMA0", ParentID: 1}, {ID: 3, UUID: "numa1", Name: "h1_NUMA1", ParentID: 1}},
		Traits:    []candidates.NamedRow{{ID: 7, Name: "MISC_SHARES_VIA_AGGREGATE"}},
	}
	add := func(rp int64, rc string, total int64) {
		in.Inventories = append(in.Inventories, candidates.InventoryRow{ProviderID: rp, ResourceClassID: classID(rc), Total: total, MinUnit: 1, MaxUnit: total, StepSize: 1, AllocationRatio: 1, SQLRatio: 1})
	}
	for _, rp := range []int64{2, 3} {
		add(rp, "VCPU", 2)
		add(rp, "MEMORY_MB", 512)
	}
	if shared {
		in.Providers = append(in.Providers, candidates.ProviderRow{ID: 4, UUID: "ceph", Name: "shared-storage-ceph"})
		in.Aggregates = []candidates.NamedRow{{ID: 1, Name: "agg"}}
		in.ProviderAggregates = []candidates.LinkRow{{ProviderID: 1, OtherID: 1}, {ProviderID: 4, OtherID: 1}}
		in.ProviderTraits = []candidates.LinkRow{{ProviderID: 4, OtherID: 7}}
		add(4, "DISK_GB", 100)
	} else {
		add(1, "DISK_GB", 100)
	}
	return in
}

func TestHealPlacesOnTheLayoutsTree(t *testing.T) {
	one := map[string]int64{"VCPU": 1, "MEMORY_MB": 256}
	for _, tc := range []struct {
		name   string
		shared bool
		n      int
		want   []map[string]ProviderAllocation
	}{
		{"nested: the first NUMA cell until full, then the next", false, 3, []map[string]ProviderAllocation{
			{"numa0": {Resources: one}, "rp1": {Resources: map[string]int64{"DISK_GB": 1}}},
			{"numa0": {Resources: one}, "rp1": {Resources: map[string]int64{"DISK_GB": 1}}},
			{"numa1": {Resources: one}, "rp1": {Resources: map[string]int64{"DISK_GB": 1}}},
		}},
		{"nested and shared: DISK_GB on the sharing provider", true, 1, []map[string]ProviderAllocation{
			{"numa0": {Resources: one}, "ceph": {Resources: map[string]int64{"DISK_GB": 1}}},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			missing := make([]bool, tc.n)
			for i := range missing {
				missing[i] = true
			}
			c, fp := cloud(missing)
			p := &modelPlacement{fakePlacement: fp, in: treeInput(tc.shared)}
			res, err := (&Healer{Cells: []Cell{c}, Placement: p}).Heal(context.Background(), HealOptions{})
			if err != nil || res.Code != ExitHealed {
				t.Fatalf("heal: %+v %v", res, err)
			}
			for i, want := range tc.want {
				if got := fp.allocs[inst(i).UUID].Allocations; !reflect.DeepEqual(got, want) {
					t.Errorf("instance %d: %v, want %v", i, got, want)
				}
			}
		})
	}
}

func TestHealNamesWhatDoesNotFit(t *testing.T) {
	c, fp := cloud([]bool{true, true, true, true, true})
	p := &modelPlacement{fakePlacement: fp, in: treeInput(true)}
	b := &Batch{Cells: []Cell{c}, Placement: p}
	found, done, skipped, err := b.Run(context.Background(), 10)
	if err != nil || found != 5 || done != 4 || len(skipped) != 1 {
		t.Fatalf("found %d done %d skipped %v err %v", found, done, skipped, err)
	}
	var pe *PlaceError
	if !errors.As(skipped[0].Err, &pe) {
		// Batch keeps the message; the text must still say it all.
		msg := skipped[0].Err.Error()
		for _, want := range []string{inst(4).UUID, "host h1", "MEMORY_MB does not fit", "--ram-allocation-ratio"} {
			if !strings.Contains(msg, want) {
				t.Errorf("skip message %q lacks %q", msg, want)
			}
		}
		return
	}
	if pe.Class != "MEMORY_MB" || pe.Host != "h1" {
		t.Errorf("%+v", pe)
	}
}

// A one-provider tree gets Nova's allocation without a search, even when
// it would not fit: Placement's PUT decides, as it does for Nova.
func TestHealFlatTreeIsNovas(t *testing.T) {
	c, fp := cloud([]bool{true})
	in := &candidates.ModelInput{Providers: []candidates.ProviderRow{{ID: 1, UUID: "rp1", Name: "h1"}}}
	p := &modelPlacement{fakePlacement: fp, in: in}
	if res, err := (&Healer{Cells: []Cell{c}, Placement: p}).Heal(context.Background(), HealOptions{}); err != nil || res.Code != ExitHealed {
		t.Fatalf("heal: %+v %v", res, err)
	}
	want := map[string]ProviderAllocation{"rp1": {Resources: map[string]int64{"VCPU": 1, "MEMORY_MB": 256, "DISK_GB": 1}}}
	if got := fp.allocs[inst(0).UUID].Allocations; !reflect.DeepEqual(got, want) {
		t.Errorf("%v, want %v", got, want)
	}
}
