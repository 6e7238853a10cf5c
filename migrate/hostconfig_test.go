package migrate

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/internal/config"
	"github.com/rpctl/rpctl/internal/nova"
)

// TestForHost: a node of a host with its own config (Hosts, from
// --compute-config-dir) is planned with that host's reserved values,
// ratios and [pci]; every other node with the global ones.
func TestForHost(t *testing.T) {
	own := config.DefaultOptions().Ratios
	own.CPU, own.InitialRAM = fp(4), 1.0
	pci, err := ParsePCIConfig(true, []string{`{"vendor_id": "10de", "resource_class": "gpu", "traits": "gold"}`})
	if err != nil {
		t.Fatal(err)
	}
	hosts := map[string]HostConfig{"cmp1": {Source: "dir/cmp1.conf", Ratios: own, Reserved: config.Reserved{CPUs: 3, MemoryMB: 2048, DiskMB: 4096}, PCI: pci}}
	gpu := dev(20, "0000:3b:00.0", "10de", "1eb8", "type-PCI", "allocated", "")
	type want struct {
		vcpuReserved, memReserved, diskReserved int64
		cpuRatio, ramRatio                      float64
		children                                []string
	}
	global := want{0, 512, 0, 16, 1.5, nil}
	tests := []struct {
		name  string
		host  *string
		hosts map[string]HostConfig
		want  want
	}{
		{"no host configs: the global config", sp("cmp1"), nil, global},
		{"the host's own config", sp("cmp1"), hosts, want{3, 2048, 4, 4, 1.0, []string{"cmp1.example.org_0000:3B:00.0 CUSTOM_GPU [COMPUTE_MANAGED_PCI_DEVICE CUSTOM_GOLD]"}}},
		{"another host: the global config", sp("cmp2"), hosts, global},
		{"a row without host: the global config", nil, hosts, global},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := baseCfg()
			cfg.Hosts = tt.hosts
			n := node(func(n *nova.ComputeNode) { n.Host = tt.host })
			p, err := cfg.PlanRow("cell1", NodeRow{Node: n, PCIDevices: []nova.PCIDevice{gpu}})
			if err != nil {
				t.Fatal(err)
			}
			root := p.Providers[0].Inventories
			var children []string
			for _, d := range p.Providers[1:] {
				for rc := range d.Inventories {
					children = append(children, fmt.Sprintf("%s %s %v", d.Name, rc, d.Traits))
				}
			}
			// The ratio is resolved later, by whatever config diffs the
			// plan (the global one in Inventory): it must still be the
			// host's.
			got := want{root["VCPU"].Reserved, root["MEMORY_MB"].Reserved, root["DISK_GB"].Reserved,
				cfg.Ratio(root["VCPU"], nil), cfg.Ratio(root["MEMORY_MB"], nil), children}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

// TestHostConfigsPCIAndUnused: pci_devices are read when any host reports
// them, and files of hosts without a compute node are named.
func TestHostConfigsPCIAndUnused(t *testing.T) {
	on := HostConfig{Source: "d/a.conf", PCI: PCIConfig{ReportInPlacement: true}}
	off := HostConfig{Source: "d/b.conf"}
	tests := []struct {
		name     string
		global   bool
		hosts    map[string]HostConfig
		seen     map[string]bool
		reports  bool
		unused   []string
		contains string
	}{
		{"nothing reports", false, map[string]HostConfig{"b": off}, map[string]bool{"b": true}, false, nil, ""},
		{"the global config reports", true, nil, nil, true, nil, ""},
		{"one host reports", false, map[string]HostConfig{"a": on, "b": off}, map[string]bool{"a": true}, true, []string{"b"}, "host b: its config is not used (d/b.conf)"},
		{"two unused", false, map[string]HostConfig{"a": on, "b": off}, nil, true, []string{"a", "b"}, "host a, b: their configs are not used (d/a.conf, d/b.conf)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := InventoryConfig{Hosts: tt.hosts}
			c.PCI.ReportInPlacement = tt.global
			if got := c.reportsPCI(); got != tt.reports {
				t.Errorf("reportsPCI = %v, want %v", got, tt.reports)
			}
			u := c.UnusedHosts(tt.seen)
			if !reflect.DeepEqual(u, tt.unused) {
				t.Errorf("UnusedHosts = %v, want %v", u, tt.unused)
			}
			msg := c.UnusedHostsWarning(u)
			if (msg == "") != (tt.contains == "") || !strings.Contains(msg, tt.contains) {
				t.Errorf("warning %q, want it to say %q", msg, tt.contains)
			}
		})
	}
}
