package status

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/internal/config"
	"github.com/rpctl/rpctl/internal/nova"
	"github.com/rpctl/rpctl/inventory"
	"github.com/rpctl/rpctl/migrate"
)

// invCell is a cell with compute node rows; only the methods the Compute
// Node Inventories check reads are implemented.
type invCell struct {
	Cell     // nil: any other method panics
	rows     []nova.ComputeNode
	disabled map[string]bool
}

func (c *invCell) Name() string { return "cell1" }
func (c *invCell) ScanNodesForInventory(_ context.Context, fn func(nova.ComputeNode)) error {
	for _, n := range c.rows {
		fn(n)
	}
	return nil
}
func (c *invCell) DisabledComputeHosts(context.Context) (map[string]bool, error) {
	return c.disabled, nil
}
func (c *invCell) PCIDevices(context.Context) (map[int64][]nova.PCIDevice, error) { return nil, nil }

// invPlacement is a Placement holding st.
type invPlacement struct {
	Placement
	st *migrate.PlacementState
}

func (p *invPlacement) LoadPlacementState(context.Context) (*migrate.PlacementState, error) {
	return p.st, nil
}

// uuidOf is a host's provider uuid.
func uuidOf(host string) string {
	return map[string]string{"cn1": "6f1e1a52-0c39-4a5e-9d3c-2a1b5b7e0c01", "cn2": "6f1e1a52-0c39-4a5e-9d3c-2a1b5b7e0c02"}[host]
}

func sp(s string) *string   { return &s }
func fp(f float64) *float64 { return &f }
func invOf(total, reserved int64, ratio float64) inventory.Inventory {
	return inventory.Inventory{Total: total, Reserved: reserved, MinUnit: 1, MaxUnit: total, StepSize: 1, AllocationRatio: ratio}
}

// cnRow is a plain compute node: 16 VCPUs, 4096 MB, 100 GB, ratios set.
func cnRow(host string) nova.ComputeNode {
	return nova.ComputeNode{ID: 1, Host: sp(host), HypervisorHostname: sp(host), UUID: sp(uuidOf(host)),
		VCPUs: 16, MemoryMB: 4096, LocalGB: 100, HypervisorType: "QEMU", HypervisorVersion: 6002000, CPUInfo: "{}",
		CPUAllocationRatio: fp(16), RAMAllocationRatio: fp(1.5), DiskAllocationRatio: fp(1)}
}

// reported is what nova-compute reports for cnRow with Nova's defaults
// (reserved_host_memory_mb = 512).
func reported() map[string]inventory.Inventory {
	return map[string]inventory.Inventory{"VCPU": invOf(16, 0, 16), "MEMORY_MB": invOf(4096, 512, 1.5), "DISK_GB": invOf(100, 0, 1)}
}

func state(host string, invs map[string]inventory.Inventory, traits ...string) *migrate.PlacementState {
	u := uuidOf(host)
	tr := map[string]bool{migrate.TraitComputeNode: true}
	for _, t := range traits {
		tr[t] = true
	}
	return &migrate.PlacementState{
		Providers: map[string]*migrate.PProvider{u: {UUID: u, Name: host, RootUUID: u, Inventories: invs, Traits: tr, Aggregates: map[string]bool{}, Used: map[string]bool{}}},
		ByName:    map[string]string{host: u},
	}
}

