package migrate

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/internal/config"
	"github.com/rpctl/rpctl/internal/nova"
	"github.com/rpctl/rpctl/inventory"
)

func sp(s string) *string   { return &s }
func ip(v int64) *int64     { return &v }
func fp(v float64) *float64 { return &v }
func baseCfg() InventoryConfig {
	return InventoryConfig{Layout: LayoutFlat, Ratios: config.DefaultOptions().Ratios, Reserved: config.Reserved{MemoryMB: 512}}
}

func node(mod func(*nova.ComputeNode)) nova.ComputeNode {
	n := nova.ComputeNode{ID: 1, Host: sp("cmp1"), HypervisorHostname: sp("cmp1.example.org"), UUID: sp("11111111-1111-4111-8111-111111111111"),
		VCPUs: 32, MemoryMB: 65536, LocalGB: 1000}
	if mod != nil {
		mod(&n)
	}
	return n
}

const twoCells = `{"nova_object.name": "NUMATopology", "nova_object.version": "1.2", "nova_object.data": {"cells": [
 {"nova_object.name": "NUMACell", "nova_object.version": "1.5", "nova_object.data": {"id": 0, "cpuset": [0,1,2,3], "pcpuset": [8,9,10,11], "memory": 1024, "siblings": [[0,8],[1,9],[2,10],[3,11]], "socket": 0}},
 {"nova_object.name": "NUMACell", "nova_object.version": "1.5", "nova_object.data": {"id": 1, "cpuset": [4,5,6,7], "pcpuset": [12,13,14,15], "memory": 2048, "siblings": [[4,12],[5,13],[6,14],[7,15]], "socket": 1}}]}}`

const pools = `[{"vendor_id": "8086", "product_id": "1515", "numa_node": 0, "count": 7, "dev_type": "type-VF"},
 {"vendor_id": "8086", "product_id": "1516", "numa_node": 1, "count": 2, "dev_type": "type-PF"},
 {"vendor_id": "10de", "product_id": "1db6", "count": 2, "dev_type": "type-PCI"},
 {"vendor_id": "10de", "product_id": "1eb8", "count": 3, "dev_type": "type-PCI", "resource_class": "gpu t4"},
 {"vendor_id": "1af4", "product_id": "1041", "count": 0, "dev_type": "type-PCI", "resource_class": "EMPTY"}]`

// totals returns class -> total/reserved/max_unit of a provider.
func totals(d DesiredProvider) map[string][3]int64 {
	out := map[string][3]int64{}
	for rc, v := range d.Inventories {
		out[rc] = [3]int64{v.Total, v.Reserved, v.MaxUnit}
	}
	return out
}

// legacyCells is what the libvirt driver writes with no CPU set configured
// (or vcpu_pin_set): pcpuset repeats cpuset.
const legacyCells = `{"nova_object.name": "NUMATopology", "nova_object.version": "1.2", "nova_object.data": {"cells": [
 {"nova_object.name": "NUMACell", "nova_object.version": "1.5", "nova_object.data": {"id": 0, "cpuset": [0,1,2,3,8,9,10,11], "pcpuset": [0,1,2,3,8,9,10,11], "memory": 1024, "siblings": [[0,8],[1,9],[2,10],[3,11]], "socket": 0}},
 {"nova_object.name": "NUMACell", "nova_object.version": "1.5", "nova_object.data": {"id": 1, "cpuset": [4,5,6,7,12,13,14,15], "pcpuset": [4,5,6,7,12,13,14,15], "memory": 2048, "siblings": [[4,12],[5,13],[6,14],[7,15]], "socket": 1}}]}}`

// sharedOnlyCells: [compute] cpu_shared_set alone leaves pcpuset empty.
const sharedOnlyCells = `{"nova_object.name": "NUMATopology", "nova_object.version": "1.2", "nova_object.data": {"cells": [
 {"nova_object.name": "NUMACell", "nova_object.version": "1.5", "nova_object.data": {"id": 0, "cpuset": [2,3], "pcpuset": [], "memory": 1024, "siblings": [[2],[3]], "socket": 0}}]}}`

func withReservedCPUs(c *InventoryConfig) { c.Reserved.CPUs = 2 }
func newton(c *InventoryConfig)           { c.NewtonClasses = true }

