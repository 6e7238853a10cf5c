package migrate

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/rpctl/rpctl/internal/lazyre"
	"github.com/rpctl/rpctl/internal/nova"
	"github.com/rpctl/rpctl/internal/release"
	"github.com/rpctl/rpctl/internal/standards"
)

// PCI devices in Placement, as Nova 26 (Zed) reports them with [pci]
// report_in_placement = True: nova/compute/pci_placement_translator.py's
// update_provider_tree_for_pci, read from the pci_devices table. With the
// option off (Zed's default) nova-compute reports nothing PCI, and neither
// does rpctl.

// TraitManagedPCI is on every PCI device provider Nova makes.
const TraitManagedPCI = "COMPUTE_MANAGED_PCI_DEVICE"

// PCIConfig is nova.conf's [pci] as the Placement report reads it.
type PCIConfig struct {
	// Release is the release whose os-traits _normalize_traits keeps as
	// standard (a device_spec traits tag naming HW_PCI_LIVE_MIGRATABLE is
	// standard in 2025.1, normalised to CUSTOM_ in Zed); "" is
	// release.Default.
	Release release.Name
	// ReportInPlacement is [pci] report_in_placement.
	ReportInPlacement bool
	// Specs are [pci] device_spec, in order: a device takes the tags of
	// the first that matches it (Whitelist.get_devspec).
	Specs []PCIDeviceSpec
}

// PCIDeviceSpec is one [pci] device_spec dict (nova/pci/devspec.py
// PciDeviceSpec): what it matches, and the other keys, its tags.
type PCIDeviceSpec struct {
	vendor, product string // "*" or 4 lower-case hex digits
	addr            pciAddrSpec
	devname         string
	Tags            map[string]string
}

// pciAny is devspec's ANY.
const pciAny = "*"

// pciAddrFields are a PCI address's fields in devspec's order, with their
// maximum and format (MAX_DOMAIN, '%04x', ...).
var pciAddrFields = [4]struct {
	name   string
	max    int64
	digits int
}{{"domain", 0xFFFF, 4}, {"bus", 0xFF, 2}, {"slot", 0x1F, 2}, {"function", 0x7, 1}}

// pciAddrSpec is devspec's PciAddressGlobSpec (fields "*" or normalised
// hex) or PciAddressRegexSpec (re set).
type pciAddrSpec struct {
	glob [4]string
	re   [4]*regexp.Regexp
	// single is PciAddressSpec.is_single_address: four hex fields.
	single bool
}

// ParsePCIConfig reads [pci] report_in_placement and the device_spec
// values (each a JSON dict or list of dicts), as
// Whitelist._parse_white_list_from_config does. Specs are parsed only when
// reporting is on: with it off Nova reads no tag for Placement.
func ParsePCIConfig(report bool, deviceSpec []string) (PCIConfig, error) {
	c := PCIConfig{ReportInPlacement: report}
	if !report {
		return c, nil
	}
	for _, entry := range deviceSpec {
		var raw any
		if err := json.Unmarshal([]byte(entry), &raw); err != nil {
			return PCIConfig{}, fmt.Errorf("[pci] device_spec: invalid entry %q", entry)
		}
		list, ok := raw.([]any)
		if !ok {
			list = []any{raw}
		}
		for _, ds := range list {
			d, ok := ds.(map[string]any)
			if !ok {
				return PCIConfig{}, fmt.Errorf("[pci] device_spec: invalid entry %q; expecting list or dict", entry)
			}
			s, err := parseDeviceSpec(d)
			if err != nil {
				return PCIConfig{}, fmt.Errorf("[pci] device_spec %q: %w", entry, err)
			}
			// ensure_no_dev_spec_with_devname: nova-compute refuses to
			// report such a spec.
			if s.devname != "" {
				return PCIConfig{}, fmt.Errorf("[pci] device_spec %q: PCI Placement reporting does not support 'devname' based device specification; use the PCI address", entry)
			}
			c.Specs = append(c.Specs, s)
		}
	}
	return c, nil
}

