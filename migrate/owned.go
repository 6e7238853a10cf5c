package migrate

import (
	"fmt"
	"strings"

	"github.com/rpctl/rpctl/inventory"
)

// When a provider is nova-compute's: the rule every migration that writes
// a compute node's providers, and `rpctl status`, follow.
//
// nova-compute's first update after it starts (ComputeManager.
// update_available_resource -> ResourceTracker._update ->
// _update_to_placement) always puts its virt driver's capability traits on
// the compute node's root provider: ResourceTracker._get_traits adds every
// trait of ComputeDriver.capabilities_as_traits() whose capability is
// supported (nova/virt/driver.py CAPABILITY_TRAITS_MAP), besides
// COMPUTE_NODE and COMPUTE_STATUS_DISABLED. Every in-tree driver of Nova 26
// supports at least one of them unconditionally (libvirt, fake, Hyper-V,
// ironic and VMware: COMPUTE_NET_ATTACH_INTERFACE; libvirt and fake also
// COMPUTE_DEVICE_TAGGING, COMPUTE_VOLUME_EXTEND, ...); the one exception is
// z/VM, whose only capability trait is COMPUTE_IMAGE_TYPE_RAW, which
// [compute] image_type_exclude_list = raw would remove. rpctl never writes
// any of them (its traits are COMPUTE_NODE, COMPUTE_STATUS_DISABLED,
// COMPUTE_MANAGED_PCI_DEVICE, HW_NUMA_ROOT, MISC_SHARES_VIA_AGGREGATE and
// the device_spec's), and nothing but a virt driver reports them, so one of
// them on the root means a nova-compute has reported the provider as its
// own, and from then on rewrites it at every periodic update.
//
// The alternatives are weaker: a service that is up (services.updated_at)
// heartbeats whether or not its resource tracker reached Placement, and
// says nothing of which Placement it reported to; and a provider's
// generation moves with every allocation the scheduler claims and every
// edit an operator makes through the API, as well as with rpctl's own
// re-runs.

// ownerTraits are CAPABILITY_TRAITS_MAP's traits (Nova 26.2.2,
// nova/virt/driver.py), with the capability each one stands for.
var ownerTraits = []struct{ trait, capability string }{
	{"COMPUTE_NET_ATTACH_INTERFACE", "supports_attach_interface"},
	{"COMPUTE_DEVICE_TAGGING", "supports_device_tagging"},
	{"COMPUTE_NET_ATTACH_INTERFACE_WITH_TAG", "supports_tagged_attach_interface"},
	{"COMPUTE_VOLUME_ATTACH_WITH_TAG", "supports_tagged_attach_volume"},
	{"COMPUTE_VOLUME_EXTEND", "supports_extend_volume"},
	{"COMPUTE_VOLUME_MULTI_ATTACH", "supports_multiattach"},
	{"COMPUTE_TRUSTED_CERTS", "supports_trusted_certs"},
	{"COMPUTE_ACCELERATORS", "supports_accelerators"},
	{"COMPUTE_IMAGE_TYPE_AKI", "supports_image_type_aki"},
	{"COMPUTE_IMAGE_TYPE_AMI", "supports_image_type_ami"},
	{"COMPUTE_IMAGE_TYPE_ARI", "supports_image_type_ari"},
	{"COMPUTE_IMAGE_TYPE_ISO", "supports_image_type_iso"},
	{"COMPUTE_IMAGE_TYPE_QCOW2", "supports_image_type_qcow2"},
	{"COMPUTE_IMAGE_TYPE_RAW", "supports_image_type_raw"},
	{"COMPUTE_IMAGE_TYPE_VDI", "supports_image_type_vdi"},
	{"COMPUTE_IMAGE_TYPE_VHD", "supports_image_type_vhd"},
	{"COMPUTE_IMAGE_TYPE_VHDX", "supports_image_type_vhdx"},
	{"COMPUTE_IMAGE_TYPE_VMDK", "supports_image_type_vmdk"},
	{"COMPUTE_IMAGE_TYPE_PLOOP", "supports_image_type_ploop"},
	{"COMPUTE_SAME_HOST_COLD_MIGRATE", "supports_migrate_to_same_host"},
	{"COMPUTE_RESCUE_BFV", "supports_bfv_rescue"},
	{"COMPUTE_SECURITY_UEFI_SECURE_BOOT", "supports_secure_boot"},
	{"COMPUTE_SOCKET_PCI_NUMA_AFFINITY", "supports_socket_pci_numa_affinity"},
	{"COMPUTE_REMOTE_MANAGED_PORTS", "supports_remote_managed_ports"},
	{"COMPUTE_EPHEMERAL_ENCRYPTION", "supports_ephemeral_encryption"},
	{"COMPUTE_EPHEMERAL_ENCRYPTION_LUKS", "supports_ephemeral_encryption_luks"},
	{"COMPUTE_EPHEMERAL_ENCRYPTION_PLAIN", "supports_ephemeral_encryption_plain"},
}