func TestPlanNodeFlat(t *testing.T) {
	availLeast := func(c *InventoryConfig) { c.DiskMaxUnit = DiskMaxUnitAvailableLeast }
	tests := []struct {
		name string
		cfg  func(*InventoryConfig)
		node func(*nova.ComputeNode)
		want map[string][3]int64
	}{
		{"basic: reserved from nova.conf defaults", nil, nil,
			map[string][3]int64{"VCPU": {32, 0, 32}, "MEMORY_MB": {65536, 512, 65536}, "DISK_GB": {1000, 0, 1000}}},
		{"reserved cpus and disk rounded up to GB", func(c *InventoryConfig) { c.Reserved = config.Reserved{CPUs: 2, MemoryMB: 4096, DiskMB: 1025} }, nil,
			map[string][3]int64{"VCPU": {32, 2, 32}, "MEMORY_MB": {65536, 4096, 65536}, "DISK_GB": {1000, 2, 1000}}},
		{"reserved capped at total", func(c *InventoryConfig) { c.Reserved = config.Reserved{MemoryMB: 1 << 20} }, nil,
			map[string][3]int64{"VCPU": {32, 0, 32}, "MEMORY_MB": {65536, 65536, 65536}, "DISK_GB": {1000, 0, 1000}}},
		{"default: max_unit is local_gb, as Nova writes it", nil, func(n *nova.ComputeNode) { n.DiskAvailableLeast = ip(300) },
			map[string][3]int64{"VCPU": {32, 0, 32}, "MEMORY_MB": {65536, 512, 65536}, "DISK_GB": {1000, 0, 1000}}},
		{"disk_available_least in range is max_unit", availLeast, func(n *nova.ComputeNode) { n.DiskAvailableLeast = ip(300) },
			map[string][3]int64{"VCPU": {32, 0, 32}, "MEMORY_MB": {65536, 512, 65536}, "DISK_GB": {1000, 0, 300}}},
		{"disk_available_least 1 is max_unit", availLeast, func(n *nova.ComputeNode) { n.DiskAvailableLeast = ip(1) },
			map[string][3]int64{"VCPU": {32, 0, 32}, "MEMORY_MB": {65536, 512, 65536}, "DISK_GB": {1000, 0, 1}}},
		{"disk_available_least 0 -> total", availLeast, func(n *nova.ComputeNode) { n.DiskAvailableLeast = ip(0) },
			map[string][3]int64{"VCPU": {32, 0, 32}, "MEMORY_MB": {65536, 512, 65536}, "DISK_GB": {1000, 0, 1000}}},
		{"negative disk_available_least -> total", availLeast, func(n *nova.ComputeNode) { n.DiskAvailableLeast = ip(-40) },
			map[string][3]int64{"VCPU": {32, 0, 32}, "MEMORY_MB": {65536, 512, 65536}, "DISK_GB": {1000, 0, 1000}}},
		{"disk_available_least above total -> total", availLeast, func(n *nova.ComputeNode) { n.DiskAvailableLeast = ip(5000) },
			map[string][3]int64{"VCPU": {32, 0, 32}, "MEMORY_MB": {65536, 512, 65536}, "DISK_GB": {1000, 0, 1000}}},
		{"zero totals get no inventory (ironic-style)", nil, func(n *nova.ComputeNode) { n.VCPUs, n.MemoryMB, n.LocalGB = 0, 0, 0 },
			map[string][3]int64{}},
		// Nova 26's libvirt driver (cpu.go): PCPU = Σ |pcpuset| when the
		// cells' pcpuset is disjoint from cpuset (cpu_dedicated_set), and
		// VCPU reserved is 0 on any CPU-set host.
		{"cpu_dedicated_set: PCPU from pcpuset, VCPU reserved 0", withReservedCPUs, func(n *nova.ComputeNode) { n.NUMATopology = sp(twoCells) },
			map[string][3]int64{"VCPU": {32, 0, 32}, "PCPU": {8, 0, 8}, "MEMORY_MB": {65536, 512, 65536}, "DISK_GB": {1000, 0, 1000}}},
		{"no CPU sets: pcpuset = cpuset is no PCPU, reserved_host_cpus kept", withReservedCPUs, func(n *nova.ComputeNode) { n.NUMATopology = sp(legacyCells) },
			map[string][3]int64{"VCPU": {32, 2, 32}, "MEMORY_MB": {65536, 512, 65536}, "DISK_GB": {1000, 0, 1000}}},
		{"cpu_shared_set only: empty pcpuset, VCPU reserved 0", withReservedCPUs, func(n *nova.ComputeNode) { n.NUMATopology = sp(sharedOnlyCells) },
			map[string][3]int64{"VCPU": {32, 0, 32}, "MEMORY_MB": {65536, 512, 65536}, "DISK_GB": {1000, 0, 1000}}},
		{"pre-Train cells (no pcpuset): reserved_host_cpus kept", withReservedCPUs, func(n *nova.ComputeNode) {
			n.NUMATopology = sp(`{"cells": [{"id": 0, "cpus": "0-3", "mem": {"total": 512}}, {"id": 1, "cpus": "4-9", "mem": {"total": 512}}]}`)
		}, map[string][3]int64{"VCPU": {32, 2, 32}, "MEMORY_MB": {65536, 512, 65536}, "DISK_GB": {1000, 0, 1000}}},
		{"PCI pools are not written by default", nil, func(n *nova.ComputeNode) { n.PCIStats = sp(pools) },
			map[string][3]int64{"VCPU": {32, 0, 32}, "MEMORY_MB": {65536, 512, 65536}, "DISK_GB": {1000, 0, 1000}}},
		// NewtonClasses: the spec's classes, only on request.
		{"Newton: 2 cells x 4 cores / 8 threads", newton, func(n *nova.ComputeNode) { n.NUMATopology = sp(twoCells) },
			map[string][3]int64{"VCPU": {32, 0, 32}, "PCPU": {8, 0, 8}, "MEMORY_MB": {65536, 512, 65536}, "DISK_GB": {1000, 0, 1000},
				"NUMA_CORE": {8, 0, 4}, "NUMA_THREAD": {16, 0, 8}, "NUMA_SOCKET": {2, 0, 1}, "NUMA_MEMORY_MB": {3072, 0, 2048}}},
		{"Newton NUMA legacy: no siblings, unknown sockets", newton, func(n *nova.ComputeNode) {
			n.NUMATopology = sp(`{"cells": [{"id": 0, "cpus": "0-3", "mem": {"total": 512}}, {"id": 1, "cpus": "4-9", "mem": {"total": 512}}]}`)
		}, map[string][3]int64{"VCPU": {32, 0, 32}, "MEMORY_MB": {65536, 512, 65536}, "DISK_GB": {1000, 0, 1000},
			"NUMA_CORE": {10, 0, 6}, "NUMA_THREAD": {10, 0, 6}, "NUMA_SOCKET": {2, 0, 1}, "NUMA_MEMORY_MB": {1024, 0, 512}}},
		{"Newton NUMA: two cells on one socket", newton, func(n *nova.ComputeNode) {
			n.NUMATopology = sp(strings.ReplaceAll(twoCells, `"socket": 1`, `"socket": 0`))
		}, map[string][3]int64{"VCPU": {32, 0, 32}, "PCPU": {8, 0, 8}, "MEMORY_MB": {65536, 512, 65536}, "DISK_GB": {1000, 0, 1000},
			"NUMA_CORE": {8, 0, 4}, "NUMA_THREAD": {16, 0, 8}, "NUMA_SOCKET": {1, 0, 1}, "NUMA_MEMORY_MB": {3072, 0, 2048}}},
		{"Newton PCI classes, tag override, zero pool dropped, max unit option", func(c *InventoryConfig) {
			c.NewtonClasses = true
			c.PCIMaxUnit = map[string]int64{"SRIOV_NET_VF": 4}
		},
			func(n *nova.ComputeNode) { n.PCIStats = sp(pools) },
			map[string][3]int64{"VCPU": {32, 0, 32}, "MEMORY_MB": {65536, 512, 65536}, "DISK_GB": {1000, 0, 1000},
				"SRIOV_NET_VF": {7, 0, 4}, PFResourceClass: {2, 0, 2}, "PCI_DEVICE": {2, 0, 2}, "CUSTOM_GPU_T4": {3, 0, 3}}},
		{"extra resources become CUSTOM_ classes", nil, func(n *nova.ComputeNode) {
			n.ExtraResources = sp(`{"fpga arria10": 2, "CUSTOM_NVME_SLOT": 4, "gone": 0}`)
		}, map[string][3]int64{"VCPU": {32, 0, 32}, "MEMORY_MB": {65536, 512, 65536}, "DISK_GB": {1000, 0, 1000},
			"CUSTOM_FPGA_ARRIA10": {2, 0, 2}, "CUSTOM_NVME_SLOT": {4, 0, 4}}},
		{"shared storage: no local DISK_GB", func(c *InventoryConfig) { c.SharedStorage = []SharedPool{{Name: "ceph", Globs: []string{"cmp*"}}} }, nil,
			map[string][3]int64{"VCPU": {32, 0, 32}, "MEMORY_MB": {65536, 512, 65536}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := baseCfg()
			if tt.cfg != nil {
				tt.cfg(&cfg)
			}
			p, err := cfg.PlanNode("cell1", node(tt.node))
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Providers) != 1 {
				t.Fatalf("%d providers in the flat layout", len(p.Providers))
			}
			if got := totals(p.Providers[0]); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %v\nwant %v", got, tt.want)
			}
			if !reflect.DeepEqual(p.Providers[0].Traits, []string{TraitComputeNode}) {
				t.Errorf("traits %v", p.Providers[0].Traits)
			}
		})
	}
}

