package flavors

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/rpctl/rpctl/candidates"
	"github.com/rpctl/rpctl/internal/nova"
	"github.com/rpctl/rpctl/internal/pyjson"
	"github.com/rpctl/rpctl/internal/standards"
)

// NovaError is an exception Nova raises while building the request (the API
// refuses such a flavor/image pair before it reaches the scheduler).
type NovaError struct {
	Exception string // e.g. "InvalidCPUAllocationPolicy"
	Message   string
}

func (e *NovaError) Error() string { return e.Message }

func novaErr(exc, format string, args ...any) error {
	return &NovaError{Exception: exc, Message: fmt.Sprintf(format, args...)}
}

// flavorImage reads extra specs and image properties the way
// nova.virt.hardware's helpers do.
type flavorImage struct {
	f     *nova.Flavor
	img   *Image
	rules Rules
}

// spec is flavor.extra_specs.get(key) with presence.
func (fi *flavorImage) spec(key string) (string, bool) {
	v, ok := fi.f.ExtraSpecs[key]
	return v, ok
}

func (fi *flavorImage) prop(key string) (string, bool) {
	v, ok := fi.img.Properties[key]
	return v, ok
}

// unique is _get_unique_flavor_image_meta: both set and different is a
// conflict; otherwise flavor_value or image_value (Python truthiness: an
// empty flavor value falls through to the image's).
func (fi *flavorImage) unique(key, prefix string) (string, bool, error) {
	fv, fok := fi.spec(prefix + ":" + key)
	iv, iok := fi.prop(prefix + "_" + key)
	if fv != "" && iv != "" && fv != iv {
		return "", false, novaErr("FlavorImageConflict",
			"Flavor %s has %s:%s extra spec explicitly set to %s, conflicting with image %s which has %s_%s explicitly set to %s.",
			fi.f.Name, prefix, key, fv, fi.img.Name, prefix, key, iv)
	}
	if fv != "" {
		return fv, true, nil
	}
	if iok && iv != "" {
		return iv, true, nil
	}
	if fok {
		return fv, true, nil // "" or None: Python returns the falsy value
	}
	return iv, iok, nil
}

// boolFromString is oslo's strutils.bool_from_string (not strict).
func boolFromString(s string) bool {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "1", "t", "true", "on", "y", "yes":
		return true
	}
	return false
}

// tri is an optional boolean: the flavor's parsed extra spec or the
// image's FlexibleBoolean property, unset when absent.
type tri int8

const (
	unset tri = iota
	no
	yes
)

func triOf(s string, ok bool) tri {
	if !ok {
		return unset
	}
	if boolFromString(s) {
		return yes
	}
	return no
}

func pyStr(t tri) string {
	if t == yes {
		return "True"
	}
	return "False"
}

var (
	cpuPolicies      = []string{"dedicated", "shared", "mixed"}
	threadPolicies   = []string{"prefer", "isolate", "require"}
	emulatorPolicies = []string{"share", "isolate"}
	pciNUMAPolicies  = []string{"required", "legacy", "preferred", "socket"}
	secureBootValues = []string{"required", "disabled", "optional"}
	tpmVersions      = []string{"1.2", "2.0"}
	tpmModels        = []string{"tpm-tis", "tpm-crb"}
	ephemeralFormats = []string{"plain", "luks", "luksv2"}
)

// pyTupleStr is str() of a tuple of strings, as Nova's messages show the
// allowed values.
func pyTupleStr(vals []string) string {
	q := make([]string, len(vals))
	for i, v := range vals {
		q[i] = "'" + v + "'"
	}
	return "(" + strings.Join(q, ", ") + ")"
}

