package claims

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/rpctl/rpctl/standards"
)

// Flavor is the part of an embedded Flavor object that decides an
// instance's resources.
type Flavor struct {
	Name        string            `json:"name"`
	VCPUs       int64             `json:"vcpus"`
	MemoryMB    int64             `json:"memory_mb"`
	RootGB      int64             `json:"root_gb"`
	EphemeralGB int64             `json:"ephemeral_gb"`
	Swap        int64             `json:"swap"` // MiB
	ExtraSpecs  map[string]string `json:"extra_specs"`
}

// ParseFlavor reads the current flavor from instance_extra.flavor
// ({"cur": <Flavor primitive>, "old": ..., "new": ...}), which is what Nova
// loads as instance.flavor.
func ParseFlavor(raw *string) (Flavor, error) {
	if raw == nil || *raw == "" {
		return Flavor{}, errors.New("instance_extra.flavor is empty")
	}
	var v struct {
		Cur *struct {
			Data Flavor `json:"nova_object.data"`
		} `json:"cur"`
	}
	if err := json.Unmarshal([]byte(*raw), &v); err != nil {
		return Flavor{}, fmt.Errorf("instance_extra.flavor: %v", err)
	}
	if v.Cur == nil {
		return Flavor{}, errors.New(`instance_extra.flavor has no "cur" flavor`)
	}
	return v.Cur.Data, nil
}

// xsKey is nova.scheduler.utils.ResourceRequest.XS_KEYPAT.
var xsKey = regexp.MustCompile(`^(resources|trait)([a-zA-Z0-9_-]{1,64})?:(.*)$`)

var standardClasses = func() map[string]bool {
	m := map[string]bool{}
	for _, c := range standards.ResourceClasses() {
		m[c] = true
	}
	return m
}()

// UnsupportedError is an instance Nova refuses to heal (exit 8).
type UnsupportedError struct{ Msg string }

func (e *UnsupportedError) Error() string { return e.Msg }

// CheckHealable refuses what nova-manage refuses: vGPU and Cyborg device
// profile requests, whose allocations live on nested providers.
func CheckHealable(uuid string, f Flavor) error {
	if f.ExtraSpecs["resources:VGPU"] != "" {
		return &UnsupportedError{fmt.Sprintf("Healing allocation for instance %s with vGPU resource request is not supported.", uuid)}
	}
	if f.ExtraSpecs["accel:device_profile"] != "" {
		return &UnsupportedError{fmt.Sprintf("Healing allocation for instance %s with Cyborg device profile request is not supported.", uuid)}
	}
	return nil
}

// Resources is nova.scheduler.utils.resources_from_flavor for a request
// spec with no image (as heal_allocations builds it): the flavor's
// resources:CLASS=N extra specs (every group, summed), hw:cpu_policy
// dedicated/mixed as PCPU, VCPU/MEMORY_MB from the flavor unless
// overridden, DISK_GB = ephemeral + swap (rounded up to GiB) + root unless
// the instance boots from volume, hw:pmem namespaces, zero amounts dropped.
func Resources(f Flavor, bootFromVolume bool) (map[string]int64, error) {
	groups := map[string]map[string]int64{}
	add := func(group, rc string, amount int64) {
		// RequestGroup.add_resource: unknown classes and bad amounts are
		// logged and skipped; a repeated class overwrites.
		if !strings.HasPrefix(rc, "CUSTOM_") && !standardClasses[rc] {
			return
		}
		if groups[group] == nil {
			groups[group] = map[string]int64{}
		}
		groups[group][rc] = amount
	}
	keys := make([]string, 0, len(f.ExtraSpecs))
	for k := range f.ExtraSpecs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		m := xsKey.FindStringSubmatch(k)
		if m == nil || m[1] != "resources" {
			continue
		}
		n, err := pyInt(f.ExtraSpecs[k])
		if err != nil || n < 0 {
			continue
		}
		add(m[2], m[3], n)
	}
	if err := pinning(f, add); err != nil {
		return nil, err
	}
	merged := func() map[string]int64 {
		out := map[string]int64{}
		for _, g := range groups {
			for rc, n := range g {
				out[rc] += n
			}
		}
		return out
	}
	cur := merged()
	_, hasV := cur["VCPU"]
	_, hasP := cur["PCPU"]
	if !hasV && !hasP {
		add("", "VCPU", f.VCPUs)
	}
	if _, ok := cur["MEMORY_MB"]; !ok {
		add("", "MEMORY_MB", f.MemoryMB)
	}
	if _, ok := cur["DISK_GB"]; !ok {
		disk := f.EphemeralGB + (f.Swap+1023)/1024
		if f.Swap <= 0 {
			disk = f.EphemeralGB
		}
		if !bootFromVolume {
			disk += f.RootGB
		}
		if disk != 0 {
			add("", "DISK_GB", disk)
		}
	}
	if v, ok := f.ExtraSpecs["hw:mem_encryption"]; ok && pyBool(v) {
		// Nova checks the (absent) image for hw_firmware_type=uefi and
		// fails with an unexpected error.
		return nil, fmt.Errorf("flavor %s requests memory encryption (hw:mem_encryption), which heal_allocations cannot evaluate without an image", f.Name)
	}
	if labels := pmemLabels(f.ExtraSpecs["hw:pmem"]); len(labels) > 0 {
		count := map[string]int64{}
		var order []string
		for _, l := range labels {
			rc := normalizeName("PMEM_NAMESPACE_" + l)
			if _, ok := count[rc]; !ok {
				order = append(order, rc)
			}
			count[rc]++
		}
		for _, rc := range order {
			add("", rc, count[rc])
		}
	}
	out := merged()
	for rc, n := range out {
		if n == 0 {
			delete(out, rc)
		}
	}
	return out, nil
}

