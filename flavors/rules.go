package flavors

import (
	"fmt"
	"slices"
	"strings"

	"github.com/rpctl/rpctl/internal/release"
)

// Rules are the flavor/image → request rules that changed between the
// releases rpctl knows: one row per release (RulesOf), read from each
// release's nova/scheduler/utils.py, nova/scheduler/request_filter.py,
// nova/virt/hardware.py and nova/objects/fields.py (Zed: Nova 26.2.2,
// 2025.1: Nova 31.0.0, run by the parity tests; 2023.1-2024.2: Nova
// 27.0.0-30.0.0's git tags, read only; docs/releases.md has the lines).
// Which release brought each rule: the memory-encryption message Nova 27,
// maxphysaddr and packed virtqueue Nova 29, the vTPM model trait and
// stateless firmware Nova 30, igb Nova 31. The standard
// traits the request filters check against are the release's os-traits
// (standards.TraitsOf).
type Rules struct {
	Release release.Name
	// TPMModelTrait: _translate_vtpm_request requires the vTPM model's
	// trait (COMPUTE_SECURITY_TPM_TIS, the default, or _CRB) beside the
	// version's.
	TPMModelTrait bool
	// MaxPhysAddr: _translate_maxphysaddr_request requires
	// COMPUTE_ADDRESS_SPACE_PASSTHROUGH or _EMULATED for hw:maxphysaddr_mode
	// (hardware.get_maxphysaddr_mode, fields.MaxPhyAddrMode).
	MaxPhysAddr bool
	// StatelessFirmware: _translate_stateless_firmware_request requires
	// COMPUTE_SECURITY_STATELESS_FIRMWARE for the image's
	// hw_firmware_stateless (hardware.get_stateless_firmware_constraint).
	StatelessFirmware bool
	// PackedVirtqueue: request_filter.packed_virtqueue_filter requires
	// COMPUTE_NET_VIRTIO_PACKED on the root provider for
	// hw:virtio_packed_ring (hardware.get_packed_virtqueue_constraint).
	PackedVirtqueue bool
	// MemEncryptionNoUEFI ends the FlavorImageConflict message of
	// _check_mem_encryption_uses_uefi_image (memory encryption asked for,
	// the image not UEFI): 2025.1's adds the volume-backed case.
	MemEncryptionNoUEFI string
	// VIFModels is fields.VIFModel.ALL (network_model.VIF_MODEL_ALL): an
	// image's hw_vif_model outside it makes ImageMeta.from_dict raise
	// ValueError; 2025.1's adds igb.
	VIFModels []string
}

// vifModelsZed is Nova 26.2.2's nova/network/model.py:156 VIF_MODEL_ALL.
var vifModelsZed = []string{"virtio", "ne2k_pci", "pcnet", "rtl8139", "e1000", "e1000e", "netfront", "spapr-vlan", "lan9118", "sriov", "vmxnet", "vmxnet3"}

// memEncNoUEFIVolume is the end of _check_mem_encryption_uses_uefi_image's
// message from Nova 27 on.
const memEncNoUEFIVolume = "doesn't have 'hw_firmware_type' property set to 'uefi' or volume-backed instance was requested"