func TestCheckComputeInventories(t *testing.T) {
	edit := func(f func(m map[string]inventory.Inventory)) map[string]inventory.Inventory {
		m := reported()
		f(m)
		return m
	}
	for _, tc := range []struct {
		name    string
		rows    []nova.ComputeNode
		st      *migrate.PlacementState
		compute *migrate.InventoryConfig
		code    Code
		want    []string // in the details, in order
	}{
		{name: "same as reported", rows: []nova.ComputeNode{cnRow("cn1")}, st: state("cn1", reported()), code: Success},
		{name: "reserved edited", rows: []nova.ComputeNode{cnRow("cn1")},
			st:   state("cn1", edit(func(m map[string]inventory.Inventory) { m["MEMORY_MB"] = invOf(4096, 1024, 1.5) })),
			code: Warning, want: []string{"1 inventory of compute nodes' providers differs", "cell1: cn1 MEMORY_MB reserved 1024->512", `Run "rpctl migrate inventory"`}},
		{name: "total and max_unit edited", rows: []nova.ComputeNode{cnRow("cn1")},
			st:   state("cn1", edit(func(m map[string]inventory.Inventory) { m["VCPU"] = invOf(8, 0, 16) })),
			code: Warning, want: []string{"cn1 VCPU total 8->16 max_unit 8->16"}},
		{name: "class missing", rows: []nova.ComputeNode{cnRow("cn1")},
			st:   state("cn1", edit(func(m map[string]inventory.Inventory) { delete(m, "DISK_GB") })),
			code: Warning, want: []string{"cn1 DISK_GB missing (nova-compute reports total 100)"}},
		{name: "class nova-compute never reports", rows: []nova.ComputeNode{cnRow("cn1")},
			st:   state("cn1", edit(func(m map[string]inventory.Inventory) { m["NUMA_CORE"] = invOf(8, 0, 1) })),
			code: Warning, want: []string{"cn1 NUMA_CORE total 8 not reported by nova-compute"}},
		{name: "an operator's own class is left alone", rows: []nova.ComputeNode{cnRow("cn1")},
			st:   state("cn1", edit(func(m map[string]inventory.Inventory) { m["CUSTOM_GOLD"] = invOf(1, 0, 1) })),
			code: Success},
		{name: "owned by nova-compute", rows: []nova.ComputeNode{cnRow("cn1")},
			st:   state("cn1", edit(func(m map[string]inventory.Inventory) { m["MEMORY_MB"] = invOf(4096, 0, 1.5) }), "COMPUTE_NET_ATTACH_INTERFACE"),
			code: Warning, want: []string{"cn1 MEMORY_MB reserved 0->512", "1 of them on providers a nova-compute already owns"}},
		{name: "a host's own nova.conf", rows: []nova.ComputeNode{cnRow("cn1")},
			st: state("cn1", edit(func(m map[string]inventory.Inventory) { m["MEMORY_MB"] = invOf(4096, 2048, 1.5) })),
			compute: func() *migrate.InventoryConfig {
				c, _ := migrate.ComputeConfig(config.DefaultOptions())
				c.Hosts = map[string]migrate.HostConfig{"cn1": {Source: "cn1.conf", Ratios: c.Ratios, Reserved: config.Reserved{MemoryMB: 2048}}}
				return &c
			}(), code: Success},
		{name: "no provider: the Resource Providers check's", rows: []nova.ComputeNode{cnRow("cn2")}, st: state("cn1", reported()), code: Success},
		{name: "no uuid: the UUID check's", rows: []nova.ComputeNode{func() nova.ComputeNode { n := cnRow("cn1"); n.UUID = nil; return n }()},
			st: state("cn1", nil), code: Success},
		{name: "a row that cannot be planned", rows: []nova.ComputeNode{func() nova.ComputeNode {
			n := cnRow("cn1")
			n.NUMATopology = sp("{not json")
			return n
		}()}, st: state("cn1", reported()), code: Warning, want: []string{"1 compute node row cannot be planned or compared with Placement: cell1: cn1 ("}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := &Env{Cells: []Cell{&invCell{rows: tc.rows}}, Placement: &invPlacement{st: tc.st}, Options: config.DefaultOptions(), Compute: tc.compute}
			details := checkInventoriesSays(t, e, tc.code, tc.want)
			if tc.code == Success && details != "" {
				t.Errorf("details on success: %s", details)
			}
		})
	}
}

