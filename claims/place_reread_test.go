package claims

import (
	"context"
	"testing"
)

// conflictPlacement answers the first PUT of each consumer in conflict
// with a consumer generation conflict, after another writer's change:
// then (when set) the consumer holds what that writer wrote, else nothing.
type conflictPlacement struct {
	*modelPlacement
	conflict map[string]*Allocations
}

func (p *conflictPlacement) PutAllocations(ctx context.Context, ws []Write) (int, error) {
	for i, w := range ws {
		other, ok := p.conflict[w.Consumer]
		if !ok {
			continue
		}
		delete(p.conflict, w.Consumer)
		n, err := p.fakePlacement.PutAllocations(ctx, ws[:i])
		if err != nil {
			return n, err
		}
		delete(p.allocs, w.Consumer)
		if other != nil {
			p.allocs[w.Consumer] = other
		}
		return i, &WriteError{Consumer: w.Consumer, Conflict: true, Detail: "consumer generation conflict"}
	}
	return p.fakePlacement.PutAllocations(ctx, ws)
}

// usedPerCell sums the VCPU the consumers hold on each NUMA cell.
func usedPerCell(fp *fakePlacement) map[string]int64 {
	out := map[string]int64{}
	for _, a := range fp.allocs {
		for rp, pa := range a.Allocations {
			out[rp] += pa.Resources["VCPU"]
		}
	}
	return out
}

// After a consumer generation conflict, heal reads the consumer again and
// decides again. The model of the tree must then count the consumer once,
// as Placement now holds it (or as the new decision writes it). Before, the
// first decision's claim stayed: a re-placed instance counted twice (with
// the page decided before its writes, the instance itself then found its
// node full), and one another writer had put on the other NUMA cell
// counted on the cell of the first decision (the instances decided after
// the re-read overfilled the other cell). Pages of one decide every
// instance after the previous one's write.
func TestHealRereadCountsTheConsumerOnce(t *testing.T) {
	g := int64(1)
	elsewhere := &Allocations{Allocations: map[string]ProviderAllocation{
		"numa1": {Resources: map[string]int64{"VCPU": 1, "MEMORY_MB": 256}}, "rp1": {Resources: map[string]int64{"DISK_GB": 1}}},
		ProjectID: "other", UserID: "u", ConsumerGeneration: &g}
	for _, tc := range []struct {
		name  string
		other *Allocations
		page  int
	}{
		{"the re-read finds no allocation", nil, 0},
		{"the re-read finds no allocation, pages of one", nil, 1},
		{"another writer put it on the other cell, pages of one", elsewhere, 1},
	} {
		for _, path := range []string{"heal", "batch"} {
			t.Run(path+"/"+tc.name, func(t *testing.T) {
				// Two cells of 2 VCPU, four 1-VCPU instances: room for
				// every one exactly.
				c, fp := cloud([]bool{true, true, true, true})
				p := &conflictPlacement{&modelPlacement{fakePlacement: fp, in: treeInput(false)}, map[string]*Allocations{inst(0).UUID: tc.other}}
				if path == "heal" {
					res, err := (&Healer{Cells: []Cell{c}, Placement: p}).Heal(context.Background(), HealOptions{Page: tc.page})
					if err != nil || res.Code != ExitHealed {
						t.Fatalf("heal: %+v %v", res, err)
					}
				} else {
					b := &Batch{Cells: []Cell{c}, Placement: p}
					count := 10
					if tc.page > 0 {
						count = tc.page
					}
					total := 0
					for {
						found, done, skipped, err := b.Run(context.Background(), count)
						if err != nil || found != done || len(skipped) > 0 {
							t.Fatalf("batch: found %d done %d skipped %v err %v", found, done, skipped, err)
						}
						if found == 0 {
							break
						}
						total += done
					}
					if total != 4 {
						t.Fatalf("batches healed %d instances, want 4", total)
					}
				}
				if len(fp.allocs) != 4 {
					t.Fatalf("%d instances hold allocations, want 4", len(fp.allocs))
				}
				if u := usedPerCell(fp); u["numa0"] != 2 || u["numa1"] != 2 {
					t.Errorf("VCPU used per cell %v, want 2 on each (their capacity)", u)
				}
			})
		}
	}
}

// A write Placement refuses (not a conflict) is skipped by a batch, and
// the room its decision claimed is free again for the next instances.
func TestBatchSkipFreesTheClaim(t *testing.T) {
	c, fp := cloud([]bool{true, true, true, true, true})
	fp.refuse[inst(0).UUID] = true
	p := &modelPlacement{fakePlacement: fp, in: treeInput(false)}
	b := &Batch{Cells: []Cell{c}, Placement: p}
	var skipped []Skipped
	for {
		found, _, sk, err := b.Run(context.Background(), 1)
		if err != nil {
			t.Fatal(err)
		}
		skipped = append(skipped, sk...)
		if found == 0 {
			break
		}
	}
	if len(skipped) != 1 || skipped[0].Instance != inst(0).UUID || len(fp.allocs) != 4 {
		t.Errorf("skipped %v, %d instances hold allocations; want only %s skipped and the 4 others healed", skipped, len(fp.allocs), inst(0).UUID)
	}
}