// cpuPolicy is get_cpu_policy_constraint.
func (fi *flavorImage) cpuPolicy() (string, error) {
	fp, _ := fi.spec("hw:cpu_policy")
	ip, _ := fi.prop("hw_cpu_policy")
	if fp != "" && !slices.Contains(cpuPolicies, fp) {
		return "", novaErr("InvalidCPUAllocationPolicy", "CPU policy requested from 'flavor extra specs' is invalid, given: '%s', available: '%s'.", fp, pyTupleStr(cpuPolicies))
	}
	if ip != "" && !slices.Contains(cpuPolicies, ip) {
		return "", novaErr("InvalidCPUAllocationPolicy", "CPU policy requested from 'image properties' is invalid, given: '%s', available: '%s'.", ip, pyTupleStr(cpuPolicies))
	}
	forbidden := novaErr("ImageCPUPinningForbidden", "Image property 'hw_cpu_policy' is not permitted to override CPU pinning policy set against the flavor")
	switch fp {
	case "dedicated":
		return fp, nil
	case "mixed":
		if ip == "dedicated" {
			return "", forbidden
		}
		return fp, nil
	case "shared":
		if ip == "mixed" || ip == "dedicated" {
			return "", forbidden
		}
		return fp, nil
	}
	return ip, nil
}

// threadPolicy is get_cpu_thread_policy_constraint.
func (fi *flavorImage) threadPolicy() (string, error) {
	fp, fok := fi.spec("hw:cpu_thread_policy")
	ip, _ := fi.prop("hw_cpu_thread_policy")
	if fp != "" && !slices.Contains(threadPolicies, fp) {
		return "", novaErr("InvalidCPUThreadAllocationPolicy", "CPU thread policy requested from 'flavor extra specs' is invalid, given: '%s', available: '%s'.", fp, pyTupleStr(threadPolicies))
	}
	if ip != "" && !slices.Contains(threadPolicies, ip) {
		return "", novaErr("InvalidCPUThreadAllocationPolicy", "CPU thread policy requested from 'image properties' is invalid, given: '%s', available: '%s'.", ip, pyTupleStr(threadPolicies))
	}
	if !fok || fp == "prefer" {
		if fp != "" {
			return fp, nil
		}
		return ip, nil
	}
	if ip != "" && ip != fp {
		return "", novaErr("ImageCPUThreadPolicyForbidden", "Image property 'hw_cpu_thread_policy' is not permitted to override CPU thread pinning policy set against the flavor")
	}
	return fp, nil
}

// emulatorPolicy is get_emulator_thread_policy_constraint.
func (fi *flavorImage) emulatorPolicy() (string, error) {
	p, _ := fi.spec("hw:emulator_threads_policy")
	if p == "" {
		return "", nil
	}
	if !slices.Contains(emulatorPolicies, p) {
		return "", novaErr("InvalidEmulatorThreadsPolicy", "CPU emulator threads option requested is invalid, given: '%s', available: '%s'.", p, pyTupleStr(emulatorPolicies))
	}
	return p, nil
}

// parseCPUSpec is hardware.parse_cpu_spec ("1-4,^3,6").
func parseCPUSpec(spec string) (map[int64]bool, error) {
	ids, reject := map[int64]bool{}, map[int64]bool{}
	pyint := func(s string) (int64, bool) { return candidates.PyInt(s) }
	for _, rule := range strings.Split(spec, ",") {
		rule = strings.TrimSpace(rule)
		if rule == "" {
			continue
		}
		if lo, hi, isRange := strings.Cut(rule, "-"); isRange {
			rej := strings.HasPrefix(lo, "^")
			if rej {
				lo = lo[1:]
			}
			start, ok1 := pyint(lo)
			end, ok2 := pyint(hi)
			if !ok1 || !ok2 || start > end {
				return nil, novaErr("Invalid", "Invalid range expression %s", pyjson.Repr(rule))
			}
			if end-start > 1<<16 {
				return nil, novaErr("Invalid", "Invalid range expression %s (too wide for rpctl)", pyjson.Repr(rule))
			}
			for c := start; c <= end; c++ {
				if rej {
					reject[c] = true
				} else {
					ids[c] = true
				}
			}
		} else if rule[0] == '^' {
			c, ok := pyint(rule[1:])
			if !ok {
				return nil, novaErr("Invalid", "Invalid exclusion expression %s", pyjson.Repr(rule))
			}
			reject[c] = true
		} else {
			c, ok := pyint(rule)
			if !ok {
				return nil, novaErr("Invalid", "Invalid inclusion expression %s", pyjson.Repr(rule))
			}
			ids[c] = true
		}
	}
	for c := range reject {
		delete(ids, c)
	}
	return ids, nil
}