// parseDeviceSpec is PciDeviceSpec._init_dev_details without the host's
// sysfs: the keys it takes out, the rest as tags.
func parseDeviceSpec(d map[string]any) (PCIDeviceSpec, error) {
	s := PCIDeviceSpec{vendor: pciAny, product: pciAny, Tags: map[string]string{}}
	var addr any
	for k, v := range d {
		switch k {
		case "vendor_id", "product_id", "devname":
			str, ok := v.(string)
			if !ok {
				return s, fmt.Errorf("%s must be a string", k)
			}
			switch k {
			case "vendor_id":
				s.vendor = str
			case "product_id":
				s.product = str
			default:
				s.devname = str
			}
		case "address":
			addr = v
		default:
			s.Tags[k] = tagString(v)
		}
	}
	for _, f := range []struct {
		name string
		v    *string
	}{{"vendor_id", &s.vendor}, {"product_id", &s.product}} {
		v := strings.TrimSpace(*f.v)
		if v == pciAny {
			*f.v = v
			continue
		}
		n, err := strconv.ParseInt(v, 16, 64)
		if err != nil || n < 0 || n > 0xFFFF {
			return s, fmt.Errorf("invalid %s %q", f.name, v)
		}
		*f.v = fmt.Sprintf("%04x", n)
	}
	if addr != nil && s.devname != "" {
		return s, fmt.Errorf("address and devname cannot both be given")
	}
	if addr == nil {
		addr = "*:*:*.*"
	}
	var err error
	switch a := addr.(type) {
	case string:
		s.addr, err = parseAddrGlob(a)
	case map[string]any:
		s.addr, err = parseAddrRegex(a)
	default:
		err = fmt.Errorf("invalid address %v", addr)
	}
	return s, err
}

// tagString is a tag's value as Nova reads it from the JSON: strings as
// they are, anything else as JSON text ("true", "1"); null is empty.
func tagString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case nil:
		return ""
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// parseAddrGlob is PciAddressGlobSpec: "[[[[domain]:]bus]:][slot][.[function]]",
// each part "*", empty (any) or hex.
func parseAddrGlob(a string) (pciAddrSpec, error) {
	s := pciAddrSpec{glob: [4]string{pciAny, pciAny, pciAny, pciAny}}
	dbs, fn, _ := strings.Cut(a, ".")
	if fn != "" {
		s.glob[3] = strings.TrimSpace(fn)
	}
	if dbs != "" {
		parts := strings.Split(dbs, ":")
		if len(parts) > 3 {
			return s, fmt.Errorf("invalid PCI address %q", a)
		}
		parts = append(slices.Repeat([]string{pciAny}, 3-len(parts)), parts...)
		for i, p := range parts {
			if p = strings.TrimSpace(p); p != "" {
				s.glob[i] = p
			}
		}
	}
	s.single = true
	for i, f := range pciAddrFields {
		v := s.glob[i]
		if v == pciAny {
			s.single = false
			continue
		}
		n, err := strconv.ParseInt(v, 16, 64)
		if err != nil || n < 0 || n > f.max {
			return s, fmt.Errorf("invalid PCI address %q: %s %q", a, f.name, v)
		}
		s.glob[i] = fmt.Sprintf("%0*x", f.digits, n)
	}
	return s, nil
}

// parseAddrRegex is PciAddressRegexSpec: a dict of regular expressions,
// each matched at the start of the field (re.match), ".*" when absent.
func parseAddrRegex(a map[string]any) (pciAddrSpec, error) {
	var s pciAddrSpec
	s.single = true
	for i, f := range pciAddrFields {
		expr := ".*"
		if v, ok := a[f.name]; ok {
			str, isStr := v.(string)
			if !isStr {
				return s, fmt.Errorf("invalid PCI address regex %s %v", f.name, v)
			}
			expr = str
		}
		re, err := regexp.Compile("^(?:" + expr + ")")
		if err != nil {
			return s, fmt.Errorf("invalid PCI address regex %s %q: %v", f.name, expr, err)
		}
		s.re[i] = re
		s.single = s.single && expr != "" && strings.Trim(expr, "0123456789abcdefABCDEF") == ""
	}
	return s, nil
}

// physAddr splits a device address into normalised fields
// (PhysicalPciAddress); ok is false for an address Nova could not have
// written.
func physAddr(a string) (f [4]string, ok bool) {
	dbs, fn, found := strings.Cut(a, ".")
	parts := strings.Split(dbs, ":")
	if !found || len(parts) != 3 {
		return f, false
	}
	for i, v := range append(parts, fn) {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 16, 64)
		if err != nil || n < 0 || n > pciAddrFields[i].max {
			return f, false
		}
		f[i] = fmt.Sprintf("%0*x", pciAddrFields[i].digits, n)
	}
	return f, true
}

