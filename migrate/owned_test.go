package migrate_test

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/internal/config"
	"github.com/rpctl/rpctl/internal/nova"
	"github.com/rpctl/rpctl/migrate"
	"github.com/rpctl/rpctl/samplecloud"
	"github.com/rpctl/rpctl/storage/celldb"
	"github.com/rpctl/rpctl/storage/placementdb"
)

// TestNovaComputeOwner: a root provider is nova-compute's once one of the
// virt driver's capability traits is on it; rpctl's own traits, an
// operator's custom ones and COMPUTE_* traits no driver reports as a
// capability are not evidence.
func TestNovaComputeOwner(t *testing.T) {
	for _, tc := range []struct {
		name   string
		traits []string
		want   string
	}{
		{"none", nil, ""},
		{"rpctl's own", []string{"COMPUTE_NODE", "COMPUTE_STATUS_DISABLED", "HW_NUMA_ROOT", "MISC_SHARES_VIA_AGGREGATE", "COMPUTE_MANAGED_PCI_DEVICE"}, ""},
		{"an operator's", []string{"COMPUTE_NODE", "CUSTOM_GOLD", "HW_CPU_X86_AVX2"}, ""},
		{"libvirt", []string{"COMPUTE_NODE", "COMPUTE_NET_ATTACH_INTERFACE", "COMPUTE_DEVICE_TAGGING", "COMPUTE_IMAGE_TYPE_QCOW2"}, "COMPUTE_NET_ATTACH_INTERFACE"},
		{"ironic", []string{"COMPUTE_NODE", "COMPUTE_NET_ATTACH_INTERFACE"}, "COMPUTE_NET_ATTACH_INTERFACE"},
		{"z/vm", []string{"COMPUTE_IMAGE_TYPE_RAW"}, "COMPUTE_IMAGE_TYPE_RAW"},
		{"hyper-v", []string{"COMPUTE_SECURITY_UEFI_SECURE_BOOT"}, "COMPUTE_SECURITY_UEFI_SECURE_BOOT"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := map[string]bool{}
			for _, x := range tc.traits {
				m[x] = true
			}
			if got := migrate.NovaComputeOwner(m); got != tc.want {
				t.Errorf("NovaComputeOwner(%v) = %q, want %q", tc.traits, got, tc.want)
			}
		})
	}
}