// pinning is ResourceRequest._translate_pinning_policies for a flavor
// without image: dedicated CPUs become PCPU (one more for an isolated
// emulator thread), a mixed policy splits VCPU and PCPU.
func pinning(f Flavor, add func(group, rc string, n int64)) error {
	policy := f.ExtraSpecs["hw:cpu_policy"]
	switch policy {
	case "", "shared", "dedicated", "mixed":
	default:
		return fmt.Errorf("Invalid CPU allocation policy: %q in flavor extra specs (available: shared, dedicated, mixed)", policy)
	}
	if tp := f.ExtraSpecs["hw:cpu_thread_policy"]; tp != "" && tp != "prefer" && tp != "isolate" && tp != "require" {
		return fmt.Errorf("Invalid CPU thread allocation policy: %q in flavor extra specs", tp)
	}
	emu := f.ExtraSpecs["hw:emulator_threads_policy"]
	if emu != "" && emu != "share" && emu != "isolate" {
		return fmt.Errorf("Invalid emulator threads policy: %q", emu)
	}
	var pcpus int64
	switch policy {
	case "dedicated":
		pcpus = f.VCPUs
	case "mixed":
		mask := f.ExtraSpecs["hw:cpu_dedicated_mask"]
		if mask == "" {
			mask = f.ExtraSpecs["hw:cpu_realtime_mask"]
		}
		set, err := dedicatedCPUs(mask, f.VCPUs)
		if err != nil {
			return err
		}
		pcpus = int64(len(set))
		add("", "VCPU", f.VCPUs-pcpus)
	default:
		return nil
	}
	if emu == "isolate" {
		pcpus++
	}
	add("", "PCPU", pcpus)
	return nil
}

// dedicatedCPUs is hardware.get_dedicated_cpu_constraint: a mask
// "0-3,^2" or, starting with "^", the flavor's CPUs minus the exclusions.
func dedicatedCPUs(mask string, vcpus int64) (map[int64]bool, error) {
	spec := mask
	if strings.HasPrefix(strings.TrimSpace(mask), "^") {
		spec = fmt.Sprintf("0-%d,%s", vcpus-1, mask)
	}
	set, err := parseCPUSpec(spec)
	if err != nil {
		return nil, err
	}
	shared := vcpus - int64(len(set))
	for c := range set {
		if c < 0 || c >= vcpus {
			return nil, errors.New(`Mixed instance dedicated vCPU(s) mask is not a subset of vCPUs in the flavor. See "hw:cpu_dedicated_mask"`)
		}
	}
	if len(set) == 0 || shared <= 0 {
		return nil, errors.New("Invalid mixed instance dedicated CPU mask")
	}
	return set, nil
}

// parseCPUSpec is hardware.parse_cpu_spec: "1-3,5,^2".
func parseCPUSpec(spec string) (map[int64]bool, error) {
	in, ex := map[int64]bool{}, map[int64]bool{}
	for _, part := range strings.Split(spec, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		target := in
		if strings.HasPrefix(part, "^") {
			target = ex
			part = strings.TrimSpace(part[1:])
		}
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.ParseInt(strings.TrimSpace(lo), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("Invalid range expression %q", part)
		}
		b := a
		if isRange {
			if b, err = strconv.ParseInt(strings.TrimSpace(hi), 10, 64); err != nil || b < a {
				return nil, fmt.Errorf("Invalid range expression %q", part)
			}
		}
		for c := a; c <= b; c++ {
			target[c] = true
		}
	}
	for c := range ex {
		delete(in, c)
	}
	return in, nil
}

func pmemLabels(v string) []string {
	var out []string
	for _, l := range strings.Split(v, ",") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// normalizeName is os_resource_classes.normalize_name.
func normalizeName(name string) string {
	var b strings.Builder
	for _, r := range strings.ToUpper(name) {
		if (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') || r == '_' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return "CUSTOM_" + b.String()
}

// pyInt is Python's int() of a string: surrounding whitespace, a sign and
// underscores between digits allowed.
func pyInt(s string) (int64, error) {
	s = strings.TrimSpace(s)
	if strings.Contains(s, "__") || strings.HasPrefix(strings.TrimLeft(s, "+-"), "_") || strings.HasSuffix(s, "_") {
		return 0, errors.New("invalid literal")
	}
	return strconv.ParseInt(strings.ReplaceAll(s, "_", ""), 10, 64)
}

// pyBool is oslo_utils.strutils.bool_from_string (non-strict).
func pyBool(s string) bool {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "1", "t", "true", "on", "y", "yes":
		return true
	}
	return false
}
