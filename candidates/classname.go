package candidates

// ClassName is the name of resource class index c (Inventory.Class).
func (m *Model) ClassName(c int32) string { return m.classes[c].name }
