package migrate

import (
	"reflect"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/internal/nova"
)

func dev(id int64, addr, vendor, product, typ, status string, parent string) nova.PCIDevice {
	d := nova.PCIDevice{ID: id, ComputeNodeID: 1, Address: addr, VendorID: vendor, ProductID: product, DevType: typ, Status: status}
	if parent != "" {
		d.ParentAddr = &parent
	}
	return d
}

func TestPCIDeviceSpecMatch(t *testing.T) {
	vf := dev(1, "0000:af:02.3", "8086", "154c", "type-VF", "available", "0000:af:00.1")
	pci := dev(2, "0000:3b:00.0", "10de", "1eb8", "type-PCI", "allocated", "")
	tests := []struct {
		spec      string
		vf, other bool
	}{
		{`{"vendor_id": "8086"}`, true, false},
		{`{"vendor_id": "*", "product_id": "1EB8"}`, false, true},
		{`{"address": "0000:af:02.3"}`, true, false},
		{`{"address": "*:af:*.*"}`, true, false},
		{`{"address": ":3b:"}`, false, true},
		{`{"address": "3b:00.0"}`, false, true},
		{`{"address": "0000:af:02.*"}`, true, false},
		// A single PF address matches its VFs (WhitelistPciAddress.match).
		{`{"address": "0000:af:00.1"}`, true, false},
		// A glob is never a PF address: only the device's own address.
		{`{"address": "0000:af:00.*"}`, false, false},
		{`{"address": {"domain": "0000", "bus": "af|3b", "slot": "0[02]", "function": "[0-3]"}}`, true, true},
		{`{"address": {"bus": "3"}}`, false, true},
		{`{"vendor_id": "8086", "address": "0000:3b:00.0"}`, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.spec, func(t *testing.T) {
			c, err := ParsePCIConfig(true, []string{tt.spec})
			if err != nil {
				t.Fatal(err)
			}
			if got := c.spec(vf) != nil; got != tt.vf {
				t.Errorf("VF matched %v, want %v", got, tt.vf)
			}
			if got := c.spec(pci) != nil; got != tt.other {
				t.Errorf("type-PCI matched %v, want %v", got, tt.other)
			}
		})
	}
}

func TestParsePCIConfig(t *testing.T) {
	c, err := ParsePCIConfig(false, []string{`not json`})
	if err != nil || c.ReportInPlacement || len(c.Specs) != 0 {
		t.Errorf("report off: %+v %v", c, err)
	}
	c, err = ParsePCIConfig(true, []string{`[{"vendor_id": "8086", "resource_class": "x", "trusted": true}, {"address": "*:81:*.*"}]`, `{"product_id": "1eb8"}`})
	if err != nil || len(c.Specs) != 3 || c.Specs[0].Tags["resource_class"] != "x" || c.Specs[0].Tags["trusted"] != "true" {
		t.Errorf("specs: %+v %v", c, err)
	}
	for _, bad := range []struct{ spec, want string }{
		{`{"vendor_id": "8086"`, "invalid entry"},
		{`"8086"`, "expecting list or dict"},
		{`{"devname": "eth0"}`, "devname"},
		{`{"vendor_id": "xyz"}`, "vendor_id"},
		{`{"address": "0000:81:00:00.0"}`, "invalid PCI address"},
		{`{"address": "0000:81:40.0"}`, "slot"},
		{`{"address": {"bus": "("}}`, "regex"},
	} {
		if _, err := ParsePCIConfig(true, []string{bad.spec}); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s: err = %v, want %q", bad.spec, err, bad.want)
		}
	}
}

// pciRP is a PCI provider as the tests compare it.
type pciRP struct {
	Name   string
	Class  string
	Total  int64
	Traits []string
}

