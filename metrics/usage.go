package metrics

import "github.com/rpctl/rpctl/candidates"

// Usage is the families of every provider's inventories: used, reserved,
// total and Placement's capacity ((total - reserved) * allocation_ratio),
// and os-capacity's per-hypervisor usage and allocatable capacity.
func Usage(m *candidates.Model) []*Family {
	osUsed := gauge("openstack_hypervisor_usage", "Currently allocated resource for each provider in placement (os-capacity's metric).",
		"hypervisor", "resource")
	osAlloc := gauge("openstack_hypervisor_allocatable_capacity", "The total allocatable resource in the placement inventory: total - reserved (os-capacity's metric).",
		"hypervisor", "resource")
	labels := []string{"provider", "provider_uuid", "resource_class"}
	used := gauge("rpctl_placement_used", "What the allocations against the inventory use.", labels...)
	reserved := gauge("rpctl_placement_reserved", "The inventory's reserved amount.", labels...)
	tot := gauge("rpctl_placement_inventory", "The inventory's total.", labels...)
	capa := gauge("rpctl_placement_capacity", "Placement's capacity of the inventory: (total - reserved) * allocation_ratio, truncated as Placement does.", labels...)
	for i := range m.NumProviders() {
		p := m.Provider(int32(i))
		for _, inv := range p.Inventories {
			rc := m.ClassName(inv.Class)
			osUsed.Add(float64(inv.Used), p.Name, rc)
			osAlloc.Add(float64(inv.Total-inv.Reserved), p.Name, rc)
			used.Add(float64(inv.Used), p.Name, p.UUID, rc)
			reserved.Add(float64(inv.Reserved), p.Name, p.UUID, rc)
			tot.Add(float64(inv.Total), p.Name, p.UUID, rc)
			capa.Add(float64(inv.Capacity), p.Name, p.UUID, rc)
		}
	}
	return []*Family{osUsed, osAlloc, used, reserved, tot, capa}
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