// cpuRange is set(range(n)).
func cpuRange(n int64) map[int64]bool {
	m := map[int64]bool{}
	for i := int64(0); i < n; i++ {
		m[i] = true
	}
	return m
}

func subset(a, b map[int64]bool) bool {
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}

func sameSet(a, b map[int64]bool) bool { return len(a) == len(b) && subset(a, b) }

// maskSet parses a CPU mask the way the dedicated and realtime masks are:
// a mask starting with "^" excludes from all of the flavor's vCPUs.
func maskSet(mask string, vcpus int64) (map[int64]bool, error) {
	if strings.HasPrefix(strings.TrimSpace(mask), "^") {
		return parseCPUSpec(fmt.Sprintf("0-%d,%s", vcpus-1, mask))
	}
	return parseCPUSpec(mask)
}

// dedicatedCPUs is get_dedicated_cpu_constraint; nil when no mask is set.
func (fi *flavorImage) dedicatedCPUs() (map[int64]bool, error) {
	mask, _ := fi.spec("hw:cpu_dedicated_mask")
	if mask == "" {
		return nil, nil
	}
	pcpus, err := maskSet(mask, fi.f.VCPUs)
	if err != nil {
		return nil, err
	}
	cpus := cpuRange(fi.f.VCPUs)
	shared := 0
	for c := range cpus {
		if !pcpus[c] {
			shared++
		}
	}
	if len(pcpus) == 0 || shared == 0 {
		return nil, novaErr("InvalidMixedInstanceDedicatedMask", "Mixed instance must have at least 1 pinned vCPU and 1 unpinned vCPU. See 'hw:cpu_dedicated_mask'.")
	}
	if !subset(pcpus, cpus) {
		return nil, novaErr("InvalidMixedInstanceDedicatedMask", "Mixed instance dedicated vCPU(s) mask is not a subset of vCPUs in the flavor. See \"hw:cpu_dedicated_mask\"")
	}
	return pcpus, nil
}

// realtimeCPUs is get_realtime_cpu_constraint; nil when realtime is off.
func (fi *flavorImage) realtimeCPUs() (map[int64]bool, error) {
	rt, _ := fi.spec("hw:cpu_realtime")
	if !boolFromString(rt) {
		return nil, nil
	}
	fm, _ := fi.spec("hw:cpu_realtime_mask")
	im, _ := fi.prop("hw_cpu_realtime_mask")
	mask := im
	if mask == "" {
		mask = fm
	}
	all := cpuRange(fi.f.VCPUs)
	rtSet := all
	if mask != "" {
		var err error
		if rtSet, err = maskSet(mask, fi.f.VCPUs); err != nil {
			return nil, err
		}
	}
	notFound := novaErr("RealtimeMaskNotFoundOrInvalid", "Use of realtime CPUs requires either one or more non-realtime CPU(s) or offloaded emulator threads.")
	if len(rtSet) == 0 {
		return nil, notFound
	}
	emu, err := fi.emulatorPolicy()
	if err != nil {
		return nil, err
	}
	if sameSet(all, rtSet) && emu == "" {
		return nil, notFound
	}
	if !subset(rtSet, all) {
		return nil, novaErr("RealtimeMaskNotFoundOrInvalid", "Realtime policy vCPU(s) mask is configured with RT vCPUs that are not a subset of the vCPUs in the flavor. See hw:cpu_realtime_mask or hw_cpu_realtime_mask")
	}
	return rtSet, nil
}

// translatePinning is ResourceRequest._translate_pinning_policies.
func (b *builder) translatePinning(fi *flavorImage) error {
	policy, err := fi.cpuPolicy()
	if err != nil {
		return err
	}
	thread, err := fi.threadPolicy()
	if err != nil {
		return err
	}
	emu, err := fi.emulatorPolicy()
	if err != nil {
		return err
	}
	var pcpus int64
	if policy == "dedicated" {
		b.pinning = true
		pcpus = fi.f.VCPUs
	}
	if policy == "mixed" {
		ded, err := fi.dedicatedCPUs()
		if err != nil {
			return err
		}
		rt, err := fi.realtimeCPUs()
		if err != nil {
			return err
		}
		switch {
		case len(ded) > 0:
			pcpus = int64(len(ded))
		case len(rt) > 0:
			pcpus = int64(len(rt))
		}
		b.addAmount("VCPU", fi.f.VCPUs-pcpus)
	}
	if policy == "dedicated" || policy == "mixed" {
		if emu == "isolate" {
			pcpus++
		}
		b.addAmount("PCPU", pcpus)
	}
	switch thread {
	case "isolate":
		b.addTrait("HW_CPU_HYPERTHREADING", "forbidden", "")
	case "require":
		b.addTrait("HW_CPU_HYPERTHREADING", "required", "")
	}
	return nil
}