func (s pciAddrSpec) matchFields(f [4]string) bool {
	for i := range f {
		if s.re[i] != nil {
			if !s.re[i].MatchString(f[i]) {
				return false
			}
		} else if s.glob[i] != pciAny && s.glob[i] != f[i] {
			return false
		}
	}
	return true
}

// match is WhitelistPciAddress.match: the device's own address, or, for a
// spec naming one physical function's address, the parent address of its
// VFs. Nova asks the host's sysfs whether a single address is a PF; a VF's
// parent_addr is one by definition, so a single address equal to it is.
func (s pciAddrSpec) match(addr string, parent *string) bool {
	if s.single && parent != nil && *parent != "" {
		if f, ok := physAddr(*parent); ok && s.matchFields(f) {
			return true
		}
	}
	f, ok := physAddr(addr)
	return ok && s.matchFields(f)
}

// spec is Whitelist.get_devspec: the first spec matching the device.
func (c *PCIConfig) spec(d nova.PCIDevice) *PCIDeviceSpec {
	for i := range c.Specs {
		s := &c.Specs[i]
		if (s.vendor == pciAny || s.vendor == d.VendorID) && (s.product == pciAny || s.product == d.ProductID) && s.addr.match(d.Address, d.ParentAddr) {
			return s
		}
	}
	return nil
}

// pciRole is how a device type maps to providers
// (pci_placement_translator's PARENT_TYPES and CHILD_TYPES): a parent is
// one provider of its own, a child counts on its parent's provider. A
// switch, not a map: nothing is built at init.
func pciRole(devType string) (parent, known bool) {
	switch devType {
	case "type-PCI", "type-PF": // fields.PciDeviceType.STANDARD, SRIOV_PF
		return true, true
	case "type-VF", "vdpa": // SRIOV_VF, VDPA
		return false, true
	}
	return false, false
}

// pciGone are the statuses PlacementView.process_dev drops (the device is
// not allocated and is leaving the host).
func pciGone(status string) bool { return status == "deleted" || status == "removed" }

// pciProvider is one PCI device provider: PciResourceProvider.
type pciProvider struct {
	name     string
	addr     string // the parent device's address (upper case), its uuid's seed
	parent   *nova.PCIDevice
	children []nova.PCIDevice
	rc       string
	traits   []string
}

func (p *pciProvider) devs() int64 {
	if p.parent != nil {
		return 1
	}
	return int64(len(p.children))
}

// pciProviders is PlacementView: the node's devices, in id order, each
// matched with its spec (process_dev) and put on its provider (_add_dev,
// add_parent, add_child). What makes nova-compute's report fail (a PF and
// its VFs both reported, VFs of one PF with different classes or traits, a
// VF without a parent, an unknown type) makes the row bad.
func (c *PCIConfig) pciProviders(host string, devs []nova.PCIDevice) ([]*pciProvider, error) {
	if !c.ReportInPlacement {
		return nil, nil
	}
	var out []*pciProvider
	byName := map[string]*pciProvider{}
	ensure := func(addr string) *pciProvider {
		name := pciProviderName(host, addr)
		p := byName[name]
		if p == nil {
			p = &pciProvider{name: name, addr: strings.ToUpper(addr)}
			byName[name] = p
			out = append(out, p)
		}
		return p
	}
	for i := range devs {
		d := devs[i]
		addr, tags, parent, ok, err := c.devicePlace(d)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		rc, traits := pciClassAndTraits(c.Release, d, tags)
		if parent {
			p := ensure(addr)
			if p.parent != nil || len(p.children) > 0 {
				return nil, fmt.Errorf("PCI device %s and its dependent devices would share one resource provider", d.Address)
			}
			p.parent, p.rc, p.traits = &d, rc, traits
			continue
		}
		p := ensure(addr)
		switch {
		case p.parent != nil:
			return nil, fmt.Errorf("PCI device %s and its dependent devices would share one resource provider", p.parent.Address)
		case p.rc != "" && p.rc != rc:
			return nil, fmt.Errorf("PCI device %s has resource class %s, but %s on the same provider has %s", d.Address, rc, p.children[0].Address, p.rc)
		case p.traits != nil && !slices.Equal(p.traits, traits):
			return nil, fmt.Errorf("PCI device %s has traits %s, but %s on the same provider has %s", d.Address, strings.Join(traits, ","), p.children[0].Address, strings.Join(p.traits, ","))
		}
		p.children = append(p.children, d)
		p.rc, p.traits = rc, traits
	}
	return out, nil
}