// NovaComputeOwner returns the first of a root provider's traits that only
// a nova-compute reports (a virt driver capability trait), or "" when no
// nova-compute has reported the provider yet: the provider is then still
// rpctl's to write.
func NovaComputeOwner(traits map[string]bool) string {
	for _, o := range ownerTraits {
		if traits[o.trait] {
			return o.trait
		}
	}
	return ""
}

// IsDriverCapabilityTrait says whether a trait is one of the virt drivers'
// capability traits, which only a nova-compute reports.
func IsDriverCapabilityTrait(t string) bool {
	for _, o := range ownerTraits {
		if o.trait == t {
			return true
		}
	}
	return false
}

// nodeOwner is the capability trait on the node's root provider as st
// holds it ("" when the root does not exist or no nova-compute owns it).
func nodeOwner(desired []DesiredProvider, st *PlacementState) string {
	for _, d := range desired {
		if d.ParentUUID != "" || d.UUID == "" {
			continue
		}
		if cur := st.Providers[d.UUID]; cur != nil {
			return NovaComputeOwner(cur.Traits)
		}
		return ""
	}
	return ""
}

// DescribeChanges is one line per provider of what a write changes, for
// the notice a forced write of an owned node prints first and the one a
// node left alone gets.
func DescribeChanges(changes []ProviderChange) string {
	var parts []string
	for _, ch := range changes {
		var what []string
		for _, ic := range ch.Inventories {
			switch {
			case ic.Before == nil:
				what = append(what, fmt.Sprintf("+%s total=%d reserved=%d max_unit=%d ratio=%s", ic.ResourceClass, ic.After.Total, ic.After.Reserved, ic.After.MaxUnit, FormatRatio(&ic.After.AllocationRatio)))
			case ic.After == nil:
				what = append(what, fmt.Sprintf("-%s total=%d", ic.ResourceClass, ic.Before.Total))
			default:
				what = append(what, fmt.Sprintf("%s %s", ic.ResourceClass, invDelta(ic.Before, ic.After)))
			}
		}
		if len(ch.AddTraits) > 0 {
			what = append(what, "+traits "+strings.Join(ch.AddTraits, ","))
		}
		if len(ch.RemoveTraits) > 0 {
			what = append(what, "-traits "+strings.Join(ch.RemoveTraits, ","))
		}
		if len(ch.AddAggs) > 0 {
			what = append(what, "+aggregates "+strings.Join(ch.AddAggs, ","))
		}
		parts = append(parts, fmt.Sprintf("%s %s [%s]", ch.Action, ch.Name, strings.Join(what, "; ")))
	}
	return strings.Join(parts, ", ")
}

// InventoryDelta lists the fields of inventory a that differ in b, old ->
// new ("total 16->12 reserved 1->0").
func InventoryDelta(a, b *inventory.Inventory) string { return invDelta(a, b) }

// invDelta lists the fields of an inventory that change, old -> new.
func invDelta(a, b *inventory.Inventory) string {
	names := [5]string{"total", "reserved", "min_unit", "max_unit", "step_size"}
	fa := [5]int64{a.Total, a.Reserved, a.MinUnit, a.MaxUnit, a.StepSize}
	fb := [5]int64{b.Total, b.Reserved, b.MinUnit, b.MaxUnit, b.StepSize}
	var out []string
	for i := range names {
		if fa[i] != fb[i] {
			out = append(out, fmt.Sprintf("%s %d->%d", names[i], fa[i], fb[i]))
		}
	}
	if a.AllocationRatio != b.AllocationRatio {
		out = append(out, fmt.Sprintf("allocation_ratio %s->%s", FormatRatio(&a.AllocationRatio), FormatRatio(&b.AllocationRatio)))
	}
	return strings.Join(out, " ")
}
