package migrate_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/rpctl/rpctl/internal/config"
	"github.com/rpctl/rpctl/internal/nova"
	"github.com/rpctl/rpctl/migrate"
	"github.com/rpctl/rpctl/samplecloud"
	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/celldb"
	"github.com/rpctl/rpctl/storage/placementdb"
)

// corruption is one kind of bad legacy row: the columns a test sets on an
// otherwise good node, and the column the migration must name.
type corruption struct {
	name   string
	set    map[string]any // column -> value; dupHost takes the first node's hostname
	field  string
	sqlite bool // only SQLite can store it (MariaDB's INT/FLOAT/varchar(255) columns refuse it)
}

const dupHost = "<first node's hostname>"

var corruptions = []corruption{
	{name: "pci_stats not JSON", set: map[string]any{"pci_stats": `[{"count"`}, field: "pci_stats"},
	{name: "pci_stats a JSON string", set: map[string]any{"pci_stats": `"eight VFs"`}, field: "pci_stats"},
	{name: "pci_stats OVO without data", set: map[string]any{"pci_stats": `{"nova_object.name": "PciDevicePoolList", "nova_object.version": "1.1"}`}, field: "pci_stats"},
	{name: "pci_stats count not a number", set: map[string]any{"pci_stats": `[{"count": "many", "dev_type": "type-VF"}]`}, field: "pci_stats"},
	{name: "pci_stats count 2^31", set: map[string]any{"pci_stats": `[{"count": 2147483648, "dev_type": "type-VF"}]`}, field: "pci_stats"},
	{name: "pci_stats counts summing past 2^31-1", set: map[string]any{"pci_stats": `[{"count": 2147483647, "dev_type": "type-VF"}, {"count": 1, "dev_type": "type-VF"}]`}, field: "pci_stats"},
	{name: "pci_stats negative count", set: map[string]any{"pci_stats": `[{"count": -4, "dev_type": "type-PCI"}]`}, field: "pci_stats"},
	{name: "numa_topology not JSON", set: map[string]any{"numa_topology": `{"cells": [`}, field: "numa_topology"},
	{name: "numa_topology a JSON list", set: map[string]any{"numa_topology": `[1, 2, 3]`}, field: "numa_topology"},
	{name: "numa_topology cell without memory", set: map[string]any{"numa_topology": `{"nova_object.name": "NUMATopology", "nova_object.version": "1.2", "nova_object.data": {"cells": [{"nova_object.name": "NUMACell", "nova_object.version": "1.5", "nova_object.data": {"cpuset": [0, 1]}}]}}`}, field: "numa_topology"},
	{name: "numa_topology memory 2^31", set: map[string]any{"numa_topology": `{"cells": [{"id": 0, "cpus": "0-3", "mem": {"total": 2147483648}}]}`}, field: "numa_topology"},
	{name: "numa_topology negative memory", set: map[string]any{"numa_topology": `{"cells": [{"id": 0, "cpus": "0-3", "mem": {"total": -1}}]}`}, field: "numa_topology"},
	{name: "extra_resources not JSON", set: map[string]any{"extra_resources": `{"fpga":`}, field: "extra_resources"},
	{name: "extra_resources a JSON list", set: map[string]any{"extra_resources": `["fpga"]`}, field: "extra_resources"},
	{name: "extra_resources fractional", set: map[string]any{"extra_resources": `{"fpga": 1.5}`}, field: "extra_resources"},
	{name: "extra_resources 2^31", set: map[string]any{"extra_resources": `{"fpga": 2147483648}`}, field: "extra_resources"},
	{name: "extra_resources negative", set: map[string]any{"extra_resources": `{"fpga": -2}`}, field: "extra_resources"},
	// Issue 37 row 3: class names longer than Placement's 255 (MariaDB's
	// error 1406 used to fail the run, 0 of 6 nodes migrated) or outside
	// its pattern.
	{name: "pci_stats resource_class 300 characters", set: map[string]any{"pci_stats": `[{"count": 2, "dev_type": "type-PCI", "vendor_id": "8086", "product_id": "1520", "resource_class": "` + strings.Repeat("G", 300) + `"}]`}, field: "pci_stats"},
	{name: "pci_stats resource_class only the prefix", set: map[string]any{"pci_stats": `[{"count": 2, "dev_type": "type-PCI", "resource_class": "custom_"}]`}, field: "pci_stats"},
	{name: "extra_resources class 300 characters", set: map[string]any{"extra_resources": `{"` + strings.Repeat("f", 300) + `": 1}`}, field: "extra_resources"},
	{name: "extra_resources names VCPU", set: map[string]any{"extra_resources": `{"VCPU": 4}`}, field: "extra_resources"},
	{name: "vcpus negative", set: map[string]any{"vcpus": -1}, field: "vcpus"},
	{name: "memory_mb negative", set: map[string]any{"memory_mb": -1}, field: "memory_mb"},
	{name: "local_gb negative", set: map[string]any{"local_gb": -1}, field: "local_gb"},
	{name: "vcpus 2^31", set: map[string]any{"vcpus": int64(1) << 31}, field: "vcpus", sqlite: true},
	{name: "memory_mb 2^31", set: map[string]any{"memory_mb": int64(1) << 31}, field: "memory_mb", sqlite: true},
	{name: "local_gb 2^31", set: map[string]any{"local_gb": int64(1) << 31}, field: "local_gb", sqlite: true},
	{name: "cpu_allocation_ratio negative", set: map[string]any{"cpu_allocation_ratio": -1.0}, field: "cpu_allocation_ratio"},
	{name: "ram_allocation_ratio negative", set: map[string]any{"ram_allocation_ratio": -0.5}, field: "ram_allocation_ratio"},
	{name: "disk_allocation_ratio beyond FLOAT", set: map[string]any{"disk_allocation_ratio": 1e39}, field: "disk_allocation_ratio", sqlite: true},
	{name: "hypervisor_hostname empty", set: map[string]any{"hypervisor_hostname": ""}, field: "hypervisor_hostname"},
	{name: "hypervisor_hostname NULL", set: map[string]any{"hypervisor_hostname": nil}, field: "hypervisor_hostname"},
	{name: "hypervisor_hostname 255 characters", set: map[string]any{"hypervisor_hostname": strings.Repeat("h", 255)}, field: "hypervisor_hostname"},
	{name: "hypervisor_hostname 300 characters", set: map[string]any{"hypervisor_hostname": strings.Repeat("x", 300)}, field: "hypervisor_hostname", sqlite: true},
	{name: "hypervisor_hostname not UTF-8", set: map[string]any{"hypervisor_hostname": "cmp\xff\xfe"}, field: "hypervisor_hostname", sqlite: true},
	{name: "hypervisor_hostname duplicate", set: map[string]any{"hypervisor_hostname": dupHost}, field: "hypervisor_hostname"},
	{name: "uuid not a uuid", set: map[string]any{"uuid": "not-a-uuid"}, field: "uuid"},
	{name: "uuid without hyphens", set: map[string]any{"uuid": "11111111222243338444555555555555"}, field: "uuid"},
	{name: "uuid empty", set: map[string]any{"uuid": ""}, field: "uuid"},
}

