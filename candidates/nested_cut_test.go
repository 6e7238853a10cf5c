package candidates

import (
	"context"
	"fmt"
	"testing"
)

// nestedCutInput is three trees of the shape the 2025.1 differential uses
// (cmd/candidates TestGenerationNestedPlacement13): a root without
// inventory over two children with VCPU:4 each ("T"), and a root with VCPU
// and MEMORY_MB over one child with MEMORY_MB ("M").
func nestedCutInput(shape string) *ModelInput {
	in := &ModelInput{}
	id := int64(0)
	add := func(parent int64, inv map[int64]int64) int64 {
		id++
		in.Providers = append(in.Providers, ProviderRow{ID: id, UUID: fmt.Sprintf("00000000-0000-4000-8000-%012d", id), Name: fmt.Sprintf("rp%d", id), ParentID: parent})
		for c, total := range inv {
			in.Inventories = append(in.Inventories, InventoryRow{ProviderID: id, ResourceClassID: c, Total: total, MinUnit: 1, MaxUnit: total, StepSize: 1, AllocationRatio: 1, SQLRatio: 1})
		}
		return id
	}
	const vcpu, mem = 0, 1 // os-resource-classes' indexes
	for range 3 {
		switch shape {
		case "T":
			r := add(0, nil)
			add(r, map[int64]int64{vcpu: 4})
			add(r, map[int64]int64{vcpu: 4})
		case "M":
			r := add(0, map[int64]int64{vcpu: 4, mem: 4})
			add(r, map[int64]int64{mem: 4})
		}
	}
	return in
}

// TestNestedFilterAfterGenerationBound: below microversion 1.29 on a cloud
// with trees, Placement 13 counts toward max_allocation_candidates the
// candidates exclude_nested_providers drops afterwards
// (AllocationCandidates._get_by_requests: _merge_candidates, then
// exclude_nested_providers, then limit_results), so it returns fewer than
// the bound, where dropping them first would fill it. On the T trees two
// granular groups give, per tree, A+A, A+B, B+A, B+B: the two middle ones
// use two providers of one tree. The counts are those Placement 13 gave in
// TestGenerationNestedPlacement13; "naive" is what filtering first gives,
// which this test must not.
func TestNestedFilterAfterGenerationBound(t *testing.T) {
	const granular = "resources1=VCPU:1&resources2=VCPU:1&group_policy=none"
	for _, tc := range []struct {
		shape, query string
		mv           string
		max          int
		strategy     string
		want, naive  int
	}{
		{"T", granular, "1.28", 1, "depth-first", 1, 1},
		{"T", granular, "1.28", 2, "depth-first", 1, 2},
		{"T", granular, "1.28", 5, "depth-first", 3, 5},
		{"T", granular, "1.25", 5, "depth-first", 3, 5},
		{"T", granular, "1.28", 0, "depth-first", 6, 6},
		{"T", granular, "1.28", 2, "breadth-first", 2, 2},
		{"T", granular, "1.28", 5, "breadth-first", 3, 5},
		{"T", granular, "1.28", 10, "breadth-first", 4, 6},
		{"T", granular + "&limit=2", "1.28", 5, "depth-first", 2, 2},
		{"T", granular + "&limit=4", "1.28", 5, "depth-first", 3, 4},
		// 1.29: nothing is dropped, the bound alone cuts.
		{"T", granular, "1.29", 5, "depth-first", 5, 5},
		{"T", granular, "1.29", 2, "breadth-first", 2, 2},
		// One unsuffixed group over a root and its child: R+R, R+C.
		{"M", "resources=VCPU:1,MEMORY_MB:1", "1.28", 2, "depth-first", 1, 2},
		{"M", "resources=VCPU:1,MEMORY_MB:1", "1.17", 4, "depth-first", 2, 3},
		{"M", "resources=VCPU:1,MEMORY_MB:1", "1.28", 0, "depth-first", 3, 3},
		{"M", "resources=VCPU:1,MEMORY_MB:1", "1.29", 4, "depth-first", 4, 4},
	} {
		name := fmt.Sprintf("%s %s %s max=%d %s", tc.shape, tc.mv, tc.query, tc.max, tc.strategy)
		m := mustModel(t, nestedCutInput(tc.shape))
		mv, err := ParseMicroversion(tc.mv)
		if err != nil {
			t.Fatal(err)
		}
		req, err := ParseQuery(tc.query, mv)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		res, err := m.Search(context.Background(), req, Options{MaxCandidates: tc.max, Strategy: tc.strategy})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(res.Candidates) != tc.want {
			t.Errorf("%s: %d candidates, want %d (filtering before the bound gives %d)", name, len(res.Candidates), tc.want, tc.naive)
		}
		// The summaries are the providers the kept candidates use (below
		// 1.29) or their trees (1.29).
		used := map[int32]bool{}
		for _, c := range res.Candidates {
			for _, a := range c.Resources {
				if mv < 29 {
					used[a.Provider] = true
					continue
				}
				for i := range m.providers {
					if m.providers[i].Root == m.providers[a.Provider].Root {
						used[int32(i)] = true
					}
				}
			}
		}
		if len(res.Summaries) != len(used) {
			t.Errorf("%s: %d provider summaries, want %d", name, len(res.Summaries), len(used))
		}
		for _, p := range res.Summaries {
			if !used[p] {
				t.Errorf("%s: summary of provider %d, which no candidate uses", name, p)
			}
		}
	}
}