// TestOwnedNodeLeftAloneSQLite: once a nova-compute owns a node's provider
// (its driver's capability traits on the root), a re-run writes nothing of
// it even where the row changed, and says so for that node; the node
// beside it, which no nova-compute owns, is updated; --force
// (OverwriteOwned) overwrites the owned one and says what it changes
// before it writes; a re-run after that writes nothing.
func TestOwnedNodeLeftAloneSQLite(t *testing.T) {
	ctx := context.Background()
	dbs, cloud := sqliteCloud(t, samplecloud.Options{Nodes: 6, Seed: 7})
	nodes, err := celldb.ListComputeNodes(ctx, dbs.Cells[0], false)
	if err != nil {
		t.Fatal(err)
	}
	nodes = slices.DeleteFunc(nodes, func(n nova.ComputeNode) bool { return slices.Contains(cloud.Kinds["bad"], n.ID) })
	owned, free := nodes[0], nodes[1]
	cfg := migrate.InventoryConfig{Layout: migrate.LayoutFlat, Ratios: config.DefaultOptions().Ratios, Reserved: config.Reserved{MemoryMB: 512}}
	run := func(force bool) (*migrate.Inventory, []string) {
		c := cfg
		c.OverwriteOwned = force
		var notes []string
		m := &migrate.Inventory{Cells: cellStores(dbs.Cells...), Placement: placementStore(dbs.Placement), Config: c, Parallel: 1,
			Notice: func(s string) { notes = append(notes, s) }}
		sum, err := (&migrate.Runner{Migrations: []migrate.Migration{m}}).Run(ctx, 0, true)
		if err != nil || sum.Exit != 0 {
			t.Fatalf("run (force %v): exit %d, %v, %v", force, sum.Exit, err, sum.RowErrors)
		}
		return m, notes
	}
	run(false)
	st, err := placementdb.LoadPlacementState(ctx, dbs.Placement)
	if err != nil {
		t.Fatal(err)
	}
	ownedUUID := st.ByName[*owned.HypervisorHostname]
	// What nova-compute's first update adds (ResourceTracker._get_traits).
	ps := placementdb.New(dbs.Placement)
	gen, traits, err := ps.ProviderTraits(ctx, ownedUUID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ps.SetProviderTraits(ctx, ownedUUID, gen, append(traits, "COMPUTE_NET_ATTACH_INTERFACE", "COMPUTE_VOLUME_EXTEND")); err != nil {
		t.Fatal(err)
	}
	// Both rows change: the owned node's nova-compute reports what it
	// reports; rpctl would write the row's new value.
	for _, n := range []nova.ComputeNode{owned, free} {
		if _, err := dbs.Cells[0].ExecContext(ctx, `UPDATE compute_nodes SET vcpus = vcpus + 4 WHERE id = ?`, n.ID); err != nil {
			t.Fatal(err)
		}
	}
	before, err := placementdb.LoadPlacementState(ctx, dbs.Placement)
	if err != nil {
		t.Fatal(err)
	}
	m, notes := run(false)
	after, err := placementdb.LoadPlacementState(ctx, dbs.Placement)
	if err != nil {
		t.Fatal(err)
	}
	ob, oa := before.Providers[ownedUUID], after.Providers[ownedUUID]
	if oa.Generation != ob.Generation || !oa.Inventories["VCPU"].Equal(ob.Inventories["VCPU"]) {
		t.Errorf("owned %s changed: generation %d -> %d, VCPU %+v -> %+v", oa.Name, ob.Generation, oa.Generation, ob.Inventories["VCPU"], oa.Inventories["VCPU"])
	}
	fu := st.ByName[*free.HypervisorHostname]
	if got := after.Providers[fu].Inventories["VCPU"].Total; got != free.VCPUs+4 {
		t.Errorf("free %s: VCPU total %d, want %d", *free.HypervisorHostname, got, free.VCPUs+4)
	}
	left := m.LeftAlone()
	if len(left) != 1 || left[0].UUID != ownedUUID || left[0].Owner != "COMPUTE_NET_ATTACH_INTERFACE" {
		t.Fatalf("left alone: %+v", left)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "("+*owned.HypervisorHostname+")") ||
		!strings.Contains(notes[0], "owned by nova-compute (COMPUTE_NET_ATTACH_INTERFACE on its provider): left alone") ||
		!strings.Contains(notes[0], "VCPU total") {
		t.Errorf("notes: %q", notes)
	}
	// --force: the owned node is written, and the change said first.
	_, notes = run(true)
	forced, err := placementdb.LoadPlacementState(ctx, dbs.Placement)
	if err != nil {
		t.Fatal(err)
	}
	if got := forced.Providers[ownedUUID].Inventories["VCPU"].Total; got != owned.VCPUs+4 {
		t.Errorf("--force: VCPU total %d, want %d", got, owned.VCPUs+4)
	}
	if !forced.Providers[ownedUUID].Traits["COMPUTE_NET_ATTACH_INTERFACE"] {
		t.Errorf("--force removed nova-compute's traits: %v", forced.Providers[ownedUUID].Traits)
	}
	want := "VCPU total " + itoa(owned.VCPUs) + "->" + itoa(owned.VCPUs+4)
	if len(notes) != 1 || !strings.Contains(notes[0], "overwriting (--force)") || !strings.Contains(notes[0], want) {
		t.Errorf("--force notes: %q, want one with %q", notes, want)
	}
	// Nothing differs any more: neither run writes or says anything.
	for _, force := range []bool{false, true} {
		if m, notes := run(force); m.Pending() != 0 || len(notes) != 0 || len(m.LeftAlone()) != 0 {
			t.Errorf("re-run (force %v): %d pending, notes %q", force, m.Pending(), notes)
		}
	}
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }
