package candidates

// ClassName is the name of resource class index c (Inventory.Class).
func (m *Model) ClassName(c int32) string { return m.classes[c].name }

// WithoutUsage returns a copy of m with no allocation: the cloud empty, as
// it would hold the most.
func (m *Model) WithoutUsage() *Model {
	c := m.Clone()
	for i := range c.providers {
		for k := range c.providers[i].Inventories {
			c.providers[i].Inventories[k].Used = 0
		}
	}
	return c
}