func TestPlanNodeNested(t *testing.T) {
	cfg := baseCfg()
	cfg.Layout = LayoutNested
	cfg.Reserved = config.Reserved{CPUs: 6, MemoryMB: 1500}
	p, err := cfg.PlanNode("cell1", node(func(n *nova.ComputeNode) {
		n.NUMATopology, n.PCIStats = sp(twoCells), sp(pools)
	}))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Providers) != 3 {
		t.Fatalf("%d providers, want root + 2 NUMA cells", len(p.Providers))
	}
	root, c0, c1 := p.Providers[0], p.Providers[1], p.Providers[2]
	// twoCells is a cpu_dedicated_set host: VCPU reserved is 0 (cpu.go), and
	// the pools are NewtonClasses' only.
	if got := totals(root); !reflect.DeepEqual(got, map[string][3]int64{"DISK_GB": {1000, 0, 1000}}) {
		t.Errorf("root %v", got)
	}
	if got := totals(c0); !reflect.DeepEqual(got, map[string][3]int64{"PCPU": {4, 0, 4}, "VCPU": {4, 0, 4}, "MEMORY_MB": {1024, 1024, 1024}}) {
		t.Errorf("cell 0 %v", got)
	}
	if got := totals(c1); !reflect.DeepEqual(got, map[string][3]int64{"PCPU": {4, 0, 4}, "VCPU": {4, 0, 4}, "MEMORY_MB": {2048, 476, 2048}}) {
		t.Errorf("cell 1 %v", got)
	}
	// NewtonClasses puts the pools on their cells (and the others on the
	// root); on a host without CPU sets the 6 reserved CPUs fill the cells
	// in id order: all 6 from cell 0's 8, none from cell 1.
	nc := cfg
	nc.NewtonClasses = true
	pn, err := nc.PlanNode("cell1", node(func(n *nova.ComputeNode) { n.NUMATopology, n.PCIStats = sp(legacyCells), sp(pools) }))
	if err != nil {
		t.Fatal(err)
	}
	if got := totals(pn.Providers[0]); !reflect.DeepEqual(got, map[string][3]int64{"DISK_GB": {1000, 0, 1000}, "PCI_DEVICE": {2, 0, 2}, "CUSTOM_GPU_T4": {3, 0, 3}}) {
		t.Errorf("Newton root %v", got)
	}
	if got := totals(pn.Providers[1]); !reflect.DeepEqual(got, map[string][3]int64{"VCPU": {8, 6, 8}, "MEMORY_MB": {1024, 1024, 1024}, "SRIOV_NET_VF": {7, 0, 7}}) {
		t.Errorf("Newton cell 0 %v", got)
	}
	if got := totals(pn.Providers[2]); !reflect.DeepEqual(got, map[string][3]int64{"VCPU": {8, 0, 8}, "MEMORY_MB": {2048, 476, 2048}, PFResourceClass: {2, 0, 2}}) {
		t.Errorf("Newton cell 1 %v", got)
	}
	// No CPU is counted twice: a cell's VCPU + PCPU never exceeds its threads.
	for _, pl := range []*NodePlan{p, pn} {
		for _, d := range pl.Providers[1:] {
			if vc, pc := d.Inventories["VCPU"].Total, d.Inventories["PCPU"].Total; vc+pc > 8 {
				t.Errorf("%s: VCPU %d + PCPU %d > 8 threads", d.Name, vc, pc)
			}
		}
	}
	if c0.ParentUUID != root.UUID || c0.Name != "cmp1.example.org_NUMA0" || c0.UUID == "" || c0.UUID == c1.UUID || c0.Traits[0] != TraitNUMARoot {
		t.Errorf("child 0: %+v", c0)
	}
	// Child uuids are derived from the root's, so re-runs find them.
	again, _ := cfg.PlanNode("cell1", node(func(n *nova.ComputeNode) { n.NUMATopology = sp(twoCells) }))
	if again.Providers[1].UUID != c0.UUID {
		t.Error("child uuid is not stable")
	}
	// A node whose uuid is generated later gets the same children after Bind.
	late, _ := cfg.PlanNode("cell1", node(func(n *nova.ComputeNode) { n.UUID = nil; n.NUMATopology = sp(twoCells) }))
	late.Bind(root.UUID)
	if late.Providers[2].UUID != c1.UUID || late.Providers[2].ParentUUID != root.UUID {
		t.Errorf("after Bind: %+v", late.Providers[2])
	}
	// Without a NUMA topology the nested layout is the flat one.
	flat, _ := cfg.PlanNode("cell1", node(nil))
	if len(flat.Providers) != 1 || flat.Providers[0].Inventories["VCPU"].Total != 32 {
		t.Errorf("nested without NUMA: %+v", flat.Providers)
	}
}