// TestCheckComputeInventoriesUnreadable: without Placement, or with a
// nova.conf the plan cannot use, the check has no verdict (exit 255).
func TestCheckComputeInventoriesUnreadable(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  *Env
		want string
	}{
		{"no placement", &Env{Cells: []Cell{&invCell{}}, PlacementErr: errors.New("no Placement database configured")}, "no Placement database configured"},
		{"bad nova.conf", &Env{Cells: []Cell{&invCell{}}, Placement: &invPlacement{st: state("cn1", nil)}, ComputeErr: errors.New("nova.conf: [pci] device_spec: bad")}, "device_spec: bad"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := Run(context.Background(), []Check{{Name: CheckComputeInventories, Run: tc.env.checkComputeInventories, Tool: ToolRpctl}})
			r := rep.Results[0]
			if !r.Unreadable || rep.Exit() != ExitCrashed || !strings.Contains(r.Details, tc.want) {
				t.Errorf("got %+v exit %d, want unreadable naming %q", r, rep.Exit(), tc.want)
			}
		})
	}
}

// TestCheckComputeInventoriesLayouts: a tree in one of rpctl's own
// layouts is checked against that layout's plan while nova-compute does
// not own it, and against nova-compute's flat report once it does.
func TestCheckComputeInventoriesLayouts(t *testing.T) {
	u := uuidOf("cn1")
	pool := migrate.SharedProviderUUID("ceph")
	shared := func(owner ...string) *migrate.PlacementState {
		inv := reported()
		delete(inv, "DISK_GB")
		st := state("cn1", inv, owner...)
		st.Providers[u].Aggregates = map[string]bool{migrate.SharedAggregateUUID("ceph"): true}
		st.Providers[pool] = &migrate.PProvider{UUID: pool, Name: migrate.SharedProviderName("ceph"), RootUUID: pool,
			Inventories: map[string]inventory.Inventory{"DISK_GB": invOf(100, 0, 1)},
			Traits:      map[string]bool{migrate.TraitShares: true},
			Aggregates:  map[string]bool{migrate.SharedAggregateUUID("ceph"): true}, Used: map[string]bool{}}
		st.ByName[migrate.SharedProviderName("ceph")] = pool
		return st
	}
	for _, tc := range []struct {
		name string
		st   *migrate.PlacementState
		code Code
		want []string
	}{
		{name: "shared storage as written", st: shared(), code: Success,
			want: []string{"1 compute node holds a layout rpctl wrote on request (1 with --shared-storage ceph=...: cell1: cn1)", "nova-compute reports only the flat layout"}},
		{name: "shared storage, a root edited", st: func() *migrate.PlacementState {
			st := shared()
			st.Providers[u].Inventories["MEMORY_MB"] = invOf(4096, 0, 1.5)
			return st
		}(), code: Warning, want: []string{"cn1 MEMORY_MB reserved 0->512", "1 compute node holds a layout"}},
		{name: "shared storage owned by nova-compute", st: shared("COMPUTE_NET_ATTACH_INTERFACE"), code: Warning,
			want: []string{"cn1 DISK_GB missing (nova-compute reports total 100)", "1 of them on providers a nova-compute already owns"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := &Env{Cells: []Cell{&invCell{rows: []nova.ComputeNode{cnRow("cn1")}}}, Placement: &invPlacement{st: tc.st}, Options: config.DefaultOptions()}
			checkInventoriesSays(t, e, tc.code, tc.want)
		})
	}
}

// checkInventoriesSays runs the Compute Node Inventories check on e and
// requires its code and, in this order, each of want in its details,
// which it returns.
func checkInventoriesSays(t *testing.T, e *Env, code Code, want []string) string {
	t.Helper()
	got, details, err := e.checkComputeInventories(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got != code {
		t.Errorf("code %v, want %v: %s", got, code, details)
	}
	rest := details
	for _, w := range want {
		i := strings.Index(rest, w)
		if i < 0 {
			t.Errorf("details lack %q (in order):\n%s", w, details)
			continue
		}
		rest = rest[i+len(w):]
	}
	return details
}