// pciProviderName is PlacementView._get_rp_name_for_address: the device
// provider of address addr on the compute node named node
// (hypervisor_hostname).
func pciProviderName(node, addr string) string { return node + "_" + strings.ToUpper(addr) }

// devicePlace is process_dev and _add_dev for one device: ok is false for
// a device Nova skips (removed or deleted, no spec, a physical_network
// spec); otherwise addr is the address of the device its provider is
// named after (its own for a parent type, its PF's for a VF), tags are its
// spec's. An unknown type or a VF without a parent is an error (Nova's
// report fails).
func (c *PCIConfig) devicePlace(d nova.PCIDevice) (addr string, tags map[string]string, parent, ok bool, err error) {
	if pciGone(d.Status) {
		return "", nil, false, false, nil
	}
	s := c.spec(d)
	if s == nil || s.Tags["physical_network"] != "" {
		return "", nil, false, false, nil // no spec: Nova warns and skips; physnet: Neutron's SR-IOV
	}
	parent, known := pciRole(d.DevType)
	if !known {
		return "", nil, false, false, fmt.Errorf("unhandled PCI device type %q for %s", d.DevType, d.Address)
	}
	if parent {
		return d.Address, s.Tags, true, true, nil
	}
	if d.ParentAddr == nil || *d.ParentAddr == "" {
		return "", nil, false, false, fmt.Errorf("missing parent address for PCI device %s of type %s", d.Address, d.DevType)
	}
	return *d.ParentAddr, s.Tags, false, true, nil
}

// PCIDeviceProvider is where the nova-compute of host (a compute_nodes.host,
// its config chosen by ForHost) reports device d of its compute node named
// node (hypervisor_hostname) in Placement: the device provider's name and
// resource class (pci_placement_translator's PciResourceProvider, the rule
// migrate inventory writes the children with). ok is false when the host
// does not report PCI in Placement or the device is on no provider.
// claims' heal uses it to put an instance's devices in its allocation.
func (c *InventoryConfig) PCIDeviceProvider(host *string, node string, d nova.PCIDevice) (name, class string, ok bool) {
	pc := &c.ForHost(host).PCI
	if !pc.ReportInPlacement {
		return "", "", false
	}
	addr, tags, _, ok, err := pc.devicePlace(d)
	if err != nil || !ok {
		return "", "", false
	}
	rc, _ := pciClassAndTraits(pc.Release, d, tags)
	return pciProviderName(node, addr), rc, true
}

// ReportsPCI says whether the nova-compute of host reports PCI devices in
// Placement ([pci] report_in_placement, its host's config).
func (c *InventoryConfig) ReportsPCI(host *string) bool { return c.ForHost(host).PCI.ReportInPlacement }

// pciClassAndTraits are _get_rc_for_dev and _get_traits_for_dev, with
// release rel's standard traits (os_traits.check_traits).
func pciClassAndTraits(rel release.Name, d nova.PCIDevice, tags map[string]string) (string, []string) {
	rc := tags["resource_class"]
	if rc != "" {
		rc = strings.ToUpper(rc)
		if !standards.IsResourceClass(rc) && !strings.HasPrefix(rc, "CUSTOM_") {
			rc = normalizeName(rc)
		}
	} else {
		rc = strings.ToUpper("CUSTOM_PCI_" + d.VendorID + "_" + d.ProductID)
	}
	traits := []string{TraitManagedPCI}
	if ts := tags["traits"]; ts != "" {
		for _, t := range strings.Split(ts, ",") {
			// _normalize_traits: standard traits as they are, the
			// rest upper-cased and, unless CUSTOM_, normalised.
			if !standards.IsTraitOf(rel, t) {
				t = strings.ToUpper(t)
				if !strings.HasPrefix(t, "CUSTOM_") {
					t = normalizeName(t)
				}
			}
			if !slices.Contains(traits, t) {
				traits = append(traits, t)
			}
		}
	}
	slices.Sort(traits)
	return rc, traits
}

var nonAlnumRuns = &lazyre.Regexp{Expr: `[^0-9A-Za-z]+`}

// normalizeName is os_resource_classes.normalize_name and
// os_traits.normalize_name (the same code): runs of characters other than
// [0-9A-Za-z] become one "_", then CUSTOM_ and upper case.
func normalizeName(name string) string {
	return "CUSTOM_" + strings.ToUpper(nonAlnumRuns.Get().ReplaceAllString(name, "_"))
}