func TestPlanNodeBadRows(t *testing.T) {
	tests := []struct {
		name string
		mod  func(*nova.ComputeNode)
		want string
	}{
		{"negative totals", func(n *nova.ComputeNode) { n.VCPUs = -16 }, "vcpus=-16: "},
		{"no hostname", func(n *nova.ComputeNode) { n.HypervisorHostname = nil }, "hypervisor_hostname=NULL: empty"},
		{"negative ratio", func(n *nova.ComputeNode) { n.CPUAllocationRatio = fp(-1) }, "cpu_allocation_ratio=-1: "},
		// Placement's limits: what its API would refuse is never planned.
		{"vcpus 2^31", func(n *nova.ComputeNode) { n.VCPUs = 1 << 31 }, "vcpus=2147483648: "},
		{"memory 2^31", func(n *nova.ComputeNode) { n.MemoryMB = 1 << 31 }, "memory_mb=2147483648: "},
		{"disk 2^31", func(n *nova.ComputeNode) { n.LocalGB = 1 << 31 }, "local_gb=2147483648: "},
		{"ratio above FLOAT", func(n *nova.ComputeNode) { n.RAMAllocationRatio = fp(1e39) }, "ram_allocation_ratio=1e+39: "},
		{"not a uuid", func(n *nova.ComputeNode) { n.UUID = sp("not-a-uuid") }, `uuid="not-a-uuid": not a UUID`},
		{"uuid in braces", func(n *nova.ComputeNode) { n.UUID = sp("{11111111-2222-4333-8444-555555555555}") }, "uuid="},
		{"201-char hostname", func(n *nova.ComputeNode) { n.HypervisorHostname = sp(strings.Repeat("h", 201)) }, "would be 201 characters; Placement allows 200"},
		{"child name too long", func(n *nova.ComputeNode) {
			n.HypervisorHostname = sp(strings.Repeat("h", 198))
			n.NUMATopology = sp(twoCells)
		}, "would be 204 characters"},
		{"not utf-8", func(n *nova.ComputeNode) { n.HypervisorHostname = sp("host\xff") }, `hypervisor_hostname="host\\xff": not valid UTF-8`},
		{"pci sum 2^31", func(n *nova.ComputeNode) {
			n.PCIStats = sp(`[{"count": 2147483647, "dev_type": "type-VF"}, {"count": 1, "dev_type": "type-VF"}]`)
		}, "SRIOV_NET_VF: total = 2147483648 is outside 1..2147483647"},
		{"pci count 2^31", func(n *nova.ComputeNode) { n.PCIStats = sp(`[{"count": 2147483648, "dev_type": "type-VF"}]`) }, "pci_stats="},
		{"numa cell memory 2^31", func(n *nova.ComputeNode) {
			n.NUMATopology = sp(`{"cells": [{"id": 0, "cpus": "0-3", "mem": {"total": 2147483648}}]}`)
		}, "numa_topology="},
		{"extra 2^31", func(n *nova.ComputeNode) { n.ExtraResources = sp(`{"fpga": 2147483648}`) }, "FPGA: total = 2147483648 is outside"},
		{"unparsable pci", func(n *nova.ComputeNode) { n.PCIStats = sp(`[{"count"`) }, "pci_stats"},
		{"unknown numa", func(n *nova.ComputeNode) { n.NUMATopology = sp(`{"sockets": []}`) }, "numa_topology"},
		{"bad extra", func(n *nova.ComputeNode) { n.ExtraResources = sp(`{"x": "lots"}`) }, "extra_resources"},
		{"extra name clash", func(n *nova.ComputeNode) { n.ExtraResources = sp(`{"a b": 1, "A_B": 2}`) }, "twice"},
		// Issue 37 row 3: Placement's class name rule, with its limit.
		{"pci class 300 characters", func(n *nova.ComputeNode) {
			n.PCIStats = sp(`[{"count": 2, "dev_type": "type-PCI", "resource_class": "` + strings.Repeat("g", 300) + `"}]`)
		}, `pci_stats="[{\"count\": 2, \"dev_type\": \"type-PCI\", \"resource_class\": \"ggg"...(360 characters): a pool's resource_class tag: the resource class "CUSTOM_GGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGG..." would be 307 characters; Placement allows 255 (schemas/resource_class.py maxLength)`},
		{"pci class only the prefix", func(n *nova.ComputeNode) {
			n.PCIStats = sp(`[{"count": 2, "dev_type": "type-PCI", "resource_class": "CUSTOM_"}]`)
		}, `the resource class "CUSTOM_" is not one Placement accepts (a standard name, or ^CUSTOM_[A-Z0-9_]+$)`},
		{"pci class 255 characters is fine but 256 is not", func(n *nova.ComputeNode) {
			n.PCIStats = sp(`[{"count": 2, "dev_type": "type-PCI", "resource_class": "CUSTOM_` + strings.Repeat("G", 249) + `"}]`)
		}, "would be 256 characters"},
		// Issue 37 row 14: a standard class the row's columns give.
		{"extra names VCPU", func(n *nova.ComputeNode) { n.ExtraResources = sp(`{"VCPU": 4}`) }, `extra_resources="{\"VCPU\": 4}": "VCPU" names VCPU, which the row's own vcpus gives; an extra resource must be a class of its own`},
		{"extra names memory_mb in lower case", func(n *nova.ComputeNode) { n.ExtraResources = sp(`{"memory_mb": 4}`) }, `"memory_mb" names MEMORY_MB, which the row's own memory_mb gives`},
		{"extra class 300 characters", func(n *nova.ComputeNode) { n.ExtraResources = sp(`{"` + strings.Repeat("f", 300) + `": 1}`) }, "would be 307 characters; Placement allows 255"},
		{"pcpuset overlapping cpuset", func(n *nova.ComputeNode) {
			n.NUMATopology = sp(strings.Replace(twoCells, `"pcpuset": [8,9,10,11]`, `"pcpuset": [3,9,10,11]`, 1))
		}, "pcpuset overlaps its cpuset"},
	}
	cfg := baseCfg()
	nested := baseCfg()
	nested.Layout = LayoutNested
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := cfg.PlanNode("cell1", node(tt.mod))
			if err == nil {
				_, err = nested.PlanNode("cell1", node(tt.mod))
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestNormalizeClass(t *testing.T) {
	for in, want := range map[string]string{
		"VCPU": "VCPU", "sriov_net_vf": "SRIOV_NET_VF", "gpu t4": "CUSTOM_GPU_T4", "CUSTOM_X": "CUSTOM_X",
		"custom_y-z": "CUSTOM_Y_Z", "nvme.slot": "CUSTOM_NVME_SLOT",
	} {
		if got := NormalizeClass(in); got != want {
			t.Errorf("NormalizeClass(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestFlagParsers(t *testing.T) {
	pools, err := ParseSharedStorage([]string{"ceph=cmp1-*,nfs=gpu*", "ceph=cmp2-*"})
	if err != nil || !reflect.DeepEqual(pools, []SharedPool{{"ceph", []string{"cmp1-*", "cmp2-*"}}, {"nfs", []string{"gpu*"}}}) {
		t.Errorf("ParseSharedStorage = %v, %v", pools, err)
	}
	for _, bad := range []string{"ceph", "=x", "ceph=[", "ceph="} {
		if _, err := ParseSharedStorage([]string{bad}); err == nil || !strings.Contains(err.Error(), "--shared-storage") {
			t.Errorf("ParseSharedStorage(%q) err = %v", bad, err)
		}
	}
	mu, err := ParsePCIMaxUnit([]string{"sriov_net_vf=8", "gpu=1"})
	if err != nil || !reflect.DeepEqual(mu, map[string]int64{"SRIOV_NET_VF": 8, "CUSTOM_GPU": 1}) {
		t.Errorf("ParsePCIMaxUnit = %v, %v", mu, err)
	}
	for _, bad := range []string{"X", "X=0", "X=a"} {
		if _, err := ParsePCIMaxUnit([]string{bad}); err == nil || !strings.Contains(err.Error(), "--pci-max-unit") {
			t.Errorf("ParsePCIMaxUnit(%q) err = %v", bad, err)
		}
	}
}

func state(ps ...*PProvider) *PlacementState {
	st := &PlacementState{Providers: map[string]*PProvider{}, ByName: map[string]string{}}
	for _, p := range ps {
		st.Providers[p.UUID] = p
		st.ByName[p.Name] = p.UUID
	}
	return st
}

func TestDiffRatiosAndChanges(t *testing.T) {
	n := node(func(n *nova.ComputeNode) {
		n.CPUAllocationRatio, n.RAMAllocationRatio, n.DiskAllocationRatio = fp(8), fp(0), nil
	})
	cfg := baseCfg()
	p, err := cfg.PlanNode("cell1", n)
	if err != nil {
		t.Fatal(err)
	}
	// A new provider: row value 8 for VCPU, initial 1.5 for the 0.0 RAM, 1.0 for the NULL disk.
	w, ch, err := cfg.Diff(p.Providers, state())
	if err != nil || w == nil || !w.Providers[0].Create || ch[0].Action != "create" {
		t.Fatalf("create: %+v %v", w, err)
	}
	got := w.Providers[0].AddInventories
	if got["VCPU"].AllocationRatio != 8 || got["MEMORY_MB"].AllocationRatio != 1.5 || got["DISK_GB"].AllocationRatio != 1 {
		t.Errorf("ratios %+v", got)
	}
	if w.Providers[0].Generation != 2 {
		t.Errorf("generation %d, want 2 (inventories, traits)", w.Providers[0].Generation)
	}
	// Existing provider as written: unchanged.
	cur := &PProvider{UUID: *n.UUID, Name: *n.HypervisorHostname, Generation: 5, Inventories: map[string]inventory.Inventory{},
		Traits: map[string]bool{TraitComputeNode: true}, Aggregates: map[string]bool{}, Used: map[string]bool{}}
	for rc, v := range got {
		cur.Inventories[rc] = v
	}
	if w, _, err := cfg.Diff(p.Providers, state(cur)); w != nil || err != nil {
		t.Errorf("unchanged provider gave %+v, %v", w, err)
	}
	// An operator set VCPU's ratio to 3.0 through the API: kept without an
	// override, replaced with one.
	v := cur.Inventories["VCPU"]
	v.AllocationRatio = 3
	cur.Inventories["VCPU"] = v
	if w, _, _ := cfg.Diff(p.Providers, state(cur)); w != nil {
		t.Errorf("API-set ratio not kept: %+v", w.Providers[0].UpdateInventories)
	}
	// The plan carries the ratio options it was planned with (its host's:
	// ForHost), so the override is planned too.
	over := cfg
	over.Ratios.CPU = fp(4)
	po, err := over.PlanNode("cell1", n)
	if err != nil {
		t.Fatal(err)
	}
	w, _, _ = over.Diff(po.Providers, state(cur))
	if w == nil || w.Providers[0].UpdateInventories["VCPU"].AllocationRatio != 4 || len(w.Providers[0].UpdateInventories) != 1 {
		t.Errorf("override not applied to VCPU alone: %+v", w)
	}
	if w.Providers[0].ExpectGeneration != 5 || w.Providers[0].Generation != 6 {
		t.Errorf("generation %d -> %d, want 5 -> 6", w.Providers[0].ExpectGeneration, w.Providers[0].Generation)
	}
	// Capacity change: only that inventory is rewritten.
	bigger := n
	bigger.MemoryMB = 131072
	p2, _ := cfg.PlanNode("cell1", bigger)
	w, _, _ = cfg.Diff(p2.Providers, state(cur))
	if w == nil || len(w.Providers[0].UpdateInventories) != 1 || w.Providers[0].UpdateInventories["MEMORY_MB"].Total != 131072 {
		t.Errorf("memory change: %+v", w)
	}
	// A managed class the node no longer has is removed, unless in use.
	cur.Inventories["PCI_DEVICE"] = inventory.Inventory{Total: 1, MinUnit: 1, MaxUnit: 1, StepSize: 1, AllocationRatio: 1}
	cur.Inventories["CUSTOM_OPERATOR"] = inventory.Inventory{Total: 1, MinUnit: 1, MaxUnit: 1, StepSize: 1, AllocationRatio: 1}
	w, _, _ = cfg.Diff(p.Providers, state(cur))
	if w == nil || !reflect.DeepEqual(w.Providers[0].DeleteInventories, []string{"PCI_DEVICE"}) {
		t.Errorf("delete: %+v", w)
	}
	cur.Used["PCI_DEVICE"] = true
	if _, _, err := cfg.Diff(p.Providers, state(cur)); err == nil || !strings.Contains(err.Error(), "allocations") {
		t.Errorf("in-use delete: %v", err)
	}
	// The name is held by another provider.
	other := &PProvider{UUID: "22222222-2222-4222-8222-222222222222", Name: *n.HypervisorHostname}
	if _, _, err := cfg.Diff(p.Providers, state(other)); err == nil || !strings.Contains(err.Error(), "already used") {
		t.Errorf("name clash: %v", err)
	}
}

func TestSharedPlans(t *testing.T) {
	cfg := baseCfg()
	cfg.SharedStorage = []SharedPool{{Name: "ceph", Globs: []string{"cmp*"}}, {Name: "unused", Globs: []string{"nothing"}}}
	cfg.Reserved.DiskMB = 2048
	var plans []*NodePlan
	for i, gb := range []int64{500, 800} {
		p, err := cfg.PlanNode("cell1", node(func(n *nova.ComputeNode) { n.ID, n.LocalGB = int64(i+1), gb; n.DiskAllocationRatio = fp(2) }))
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := p.Providers[0].Inventories["DISK_GB"]; ok || p.Providers[0].Aggregates[0] != SharedAggregateUUID("ceph") {
			t.Errorf("member %d: %+v", i, p.Providers[0])
		}
		plans = append(plans, p)
	}
	sh := cfg.SharedPlans(plans)
	if len(sh) != 1 {
		t.Fatalf("%d sharing providers, want 1 (pools without members get none)", len(sh))
	}
	d := sh[0].Inventories["DISK_GB"]
	if d.Total != 800 || d.Reserved != 2 || d.MaxUnit != 800 || cfg.Ratio(d, nil) != 2 || sh[0].Traits[0] != TraitShares || sh[0].UUID != SharedProviderUUID("ceph") {
		t.Errorf("sharing provider %+v %+v", sh[0], d)
	}
}

// TestPlanNodeEveryBadColumn (issue 34): a row with several bad columns is
// reported once, naming every one of them in column order (sample-cloud's
// bad-0003 has three negative totals; it used to take three runs to learn
// of them), and a bad column does not hide an independent one; a column
// whose check needs a bad one (the PCI device providers' names need the
// hostname) is not reported in its stead.
func TestPlanNodeEveryBadColumn(t *testing.T) {
	cfg := baseCfg()
	for _, tc := range []struct {
		name string
		mod  func(*nova.ComputeNode)
		cols []string
		want []string
	}{
		{"three totals", func(n *nova.ComputeNode) { n.VCPUs, n.MemoryMB, n.LocalGB = -16, -65536, -1 },
			[]string{"vcpus", "memory_mb", "local_gb"}, []string{"vcpus=-16: ", "; memory_mb=-65536: ", "; local_gb=-1: "}},
		{"uuid, ratio and every blob", func(n *nova.ComputeNode) {
			n.UUID, n.DiskAllocationRatio = sp("not-a-uuid"), fp(-2)
			n.PCIStats, n.NUMATopology, n.ExtraResources = sp(`[{"count"`), sp(`{"sockets": []}`), sp(`{"x": "lots"}`)
		}, []string{"uuid", "disk_allocation_ratio", "pci_stats", "numa_topology", "extra_resources"}, []string{`uuid="not-a-uuid": not a UUID`, "disk_allocation_ratio=-2: "}},
		{"no hostname, bad extra", func(n *nova.ComputeNode) { n.HypervisorHostname, n.ExtraResources = nil, sp(`{"VCPU": 4}`) },
			[]string{"hypervisor_hostname", "extra_resources"}, []string{"hypervisor_hostname=NULL: empty", `"VCPU" names VCPU`}},
		{"one bad column keeps its old shape", func(n *nova.ComputeNode) { n.VCPUs = -1 }, []string{"vcpus"}, []string{"vcpus=-1: "}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := cfg.PlanNode("cell1", node(tc.mod))
			if err == nil {
				t.Fatal("planned a bad row")
			}
			var cols []string
			var many FieldErrors
			var one *FieldError
			switch {
			case errors.As(err, &many):
				cols = many.Columns()
			case errors.As(err, &one):
				cols = []string{one.Field}
			}
			if !reflect.DeepEqual(cols, tc.cols) {
				t.Errorf("bad columns %q, want %q: %v", cols, tc.cols, err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%v: no %q", err, w)
				}
			}
			if !errors.As(err, &one) || one.Field != tc.cols[0] {
				t.Errorf("errors.As finds %v, want the first column %s", one, tc.cols[0])
			}
		})
	}
}