// corruptCloud writes a sample cloud and corrupts its last live nodes, one
// kind each; it returns the corrupted ids by kind.
func corruptCloud(t *testing.T, cell *storage.DB, mysql bool) (map[int64]corruption, []nova.ComputeNode) {
	t.Helper()
	ctx := context.Background()
	nodes, err := celldb.ListComputeNodes(ctx, cell, false)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []corruption
	for _, c := range corruptions {
		if !c.sqlite || !mysql {
			kinds = append(kinds, c)
		}
	}
	if len(kinds) < 25 {
		t.Fatalf("only %d kinds of bad rows", len(kinds))
	}
	if len(nodes) < len(kinds)+10 {
		t.Fatalf("%d nodes, too few for %d corruptions and good nodes", len(nodes), len(kinds))
	}
	bad := map[int64]corruption{}
	for i, c := range kinds {
		n := nodes[len(nodes)-1-i]
		for col, v := range c.set {
			if v == dupHost {
				v = *nodes[0].HypervisorHostname
			}
			if _, err := cell.ExecContext(ctx, cell.Rebind(fmt.Sprintf("UPDATE compute_nodes SET %s = ? WHERE id = ?", col)), v, n.ID); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
		}
		bad[n.ID] = c
	}
	return bad, nodes
}

// TestCorruptedRows: every kind of bad legacy row is named (cell, id,
// hostname, column, value) and skipped, in --dry-run's plan as in the run;
// every good row is migrated; a re-run changes nothing. On SQLite and
// MariaDB alike.
// With --newton-classes the pools' classes are written too (a
// 300-character one used to fail the whole run on MariaDB with error 1406).
func TestCorruptedRows(t *testing.T) {
	for _, newton := range []bool{false, true} {
		suffix := map[bool]string{false: "", true: "-newton-classes"}[newton]
		t.Run("sqlite"+suffix, func(t *testing.T) {
			dbs, _ := sqliteCloud(t, samplecloud.Options{Nodes: 60, Seed: 21})
			corruptedRowsCase(t, dbs.Cells[0], dbs.Placement, false, newton)
		})
		t.Run("mariadb"+suffix, func(t *testing.T) {
			cell, placement, _, _, _ := sampleCloud(t, samplecloud.Options{Nodes: 60, Seed: 21})
			corruptedRowsCase(t, cell, placement, true, newton)
		})
	}
}