// translateRest is what from_request_spec does after the flavor's
// VCPU/MEMORY_MB/DISK_GB: memory encryption, vPMEM, vTPM, PCI NUMA
// affinity and secure boot, in that order.
func (b *builder) translateRest(fi *flavorImage) error {
	enc, err := fi.memEncryption()
	if err != nil {
		return err
	}
	if enc {
		b.addAmount("MEM_ENCRYPTION_CONTEXT", 1)
	}
	// _translate_vpmems_request: one CUSTOM_PMEM_NAMESPACE_<label> per label.
	if v, _ := fi.spec("hw:pmem"); v != "" {
		counts := map[string]int64{}
		var order []string
		for _, l := range strings.Split(v, ",") {
			if l = strings.TrimSpace(l); l == "" {
				continue
			}
			rc := normalizeClassName("PMEM_NAMESPACE_" + l)
			if counts[rc] == 0 {
				order = append(order, rc)
			}
			counts[rc]++
		}
		for _, rc := range order {
			b.addAmount(rc, counts[rc])
		}
	}
	version, ok, err := fi.unique("tpm_version", "hw")
	if err != nil {
		return err
	}
	if ok {
		if !slices.Contains(tpmVersions, version) {
			return novaErr("Invalid", "Invalid TPM version %s. Allowed values: %s.", pyjson.Repr(version), strings.Join(tpmVersions, ", "))
		}
		model, mok, err := fi.unique("tpm_model", "hw")
		if err != nil {
			return err
		}
		switch {
		case !mok:
		case !slices.Contains(tpmModels, model):
			return novaErr("Invalid", "Invalid TPM model %s. Allowed values: %s.", pyjson.Repr(model), strings.Join(tpmModels, ", "))
		case model == "tpm-crb" && version != "2.0":
			return novaErr("Invalid", "TPM model CRB is only valid with TPM version 2.0.")
		}
		if version == "1.2" {
			b.addTrait("COMPUTE_SECURITY_TPM_1_2", "required", "")
		} else {
			b.addTrait("COMPUTE_SECURITY_TPM_2_0", "required", "")
		}
		if fi.rules.TPMModelTrait {
			// The model defaults to TIS (get_vtpm_constraint).
			if model == "tpm-crb" {
				b.addTrait("COMPUTE_SECURITY_TPM_CRB", "required", "")
			} else {
				b.addTrait("COMPUTE_SECURITY_TPM_TIS", "required", "")
			}
		}
	}
	fp, _ := fi.spec("hw:pci_numa_affinity_policy")
	ip, _ := fi.prop("hw_pci_numa_affinity_policy")
	if fp != "" && ip != "" && fp != ip {
		return novaErr("ImagePCINUMAPolicyForbidden", "Image property 'hw_pci_numa_affinity_policy' is not permitted to override the 'hw:pci_numa_affinity_policy' flavor extra spec.")
	}
	pol := fp
	if pol == "" {
		pol = ip
	}
	if pol != "" && !slices.Contains(pciNUMAPolicies, pol) {
		return novaErr("InvalidPCINUMAAffinity", "Invalid PCI NUMA affinity configured: %s", pol)
	}
	if pol == "socket" {
		b.addTrait("COMPUTE_SOCKET_PCI_NUMA_AFFINITY", "required", "")
	}
	sb, ok, err := fi.unique("secure_boot", "os")
	if err != nil {
		return err
	}
	if ok {
		if !slices.Contains(secureBootValues, sb) {
			return novaErr("Invalid", "Invalid secure boot policy %s. Allowed values: %s.", pyjson.Repr(sb), strings.Join(secureBootValues, ", "))
		}
		if sb == "required" {
			b.addTrait("COMPUTE_SECURITY_UEFI_SECURE_BOOT", "required", "")
		}
	}
	if fi.rules.MaxPhysAddr {
		// _translate_maxphysaddr_request (get_maxphysaddr_mode).
		mode, ok, err := fi.unique("maxphysaddr_mode", "hw")
		if err != nil {
			return err
		}
		if ok {
			switch mode {
			case "passthrough":
				b.addTrait("COMPUTE_ADDRESS_SPACE_PASSTHROUGH", "required", "")
			case "emulate":
				b.addTrait("COMPUTE_ADDRESS_SPACE_EMULATED", "required", "")
			default:
				return novaErr("Invalid", "Invalid Maxphyaddr mode %s. Allowed values: %s.", pyjson.Repr(mode), strings.Join(maxPhysAddrModes, ", "))
			}
		}
	}
	if fi.rules.StatelessFirmware {
		// _translate_stateless_firmware_request
		// (get_stateless_firmware_constraint): the image's
		// FlexibleBoolean property.
		if triOf(fi.prop("hw_firmware_stateless")) == yes {
			if fw, _ := fi.prop("hw_firmware_type"); fw != "uefi" {
				return novaErr("Invalid", "Stateless firmware is supported only when UEFI firmware type is used.")
			}
			b.addTrait("COMPUTE_SECURITY_STATELESS_FIRMWARE", "required", "")
		}
	}
	return nil
}

