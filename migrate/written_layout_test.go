package migrate

import (
	"path"
	"testing"

	"github.com/rpctl/rpctl/inventory"
)

func TestGlobQuote(t *testing.T) {
	for _, name := range []string{"cmp1", "a*b", "x?y", "r[1]", `b\s`, "cmp1-0*"} {
		q := globQuote(name)
		if ok, err := path.Match(q, name); !ok || err != nil {
			t.Errorf("%q as %q does not match itself: %v", name, q, err)
		}
		for _, other := range []string{name + "x", "cmp1-00001"} {
			if ok, _ := path.Match(q, other); ok && other != name {
				t.Errorf("%q as %q matches %q", name, q, other)
			}
		}
	}
}

func TestReadLayout(t *testing.T) {
	const root = "r"
	agg := SharedAggregateUUID("ceph")
	pool := SharedProviderUUID("ceph")
	numa := func(invs int) *PProvider {
		p := &PProvider{UUID: "n0", Name: "r_NUMA0", ParentUUID: root, Traits: map[string]bool{TraitNUMARoot: true}, Inventories: map[string]inventory.Inventory{}}
		if invs > 0 {
			p.Inventories["VCPU"] = inventory.Inventory{Total: 4}
		}
		return p
	}
	st := func(ps ...*PProvider) *PlacementState {
		s := &PlacementState{Providers: map[string]*PProvider{}}
		for _, p := range append([]*PProvider{{UUID: root, Name: "r", Aggregates: map[string]bool{agg: true}}}, ps...) {
			s.Providers[p.UUID] = p
		}
		return s
	}
	sharing := &PProvider{UUID: pool, Name: SharedProviderName("ceph"), Traits: map[string]bool{TraitShares: true}, Aggregates: map[string]bool{agg: true}}
	for _, tc := range []struct {
		name string
		st   *PlacementState
		want WrittenLayout
	}{
		{"flat", st(), WrittenLayout{}},
		{"nested", st(numa(1)), WrittenLayout{Nested: true}},
		{"emptied NUMA children after a switch to flat", st(numa(0)), WrittenLayout{}},
		{"in a pool", st(sharing), WrittenLayout{Pool: "ceph"}},
		{"nested in a pool", st(numa(1), sharing), WrittenLayout{Nested: true, Pool: "ceph"}},
		{"an aggregate with someone else's sharing provider", st(&PProvider{UUID: "x", Name: "nfs", Traits: map[string]bool{TraitShares: true}, Aggregates: map[string]bool{agg: true}}), WrittenLayout{}},
	} {
		if got := ReadLayout(tc.st, root); got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
	if got := ReadLayout(st(), "none"); got != (WrittenLayout{}) {
		t.Errorf("no provider: %+v", got)
	}
}