func corruptedRowsCase(t *testing.T, cell, placement *storage.DB, mysql, newton bool) {
	ctx := context.Background()
	bad, _ := corruptCloud(t, cell, mysql)
	cfg := migrate.InventoryConfig{Layout: migrate.LayoutNested, Ratios: config.DefaultOptions().Ratios, NewtonClasses: newton}

	// --dry-run's plan names every bad row with its column.
	plan, err := migrate.PlanInventory(ctx, cellStores(cell), placementStore(placement), &cfg)
	if err != nil {
		t.Fatal(err)
	}
	planned := map[int64]bool{}
	for _, pn := range plan.Nodes {
		c, isBad := bad[pn.NodeID]
		if !isBad {
			if pn.RowError() != nil {
				t.Errorf("good node %d planned as bad: %v", pn.NodeID, pn.RowError())
			}
			continue
		}
		planned[pn.NodeID] = true
		if pn.Field != c.field || pn.Value == "" || pn.Cell != cell.Name {
			t.Errorf("%s: plan names field %q value %q cell %q, want field %s (%s)", c.name, pn.Field, pn.Value, pn.Cell, c.field, pn.Error)
		}
	}
	for id, c := range bad {
		if !planned[id] {
			t.Errorf("%s (node %d) is not in the plan as a bad row", c.name, id)
		}
	}

	m := &migrate.Inventory{Cells: cellStores(cell), Placement: placementStore(placement), Config: cfg, Parallel: 2, GroupSize: 8}
	sum, err := (&migrate.Runner{Migrations: []migrate.Migration{m}, Batch: 50}).Run(ctx, 0, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Errors) > 0 {
		t.Fatalf("unexpected failures: %v", sum.Errors)
	}
	if sum.Exit != 2 || len(sum.RowErrors) != len(bad) {
		t.Fatalf("exit %d with %d row errors, want 2 and %d", sum.Exit, len(sum.RowErrors), len(bad))
	}
	for _, re := range sum.RowErrors {
		c, ok := bad[re.ID]
		var fe *migrate.FieldError
		switch {
		case !ok:
			t.Errorf("good node skipped: %v", re)
		case !errors.As(re.Err, &fe) || fe.Field != c.field:
			t.Errorf("%s: row error does not name %s: %v", c.name, c.field, re)
		case re.Cell != cell.Name || !strings.Contains(re.Error(), fmt.Sprintf("id=%d", re.ID)):
			t.Errorf("%s: row error does not name cell and id: %v", c.name, re)
		}
		if !utf8.ValidString(re.Error()) || strings.ContainsRune(re.Error(), '\n') || len(re.Error()) > 600 {
			t.Errorf("%s: message not one short clean line: %q", c.name, re.Error())
		}
	}
	// Every good node has its provider, under its own uuid and name.
	nodes, err := celldb.ListComputeNodes(ctx, cell, false)
	if err != nil {
		t.Fatal(err)
	}
	st, err := placementdb.LoadPlacementState(ctx, placement)
	if err != nil {
		t.Fatal(err)
	}
	good := 0
	for _, n := range nodes {
		if _, isBad := bad[n.ID]; isBad {
			if n.UUID != nil && st.Providers[*n.UUID] != nil && n.HypervisorHostname != nil && st.Providers[*n.UUID].Name == *n.HypervisorHostname {
				t.Errorf("bad node %d (%s) was migrated", n.ID, bad[n.ID].name)
			}
			continue
		}
		good++
		if n.UUID == nil || st.Providers[*n.UUID] == nil || st.Providers[*n.UUID].Name != *n.HypervisorHostname {
			t.Errorf("good node %d has no provider", n.ID)
		}
	}
	if sum.Rows[0].Completed != good {
		t.Errorf("Completed %d, want the %d good nodes", sum.Rows[0].Completed, good)
	}
	// Nothing migrate.Placement would refuse was written.
	for _, p := range st.Providers {
		for rc, v := range p.Inventories {
			if v.Total < 1 || v.Total > migrate.PlacementMaxInt || v.MaxUnit > migrate.PlacementMaxInt || !migrate.CanonicalUUID().MatchString(p.UUID) || len([]rune(p.Name)) > migrate.PlacementMaxNameLen {
				t.Errorf("provider %s %s: %+v is beyond migrate.Placement's limits", p.Name, rc, v)
			}
		}
	}
	before := dumpPlacement(t, placement)
	m2 := &migrate.Inventory{Cells: cellStores(cell), Placement: placementStore(placement), Config: cfg, Parallel: 2}
	sum2, err := (&migrate.Runner{Migrations: []migrate.Migration{m2}}).Run(ctx, 0, true)
	if err != nil {
		t.Fatal(err)
	}
	if m2.Pending() != len(bad) || sum2.Rows[0].Completed != 0 || sum2.Exit != 2 {
		t.Errorf("re-run: %d pending, %d completed, exit %d; want only the %d bad rows, 0, 2", m2.Pending(), sum2.Rows[0].Completed, sum2.Exit, len(bad))
	}
	if after := dumpPlacement(t, placement); after != before {
		t.Error("re-run changed Placement")
	}
	t.Logf("%d kinds of bad rows named and skipped, %d good nodes migrated", len(bad), good)
}