func TestPlanPCIDevices(t *testing.T) {
	const host = "cmp1.example.org"
	pf := dev(10, "0000:af:00.1", "8086", "1572", "type-PF", "unavailable", "")
	vfs := []nova.PCIDevice{
		dev(11, "0000:af:02.0", "8086", "154c", "type-VF", "allocated", "0000:af:00.1"),
		dev(12, "0000:af:02.1", "8086", "154c", "type-VF", "available", "0000:af:00.1"),
		dev(13, "0000:af:02.2", "8086", "154c", "type-VF", "claimed", "0000:af:00.1"),
	}
	gpus := []nova.PCIDevice{
		dev(20, "0000:3b:00.0", "10de", "1eb8", "type-PCI", "allocated", ""),
		dev(21, "0000:3c:00.0", "10de", "1eb8", "type-PCI", "available", ""),
		dev(22, "0000:3d:00.0", "10de", "1eb8", "type-PCI", "removed", ""),
	}
	all := append(append([]nova.PCIDevice{pf}, vfs...), gpus...)
	noParent := dev(30, "0000:af:03.0", "8086", "154c", "type-VF", "available", "")
	otherClass := dev(31, "0000:af:02.7", "8086", "154d", "type-VF", "available", "0000:af:00.1")
	tests := []struct {
		name   string
		report bool
		specs  []string
		devs   []nova.PCIDevice
		want   []pciRP
		err    string
	}{
		{"report_in_placement off: nothing PCI", false, []string{`{"vendor_id": "8086"}`}, all, nil, ""},
		{"VFs on their PF's provider, every status but removed; devices without a spec skipped", true,
			[]string{`{"vendor_id": "8086", "product_id": "154c"}`, `{"vendor_id": "10de"}`}, all,
			[]pciRP{{host + "_0000:AF:00.1", "CUSTOM_PCI_8086_154C", 3, []string{TraitManagedPCI}},
				{host + "_0000:3B:00.0", "CUSTOM_PCI_10DE_1EB8", 1, []string{TraitManagedPCI}},
				{host + "_0000:3C:00.0", "CUSTOM_PCI_10DE_1EB8", 1, []string{TraitManagedPCI}}}, ""},
		{"resource_class and traits tags, normalised", true,
			[]string{`{"vendor_id": "10de", "resource_class": "gpu-t4", "traits": "CUSTOM_fast,hw--gpu,COMPUTE_MANAGED_PCI_DEVICE"}`}, gpus[:1],
			[]pciRP{{host + "_0000:3B:00.0", "CUSTOM_GPU_T4", 1, []string{TraitManagedPCI, "CUSTOM_FAST", "CUSTOM_HW_GPU"}}}, ""},
		{"a standard class tag stays", true, []string{`{"vendor_id": "10de", "resource_class": "pci_device"}`}, gpus[:1],
			[]pciRP{{host + "_0000:3B:00.0", "PCI_DEVICE", 1, []string{TraitManagedPCI}}}, ""},
		{"physical_network: Neutron's, not reported", true, []string{`{"vendor_id": "8086", "physical_network": "physnet1"}`}, all, nil, ""},
		{"the PF alone is its own provider", true, []string{`{"product_id": "1572"}`}, all,
			[]pciRP{{host + "_0000:AF:00.1", "CUSTOM_PCI_8086_1572", 1, []string{TraitManagedPCI}}}, ""},
		{"PF and its VFs both reported: bad row", true, []string{`{"vendor_id": "8086"}`}, all, nil, "dependent devices"},
		{"VF without parent: bad row", true, []string{`{"vendor_id": "8086", "product_id": "154c"}`}, []nova.PCIDevice{noParent}, nil, "missing parent address"},
		{"VFs of one PF with two classes: bad row", true, []string{`{"vendor_id": "8086", "product_id": "154c"}`, `{"product_id": "154d", "resource_class": "other"}`},
			append(vfs[:1:1], otherClass), nil, "resource class"},
		{"unknown type: bad row", true, []string{`{}`}, []nova.PCIDevice{dev(40, "0000:01:00.0", "1af4", "1041", "type-X", "available", "")}, nil, "unhandled PCI device type"},
		{"class Placement refuses: bad row", true, []string{`{"resource_class": "CUSTOM_a-b"}`}, gpus[:1], nil, "not one Placement accepts"},
		// Issue 37 row 3: the same 255-character limit as Placement's.
		{"class of 300 characters: bad row", true, []string{`{"resource_class": "` + strings.Repeat("g", 300) + `"}`}, gpus[:1], nil, "device_spec's resource_class tag: the resource class \"CUSTOM_GGG"},
		{"trait of 300 characters: bad row", true, []string{`{"traits": "` + strings.Repeat("t", 300) + `"}`}, gpus[:1], nil, "device_spec's traits tag: the trait \"CUSTOM_TTT"},
		{"trait of 255 characters: fine", true, []string{`{"traits": "CUSTOM_` + strings.Repeat("T", 248) + `"}`}, gpus[:1],
			[]pciRP{{host + "_0000:3B:00.0", "CUSTOM_PCI_10DE_1EB8", 1, []string{TraitManagedPCI, "CUSTOM_" + strings.Repeat("T", 248)}}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := baseCfg()
			var err error
			if cfg.PCI, err = ParsePCIConfig(tt.report, tt.specs); err != nil {
				t.Fatal(err)
			}
			n := node(func(n *nova.ComputeNode) { n.PCIStats = sp(pools) })
			p, err := cfg.PlanRow("cell1", NodeRow{Node: n, PCIDevices: tt.devs})
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) || !strings.HasPrefix(err.Error(), "pci_devices=") {
					t.Fatalf("err = %v, want pci_devices=... %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []pciRP
			for _, d := range p.Providers[1:] {
				if d.ParentUUID != *n.UUID || d.UUID == "" || len(d.Inventories) != 1 {
					t.Errorf("%s: parent %q uuid %q inventories %v", d.Name, d.ParentUUID, d.UUID, d.Inventories)
				}
				for rc, v := range d.Inventories {
					if v.Reserved != 0 || v.MinUnit != 1 || v.StepSize != 1 || v.MaxUnit != v.Total {
						t.Errorf("%s %s: %+v", d.Name, rc, v.Inventory)
					}
					got = append(got, pciRP{d.Name, rc, v.Total, d.Traits})
				}
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %v\nwant %v", got, tt.want)
			}
			// Nothing PCI on the root: no pci_stats pool class.
			for rc := range p.Providers[0].Inventories {
				if rc != "VCPU" && rc != "MEMORY_MB" && rc != "DISK_GB" {
					t.Errorf("root has %s", rc)
				}
			}
		})
	}
}

func TestPCIDeviceProvider(t *testing.T) {
	on, err := ParsePCIConfig(true, []string{`{"vendor_id": "8086", "product_id": "154c"}`, `{"vendor_id": "10de", "resource_class": "gpu"}`, `{"vendor_id": "15b3", "physical_network": "net1"}`})
	if err != nil {
		t.Fatal(err)
	}
	str := func(s string) *string { return &s }
	gpuHost, offHost, plainHost := "gpu-host", "off-host", "plain-host"
	c := &InventoryConfig{PCI: on, Hosts: map[string]HostConfig{offHost: {}}}
	pf := str("0000:81:00.0")
	cases := []struct {
		name      string
		host      *string
		dev       nova.PCIDevice
		wantName  string
		wantClass string
		wantOK    bool
	}{
		{"a VF counts on its PF's provider", &plainHost, nova.PCIDevice{Address: "0000:81:00.3", VendorID: "8086", ProductID: "154c", DevType: "type-VF", Status: "allocated", ParentAddr: pf}, "n1_0000:81:00.0", "CUSTOM_PCI_8086_154C", true},
		{"a type-PCI device is its own provider, the tag's class", &gpuHost, nova.PCIDevice{Address: "0000:3b:00.0", VendorID: "10de", ProductID: "1db4", DevType: "type-PCI", Status: "allocated"}, "n1_0000:3B:00.0", "CUSTOM_GPU", true},
		{"no host: the global config", nil, nova.PCIDevice{Address: "0000:3b:00.0", VendorID: "10de", ProductID: "1db4", DevType: "type-PCI", Status: "allocated"}, "n1_0000:3B:00.0", "CUSTOM_GPU", true},
		{"host whose own config does not report", &offHost, nova.PCIDevice{Address: "0000:3b:00.0", VendorID: "10de", ProductID: "1db4", DevType: "type-PCI", Status: "allocated"}, "", "", false},
		{"no spec matches", &plainHost, nova.PCIDevice{Address: "0000:3b:00.0", VendorID: "1af4", ProductID: "1000", DevType: "type-PCI", Status: "allocated"}, "", "", false},
		{"a physical_network spec is Neutron's", &plainHost, nova.PCIDevice{Address: "0000:5e:00.0", VendorID: "15b3", ProductID: "1017", DevType: "type-PF", Status: "allocated"}, "", "", false},
		{"a removed device is dropped", &plainHost, nova.PCIDevice{Address: "0000:3b:00.0", VendorID: "10de", ProductID: "1db4", DevType: "type-PCI", Status: "removed"}, "", "", false},
		{"a VF without a parent is on no provider", &plainHost, nova.PCIDevice{Address: "0000:81:00.3", VendorID: "8086", ProductID: "154c", DevType: "type-VF", Status: "allocated"}, "", "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			name, class, ok := c.PCIDeviceProvider(tc.host, "n1", tc.dev)
			if name != tc.wantName || class != tc.wantClass || ok != tc.wantOK {
				t.Fatalf("got (%q, %q, %v), want (%q, %q, %v)", name, class, ok, tc.wantName, tc.wantClass, tc.wantOK)
			}
		})
	}
}