// RulesOf returns release rel's row ("" is release.Default); a release
// without one is an error naming the releases that have one.
func RulesOf(rel release.Name) (Rules, error) {
	if rel == "" {
		rel = release.Default
	}
	switch rel {
	case release.Zed:
		// Nova 26.2.2: nova/scheduler/utils.py:274-286 (version trait
		// only), no maxphysaddr, stateless firmware or packed virtqueue
		// rule; VIF_MODEL_ALL without igb.
		// nova/virt/hardware.py:1229-1231.
		return Rules{Release: rel, VIFModels: vifModelsZed,
			MemEncryptionNoUEFI: "doesn't have 'hw_firmware_type' property set to 'uefi'"}, nil
	case release.R2023_1, release.R2023_2:
		// Nova 27.0.0 (27.5.1 the same) and Nova 28.0.0 (28.3.1):
		// nova/virt/hardware.py:1233-1235 (the volume-backed case in the
		// message: nova commit 54faea0196 "Fix logging in
		// MemEncryption-related checks"), no maxphysaddr,
		// stateless firmware, packed virtqueue or vTPM model rule in
		// nova/scheduler/utils.py or request_filter.py; VIF_MODEL_ALL
		// without igb (nova/network/model.py).
		return Rules{Release: rel, VIFModels: vifModelsZed, MemEncryptionNoUEFI: memEncNoUEFIVolume}, nil
	case release.R2024_1:
		// Nova 29.0.0 (29.4.0 the same): nova/scheduler/utils.py
		// _translate_maxphysaddr_request (nova commit 1038a63387 "libvirt:
		// Support maxphysaddr."), request_filter.py packed_virtqueue_filter
		// (nova commit eb8519d811 "Packed virtqueue support was added.");
		// vTPM still the version trait only.
		return Rules{Release: rel, MaxPhysAddr: true, PackedVirtqueue: true,
			VIFModels: vifModelsZed, MemEncryptionNoUEFI: memEncNoUEFIVolume}, nil
	case release.R2024_2:
		// Nova 30.0.0 (30.3.0 the same): nova/scheduler/utils.py
		// _translate_stateless_firmware_request (nova commit 3169e7cebd
		// "libvirt: Launch instances with stateless firmware") and the vTPM
		// model trait in _translate_vtpm_request (nova commit c8674a88b6
		// "libvirt: Report available TPM models"); scheduler/utils.py and request_filter.py
		// are Nova 31.0.0's files unchanged. VIF_MODEL_ALL still without igb
		// (nova/network/model.py of 30.0.0 has no VIF_MODEL_IGB: nova commit
		// 638efe3cd5 "[ovo]Add igb value to hw_vif_model image property"
		// came in Nova 31).
		return Rules{Release: rel, TPMModelTrait: true, MaxPhysAddr: true, StatelessFirmware: true, PackedVirtqueue: true,
			VIFModels: vifModelsZed, MemEncryptionNoUEFI: memEncNoUEFIVolume}, nil
	case release.R2025_1:
		// Nova 31.0.0: nova/scheduler/utils.py:196-199 and :278-318,
		// request_filter.py:275-288 and :455, nova/network/model.py:157
		// (VIF_MODEL_ALL ending with VIF_MODEL_IGB), nova/virt/hardware.py:1262-1266.
		return Rules{Release: rel, TPMModelTrait: true, MaxPhysAddr: true, StatelessFirmware: true, PackedVirtqueue: true,
			VIFModels:           append(slices.Clip(vifModelsZed), "igb"),
			MemEncryptionNoUEFI: memEncNoUEFIVolume}, nil
	}
	return Rules{}, fmt.Errorf("no flavor → Placement request rules for release %q", rel)
}

// vifLegacyValues is fields.VIFModel.LEGACY_VALUES (the same in both
// releases): old spellings coerce() maps, after lower-casing.
func vifLegacyValue(v string) string {
	switch v {
	case "virtuale1000":
		return "e1000"
	case "virtuale1000e":
		return "e1000e"
	case "virtualpcnet32":
		return "pcnet"
	case "virtualsriovethernetcard":
		return "sriov"
	case "virtualvmxnet":
		return "vmxnet"
	case "virtualvmxnet3":
		return "vmxnet3"
	}
	return v
}

// maxPhysAddrModes is fields.MaxPhyAddrMode.ALL (Nova 31.0.0
// nova/objects/fields.py:565).
var maxPhysAddrModes = []string{"passthrough", "emulate"}

// imageProps is the part of ImageMeta.from_dict the rules read: the typed
// image properties coerced (hw_vif_model lower-cased and its legacy
// spellings mapped) and checked, a value the release's field refuses being
// Nova's ValueError. It returns the image's properties as the request
// filters see them.
func (r Rules) imageProps(img *Image) (map[string]string, error) {
	props := img.Properties
	if v, ok := props["hw_vif_model"]; ok {
		c := vifLegacyValue(strings.ToLower(v))
		if !slices.Contains(r.VIFModels, c) {
			return nil, novaErr("ValueError", "Field value %s is invalid", c)
		}
		if c != v {
			props = cloneProps(props)
			props["hw_vif_model"] = c
		}
	}
	if v, ok := props["hw_maxphysaddr_mode"]; ok && r.MaxPhysAddr && !slices.Contains(maxPhysAddrModes, v) {
		return nil, novaErr("ValueError", "Field value %s is invalid", v)
	}
	return props, nil
}

func cloneProps(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