// memEncryption is get_mem_encryption_constraint (no machine type known at
// the scheduler: only the image's hw_machine_type is checked).
func (fi *flavorImage) memEncryption() (bool, error) {
	fs, fok := fi.spec("hw:mem_encryption")
	flavorEnc := triOf(fs, fok)
	imageEnc := triOf(fi.prop("hw_mem_encryption"))
	if flavorEnc != yes && imageEnc != yes {
		return false, nil
	}
	if flavorEnc != unset && imageEnc != unset && flavorEnc != imageEnc {
		return false, novaErr("FlavorImageConflict", "Flavor %s has hw:mem_encryption extra spec explicitly set to %s, conflicting with image %s which has hw_mem_encryption property explicitly set to %s",
			fi.f.Name, fs, fi.img.Name, pyStr(imageEnc))
	}
	var requesters []string
	if flavorEnc == yes {
		requesters = append(requesters, fmt.Sprintf("hw:mem_encryption extra spec in %s flavor", fi.f.Name))
	}
	if imageEnc == yes {
		requesters = append(requesters, fmt.Sprintf("hw_mem_encryption property of image %s", fi.img.ID))
	}
	if fw, _ := fi.prop("hw_firmware_type"); fw != "uefi" {
		return false, novaErr("FlavorImageConflict", "Memory encryption requested by %s but image %s %s",
			strings.Join(requesters, " and "), fi.img.Name, fi.rules.MemEncryptionNoUEFI)
	}
	if mt, ok := fi.prop("hw_machine_type"); ok && !strings.Contains(mt, "q35") {
		return false, novaErr("InvalidMachineType", "Machine type '%s' is not compatible with image %s (%s): q35 type is required for SEV to work", mt, fi.img.Name, fi.img.ID)
	}
	return true, nil
}

// normalizeClassName is os_resource_classes.normalize_name.
func normalizeClassName(name string) string {
	var b strings.Builder
	inRun := false
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' {
			b.WriteByte(c)
			inRun = false
			continue
		}
		// Python's regex works on characters: a multi-byte character is
		// one non-alphanumeric run like any other.
		if !inRun {
			b.WriteByte('_')
			inRun = true
		}
	}
	return "CUSTOM_" + strings.ToUpper(b.String())
}

