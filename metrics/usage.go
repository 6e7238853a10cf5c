package metrics

import "github.com/rpctl/rpctl/candidates"

// Usage is the families of every provider's inventories: what is used and
// Placement's capacity under os-capacity's names (the names its exporter
// and dashboards use), and the reserved amount under rpctl's. Three series
// per inventory and no more: at 10,000 hosts these are most of the page,
// and the total is the capacity's inputs, not a measure of its own.
func Usage(m *candidates.Model) []*Family {
	osUsed := gauge("openstack_hypervisor_placement_allocated", "Currently allocated resource for each provider in placement (os-capacity's metric).",
		"hypervisor", "resource")
	osCap := gauge("openstack_hypervisor_placement_allocatable_capacity",
		"The total allocatable resource in the placement inventory (os-capacity's metric, with Placement's exact capacity: (total - reserved) * allocation_ratio, truncated as Placement does).",
		"hypervisor", "resource")
	reserved := gauge("rpctl_placement_reserved", "The inventory's reserved amount.", "provider", "provider_uuid", "resource_class")
	n := 0
	for i := range m.NumProviders() {
		n += len(m.Provider(int32(i)).Inventories)
	}
	for _, f := range []*Family{osUsed, osCap, reserved} {
		f.Samples = make([]Sample, 0, n)
	}
	for i := range m.NumProviders() {
		p := m.Provider(int32(i))
		for _, inv := range p.Inventories {
			rc := m.ClassName(inv.Class)
			osUsed.Add(float64(inv.Used), p.Name, rc)
			osCap.Add(float64(inv.Capacity), p.Name, rc)
			reserved.Add(float64(inv.Reserved), p.Name, p.UUID, rc)
		}
	}
	return []*Family{osUsed, osCap, reserved}
}

// ProjectUsage is what one project's consumers hold of one class.
type ProjectUsage struct {
	ProjectID, ProjectName, Class string
	Used                          int64
}

// Projects is os-capacity's openstack_project_usage. rpctl reads the
// databases, not Keystone: project_name is empty.
func Projects(us []ProjectUsage) []*Family {
	f := gauge("openstack_project_usage", "Current placement allocations per project (os-capacity's metric; project_name is empty: rpctl does not ask Keystone).",
		"project_id", "project_name", "placement_resource")
	for _, u := range us {
		f.Add(float64(u.Used), u.ProjectID, u.ProjectName, u.Class)
	}
	return []*Family{f}
}
