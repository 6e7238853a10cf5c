package candidates

import "slices"

// Clone returns a copy of m whose usage Claim may change without touching
// m: the providers and their inventories are copied, everything else (the
// indexes, which usage does not affect) is shared.
func (m *Model) Clone() *Model {
	c := *m
	c.providers = slices.Clone(m.providers)
	n := 0
	for i := range m.providers {
		n += len(m.providers[i].Inventories)
	}
	backing := make([]Inventory, 0, n)
	for i := range c.providers {
		lo := len(backing)
		backing = append(backing, m.providers[i].Inventories...)
		c.providers[i].Inventories = backing[lo:len(backing):len(backing)]
	}
	return &c
}

// Room is how many more times the candidate's allocation fits on top of
// the current usage: the search's own rule (used + amount <= capacity, on
// each provider and class the candidate takes) applied k times. min_unit,
// max_unit and step_size concern one allocation's amounts, which the
// search already checked and which do not change with usage.
func (m *Model) Room(c *Candidate) int64 {
	room := int64(-1)
	for _, a := range c.Resources {
		if a.Amount <= 0 {
			continue
		}
		inv := m.providers[a.Provider].inventory(a.Class)
		if inv == nil {
			return 0
		}
		k := max(inv.Capacity-inv.Used, 0) / a.Amount
		if room < 0 || k < room {
			room = k
		}
	}
	return max(room, 0)
}

// Claim adds k copies of the candidate's allocation to the usage (a
// negative k releases them), as writing the allocation to Placement would.
// The candidate must come from a search on m or on the model m was cloned
// from.
func (m *Model) Claim(c *Candidate, k int64) {
	for _, a := range c.Resources {
		if inv := m.providers[a.Provider].inventory(a.Class); inv != nil {
			inv.Used += k * a.Amount
		}
	}
}

// Roots returns the root providers that are not sharing providers (the
// hosts), ascending: the order the search anchors candidates in.
func (m *Model) Roots() []int32 {
	out := make([]int32, 0, len(m.roots))
	for _, r := range m.roots {
		if !m.isSharing.has(r) {
			out = append(out, r)
		}
	}
	return out
}

// AggregateUUID returns the UUID of the aggregate at index a (see
// Provider.Aggregates).
func (m *Model) AggregateUUID(a int32) string { return m.aggs[a] }
