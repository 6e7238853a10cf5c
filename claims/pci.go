package claims

import (
	"context"
	"fmt"
	"slices"

	"github.com/rpctl/rpctl/internal/nova"
)

// PCI devices in an instance's allocation. With [pci] report_in_placement
// on, Nova 26's resource tracker adds to an instance's allocation, at its
// first update, {<device provider>: {<class>: <devices the instance
// holds there>}} (nova/compute/pci_placement_translator.py,
// PciResourceProvider.update_allocations and _get_allocations), skipping an
// instance in a same-host resize. Heal does the same, for a new allocation
// and for an existing one missing it.

// PCIProviders is where a compute host reports its PCI devices in
// Placement: the migrate domain's rule (migrate.InventoryConfig, with each
// host's own nova.conf), which wrote the device providers.
type PCIProviders interface {
	// ReportsPCI says whether host's nova-compute reports PCI devices in
	// Placement.
	ReportsPCI(host *string) bool
	// PCIDeviceProvider returns the name and class of the provider of
	// device d of host's compute node named node; ok false when it has
	// none.
	PCIDeviceProvider(host *string, node string, d nova.PCIDevice) (name, class string, ok bool)
}

// PCICell is the cell side of healing PCI device allocations; a Cell that
// does not implement it heals none.
type PCICell interface {
	// InstancePCIDevices returns the live (deleted = 0) pci_devices rows
	// whose instance_uuid is uuid, in id order.
	InstancePCIDevices(ctx context.Context, uuid string) ([]nova.PCIDevice, error)
	// InstanceMigrations returns the instance's live migrations rows.
	InstanceMigrations(ctx context.Context, uuid string) ([]InstanceMigration, error)
}

// InstanceMigration is what the PCI heal needs of a migrations row.
type InstanceMigration struct {
	SourceCompute, DestCompute *string
	Status                     string
}

// migrationDone are the statuses MigrationList.get_in_progress_by_host_and_node
// does not count as in progress.
func migrationDone(status string) bool {
	switch status {
	case "confirmed", "reverted", "error", "failed", "completed", "cancelled", "done":
		return true
	}
	return false
}

// sameHostResize is the resource tracker's same_host_instances: an
// in-progress migration whose source and destination compute are one
// (Migration.is_same_host).
func sameHostResize(ms []InstanceMigration) bool {
	for _, m := range ms {
		if !migrationDone(m.Status) && m.SourceCompute != nil && m.DestCompute != nil && *m.SourceCompute == *m.DestCompute {
			return true
		}
	}
	return false
}

// pciAlloc is one device provider's part of an instance's allocation.
type pciAlloc struct {
	provider, class string
	amount          int64
}

// pciAllocations are the device providers' parts of the instance's
// allocation Nova would add (by provider name, in the devices' order);
// nil when there are none to add.
func pciAllocations(pp PCIProviders, in *Instance, devs []nova.PCIDevice) []pciAlloc {
	var out []pciAlloc
	for _, d := range devs {
		if d.InstanceUUID == nil || *d.InstanceUUID != in.UUID {
			continue
		}
		name, class, ok := pp.PCIDeviceProvider(in.Host, *in.Node, d)
		if !ok {
			continue
		}
		i := slices.IndexFunc(out, func(a pciAlloc) bool { return a.provider == name })
		if i < 0 {
			out = append(out, pciAlloc{provider: name, class: class})
			i = len(out) - 1
		}
		out[i].amount++
	}
	return out
}

// addPCI puts the instance's PCI devices into alloc as update_allocations
// does: a provider's class set to the instance's devices there when it
// differs. It returns whether alloc changed. A device provider Placement
// does not have (migrate inventory has not made it) is left out.
func (r *healRun) addPCI(ctx context.Context, cell Cell, in *Instance, alloc *Allocations) (bool, error) {
	pc, ok := cell.(PCICell)
	if r.PCI == nil || !ok || in.Node == nil || !r.PCI.ReportsPCI(in.Host) {
		return false, nil
	}
	devs, err := pc.InstancePCIDevices(ctx, in.UUID)
	if err != nil || len(devs) == 0 {
		return false, err
	}
	want := pciAllocations(r.PCI, in, devs)
	if len(want) == 0 {
		return false, nil
	}
	ms, err := pc.InstanceMigrations(ctx, in.UUID)
	if err != nil {
		return false, err
	}
	if sameHostResize(ms) {
		return false, nil
	}
	if err := r.loadPlacer(ctx); err != nil {
		return false, err
	}
	if r.placer == nil {
		return false, nil
	}
	changed := false
	for _, w := range want {
		rp, ok := r.placer.byName(w.provider)
		if !ok {
			fmt.Fprintf(r.log, "Instance %s: PCI device provider %s not found in Placement; its devices are not allocated there.\n", in.UUID, w.provider)
			continue
		}
		pa := alloc.Allocations[rp]
		if pa.Resources[w.class] == w.amount {
			continue
		}
		if !changed {
			// alloc may share its map with what Placement holds (cur):
			// change a copy.
			m := make(map[string]ProviderAllocation, len(alloc.Allocations)+1)
			for k, v := range alloc.Allocations {
				m[k] = v
			}
			alloc.Allocations = m
		}
		res := make(map[string]int64, len(pa.Resources)+1)
		for k, v := range pa.Resources {
			res[k] = v
		}
		delta := w.amount - res[w.class]
		res[w.class] = w.amount
		pa.Resources = res
		alloc.Allocations[rp] = pa
		r.placer.claim(map[string]ProviderAllocation{rp: {Resources: map[string]int64{w.class: delta}}}, 1)
		changed = true
	}
	return changed, nil
}