// requestFilters are the request filters of nova.scheduler.request_filter
// that need no other service, in ALL_REQUEST_FILTERS order. The others need
// a project, an availability zone, Neutron or Cyborg, or aggregate
// metadata, which an offline question does not carry.
func (b *builder) requestFilters(fi *flavorImage, o Options) error {
	// require_image_type_support
	if o.ImageTypeSupport && !o.BootFromVolume && fi.img.DiskFormat != "" {
		if t := "COMPUTE_IMAGE_TYPE_" + strings.ToUpper(fi.img.DiskFormat); standards.IsTraitOf(fi.rules.Release, t) {
			b.rootReq[t] = true
		}
	}
	// compute_status_filter: always.
	b.rootForb["COMPUTE_STATUS_DISABLED"] = true
	// transform_image_metadata
	if o.ImageMetadataPrefilter {
		var add []string
		for _, km := range imagePrefixMap {
			v, ok := fi.prop(km[0])
			if !ok {
				continue
			}
			if km[0] == "hw_architecture" {
				v = canonicalArch(v)
			}
			t := km[1] + "_" + strings.ToUpper(strings.ReplaceAll(v, "-", "_"))
			if !standards.IsTraitOf(fi.rules.Release, t) {
				add = nil // Nova logs the bad trait and adds none of them
				break
			}
			add = append(add, t)
		}
		for _, t := range add {
			b.rootReq[t] = true
		}
	}
	// accelerators_filter
	if v, _ := fi.spec("accel:device_profile"); v != "" {
		b.rootReq["COMPUTE_ACCELERATORS"] = true
	}
	// packed_virtqueue_filter (get_packed_virtqueue_constraint): the
	// flavor's extra spec parsed with bool_from_string, the image's
	// FlexibleBoolean property.
	if fi.rules.PackedVirtqueue {
		fs, fok := fi.spec("hw:virtio_packed_ring")
		fv, iv := triOf(fs, fok), triOf(fi.prop("hw_virtio_packed_ring"))
		if fv != unset && iv != unset && fv != iv {
			return novaErr("FlavorImageConflict", "Flavor has hw:virtio_packed_ring extra spec explicitly set to %s, conflicting with image which has hw_virtio_packed_ring explicitly set to %s.",
				pyStr(fv), pyStr(iv))
		}
		if fv == yes || iv == yes {
			b.rootReq["COMPUTE_NET_VIRTIO_PACKED"] = true
		}
	}
	// ephemeral_encryption_filter
	fs, fok := fi.spec("hw:ephemeral_encryption")
	fe := triOf(fs, fok)
	ie := triOf(fi.prop("hw_ephemeral_encryption"))
	if fe != unset && ie != unset && fe != ie {
		return novaErr("FlavorImageConflict", "Flavor %s has hw:ephemeral_encryption extra spec explicitly set to %s, conflicting with image %s which has hw_eph_encryption property explicitly set to %s",
			fi.f.Name, fs, fi.img.Name, pyStr(ie))
	}
	if fe == yes || ie == yes {
		b.rootReq["COMPUTE_EPHEMERAL_ENCRYPTION"] = true
		format, _, err := fi.unique("ephemeral_encryption_format", "hw")
		if err != nil {
			return err
		}
		if format != "" {
			if !slices.Contains(ephemeralFormats, format) {
				return novaErr("Invalid", "Invalid ephemeral encryption format %s. Allowed values: %s", format, strings.Join(ephemeralFormats, ", "))
			}
			b.rootReq["COMPUTE_EPHEMERAL_ENCRYPTION_"+strings.ToUpper(format)] = true
		}
	}
	return nil
}

// imagePrefixMap is transform_image_metadata's prefix_map, in its order.
var imagePrefixMap = [][2]string{
	{"hw_cdrom_bus", "COMPUTE_STORAGE_BUS"},
	{"hw_disk_bus", "COMPUTE_STORAGE_BUS"},
	{"hw_video_model", "COMPUTE_GRAPHICS_MODEL"},
	{"hw_vif_model", "COMPUTE_NET_VIF_MODEL"},
	{"hw_architecture", "HW_ARCH"},
	{"hw_emulation_architecture", "COMPUTE_ARCH"},
	{"hw_viommu_model", "COMPUTE_VIOMMU"},
}

// canonicalArch is nova.objects.fields.Architecture.canonicalize, which the
// image's hw_architecture field applies.
func canonicalArch(name string) string {
	n := strings.ToLower(name)
	switch n {
	case "i386", "i486", "i586", "x86_32", "x86_32p":
		return "i686"
	case "amd64":
		return "x86_64"
	}
	return n
}

func asNovaError(err error, target **NovaError) bool { return errors.As(err, target) }
