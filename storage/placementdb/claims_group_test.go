package placementdb

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/rpctl/rpctl/claims"
	"github.com/rpctl/rpctl/migrate"
)

// TestPutAllocationsGroupsAsOneByOne (issue 35): whatever the group size,
// PutAllocations writes exactly the consumers that writing them one per
// transaction writes before the first refusal, and reports that refusal:
// a consumer naming an unknown class (refused before any capacity check),
// the first consumer past the provider's capacity, and a group that
// passes whole.
func TestPutAllocationsGroupsAsOneByOne(t *testing.T) {
	ctx := context.Background()
	write := func(i int, rp, class string, n int64) claims.Write {
		return claims.Write{Consumer: fmt.Sprintf("c0000000-0000-4000-8000-%012d", i),
			Alloc: claims.Allocations{Allocations: map[string]claims.ProviderAllocation{rp: {Resources: map[string]int64{class: n}}}, ProjectID: "p", UserID: "u"}}
	}
	// A node's root has VCPU 16, reserved 1, ratio 16: 240 allocatable.
	cases := []struct {
		name string
		ws   func(rp string) []claims.Write
	}{
		{"unknown class", func(rp string) []claims.Write {
			var ws []claims.Write
			for i := range 9 {
				ws = append(ws, write(i, rp, map[bool]string{true: "CUSTOM_NOPE", false: "VCPU"}[i == 5], 1))
			}
			return ws
		}},
		{"past the capacity", func(rp string) []claims.Write {
			var ws []claims.Write
			for i := range 20 {
				ws = append(ws, write(i, rp, "VCPU", 20))
			}
			return ws
		}},
		{"all fit", func(rp string) []claims.Write {
			var ws []claims.Write
			for i := range 12 {
				ws = append(ws, write(i, rp, "VCPU", 20))
			}
			return ws
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			type outcome struct {
				n        int
				refused  string
				consumer []string
			}
			var got []outcome
			for _, size := range []int{1, 7, 0} {
				db, ids := scriptPlacement(t)
				node := scriptNode(1, "one", 0, "")
				if errs := WriteNodes(ctx, db, ids, []migrate.NodeWrite{node}); errors.Join(errs...) != nil {
					t.Fatal(errors.Join(errs...))
				}
				p := &ClaimsPlacement{DB: db, GroupSize: size}
				n, err := p.PutAllocations(ctx, tc.ws(node.Providers[0].UUID))
				o := outcome{n: n}
				var we *claims.WriteError
				if errors.As(err, &we) {
					o.refused = we.Consumer
				} else if err != nil {
					t.Fatal(err)
				}
				if err := db.SelectContext(ctx, &o.consumer, "SELECT DISTINCT consumer_id FROM allocations ORDER BY consumer_id"); err != nil {
					t.Fatal(err)
				}
				if len(o.consumer) != n {
					t.Errorf("group size %d: %d consumers written, %d reported", size, len(o.consumer), n)
				}
				got = append(got, o)
			}
			for i := 1; i < len(got); i++ {
				if got[i].n != got[0].n || got[i].refused != got[0].refused || !slices.Equal(got[i].consumer, got[0].consumer) {
					t.Errorf("group size %d: %+v; one by one %+v", []int{1, 7, 0}[i], got[i], got[0])
				}
			}
			if tc.name != "all fit" && got[0].refused == "" {
				t.Errorf("nothing refused: %+v", got[0])
			}
		})
	}
}
