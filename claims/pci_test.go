package claims

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/candidates"
	"github.com/rpctl/rpctl/internal/nova"
)

// pciCell is fakeCell with pci_devices and migrations rows.
type pciCell struct {
	*fakeCell
	devs []nova.PCIDevice
	migs map[string][]InstanceMigration
}

func (c *pciCell) InstancePCIDevices(_ context.Context, uuid string) ([]nova.PCIDevice, error) {
	var out []nova.PCIDevice
	for _, d := range c.devs {
		if d.InstanceUUID != nil && *d.InstanceUUID == uuid {
			out = append(out, d)
		}
	}
	return out, nil
}

func (c *pciCell) InstanceMigrations(_ context.Context, uuid string) ([]InstanceMigration, error) {
	return c.migs[uuid], nil
}

// fakePCI reports every device of the hosts in on, on the provider named
// after the node and its (parent) address, class CUSTOM_PCI_<vendor>.
type fakePCI struct{ on map[string]bool }

func (p fakePCI) ReportsPCI(host *string) bool { return host != nil && p.on[*host] }

func (p fakePCI) PCIDeviceProvider(host *string, node string, d nova.PCIDevice) (string, string, bool) {
	if !p.ReportsPCI(host) {
		return "", "", false
	}
	addr := d.Address
	if d.ParentAddr != nil {
		addr = *d.ParentAddr
	}
	return node + "_" + strings.ToUpper(addr), "CUSTOM_PCI_" + strings.ToUpper(d.VendorID), true
}

// pciTree is the root n1 (uuid rp1) with one PF's device provider
// n1_0000:81:00.0 (uuid dev0, 4 of CUSTOM_PCI_8086).
func pciTree() *candidates.ModelInput {
	in := &candidates.ModelInput{
		Providers:       []candidates.ProviderRow{{ID: 1, UUID: "rp1", Name: "n1"}, {ID: 2, UUID: "dev0", Name: "n1_0000:81:00.0", ParentID: 1}},
		ResourceClasses: []candidates.NamedRow{{ID: 10000, Name: "CUSTOM_PCI_8086"}},
	}
	add := func(rp, rc int64, total int64) {
		in.Inventories = append(in.Inventories, candidates.InventoryRow{ProviderID: rp, ResourceClassID: rc, Total: total, MinUnit: 1, MaxUnit: total, StepSize: 1, AllocationRatio: 1, SQLRatio: 1})
	}
	add(1, classID("VCPU"), 8)
	add(1, classID("MEMORY_MB"), 4096)
	add(1, classID("DISK_GB"), 100)
	add(2, 10000, 4)
	return in
}

func TestHealAddsPCIDeviceAllocations(t *testing.T) {
	ctx := context.Background()
	uuid := "i-000"
	vf := func(id int64, addr string, owner string) nova.PCIDevice {
		parent := "0000:81:00.0"
		d := nova.PCIDevice{ID: id, Address: addr, VendorID: "8086", ProductID: "154c", DevType: "type-VF", Status: "allocated", ParentAddr: &parent}
		if owner != "" {
			d.InstanceUUID = &owner
		}
		return d
	}
	other := "0000:82:00.0"
	onOtherPF := vf(9, "0000:82:00.1", uuid)
	onOtherPF.ParentAddr = &other
	flavorOnly := map[string]ProviderAllocation{"rp1": {Resources: map[string]int64{"VCPU": 1, "MEMORY_MB": 256, "DISK_GB": 1}}}
	withDev := func(n int64) map[string]ProviderAllocation {
		return map[string]ProviderAllocation{"rp1": flavorOnly["rp1"], "dev0": {Resources: map[string]int64{"CUSTOM_PCI_8086": n}}}
	}
	h1 := "h1"
	cases := []struct {
		name string
		held map[string]ProviderAllocation // nil: no allocation yet
		devs []nova.PCIDevice
		migs []InstanceMigration
		on   bool
		code int
		want map[string]ProviderAllocation // nil: nothing written
	}{
		{"existing allocation gets its device", flavorOnly, []nova.PCIDevice{vf(1, "0000:81:00.1", uuid)}, nil, true, ExitHealed, withDev(1)},
		{"new allocation gets its device", nil, []nova.PCIDevice{vf(1, "0000:81:00.1", uuid)}, nil, true, ExitHealed, withDev(1)},
		{"two VFs of one PF count 2", flavorOnly, []nova.PCIDevice{vf(1, "0000:81:00.1", uuid), vf(2, "0000:81:00.2", uuid)}, nil, true, ExitHealed, withDev(2)},
		{"a wrong amount is set to the devices held", withDev(3), []nova.PCIDevice{vf(1, "0000:81:00.1", uuid)}, nil, true, ExitHealed, withDev(1)},
		{"up to date", withDev(1), []nova.PCIDevice{vf(1, "0000:81:00.1", uuid)}, nil, true, ExitNothingToDo, nil},
		{"host not reporting PCI in Placement", flavorOnly, []nova.PCIDevice{vf(1, "0000:81:00.1", uuid)}, nil, false, ExitNothingToDo, nil},
		{"no device", flavorOnly, nil, nil, true, ExitNothingToDo, nil},
		{"same-host resize in progress", flavorOnly, []nova.PCIDevice{vf(1, "0000:81:00.1", uuid)}, []InstanceMigration{{SourceCompute: &h1, DestCompute: &h1, Status: "finished"}}, true, ExitNothingToDo, nil},
		{"same-host resize confirmed", flavorOnly, []nova.PCIDevice{vf(1, "0000:81:00.1", uuid)}, []InstanceMigration{{SourceCompute: &h1, DestCompute: &h1, Status: "confirmed"}}, true, ExitHealed, withDev(1)},
		{"device provider not in Placement", flavorOnly, []nova.PCIDevice{onOtherPF}, nil, true, ExitNothingToDo, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fc, fp := cloud([]bool{true})
			if tc.held != nil {
				g := int64(1)
				fp.allocs[uuid] = &Allocations{Allocations: tc.held, ProjectID: "p", UserID: "u", ConsumerGeneration: &g}
			}
			cell := &pciCell{fakeCell: fc, devs: tc.devs, migs: map[string][]InstanceMigration{uuid: tc.migs}}
			mp := &modelPlacement{fakePlacement: fp, in: pciTree()}
			h := Healer{Cells: []Cell{cell}, Placement: mp, PCI: fakePCI{on: map[string]bool{"h1": tc.on}}}
			res, err := h.Heal(ctx, HealOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if res.Code != tc.code {
				t.Fatalf("code %d, want %d (%s)", res.Code, tc.code, res.Message)
			}
			if tc.want == nil {
				if len(fp.puts) != 0 {
					t.Fatalf("wrote %v, want nothing", fp.puts)
				}
				return
			}
			got := map[string]ProviderAllocation{}
			for rp, pa := range fp.allocs[uuid].Allocations {
				got[rp] = ProviderAllocation{Resources: pa.Resources}
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("allocation %v, want %v", got, tc.want)
			}
		})
	}
}
