package celldb

import (
	"context"
	"reflect"
	"testing"

	"github.com/rpctl/rpctl/claims"
	"github.com/rpctl/rpctl/internal/nova"
	"github.com/rpctl/rpctl/storage"
)

// TestInstancePCIDevicesAndMigrations reads an instance's live devices
// and migrations (claims.PCICell) on both databases: soft-deleted rows and
// other instances' rows are not read.
func TestInstancePCIDevicesAndMigrations(t *testing.T) {
	onSampleCells(t, func(t *testing.T, ctx context.Context, db *storage.DB, _ []nova.ComputeNode) {
		for _, q := range []string{
			`INSERT INTO instances (id, uuid, deleted) VALUES (1, 'inst-a', 0)`,
			`INSERT INTO instances (id, uuid, deleted) VALUES (2, 'inst-b', 0)`,
			`INSERT INTO pci_devices (id, compute_node_id, address, product_id, vendor_id, dev_type, label, status, instance_uuid, parent_addr, numa_node, deleted)
				VALUES (1, 1, '0000:81:00.1', '154c', '8086', 'type-VF', 'l', 'allocated', 'inst-a', '0000:81:00.0', 0, 0)`,
			`INSERT INTO pci_devices (id, compute_node_id, address, product_id, vendor_id, dev_type, label, status, instance_uuid, parent_addr, numa_node, deleted)
				VALUES (2, 1, '0000:81:00.2', '154c', '8086', 'type-VF', 'l', 'allocated', 'inst-b', '0000:81:00.0', 0, 0)`,
			`INSERT INTO pci_devices (id, compute_node_id, address, product_id, vendor_id, dev_type, label, status, instance_uuid, deleted)
				VALUES (3, 1, '0000:3b:00.0', '1db4', '10de', 'type-PCI', 'l', 'allocated', 'inst-a', 0)`,
			`INSERT INTO pci_devices (id, compute_node_id, address, product_id, vendor_id, dev_type, label, status, instance_uuid, deleted)
				VALUES (4, 1, '0000:3c:00.0', '1db4', '10de', 'type-PCI', 'l', 'deleted', 'inst-a', 4)`,
			`INSERT INTO migrations (id, instance_uuid, source_compute, dest_compute, status, deleted) VALUES (1, 'inst-a', 'h1', 'h1', 'finished', 0)`,
			`INSERT INTO migrations (id, instance_uuid, source_compute, status, deleted) VALUES (2, 'inst-a', 'h1', 'error', 0)`,
			`INSERT INTO migrations (id, instance_uuid, source_compute, dest_compute, status, deleted) VALUES (3, 'inst-a', 'h1', 'h2', 'finished', 3)`,
			`INSERT INTO migrations (id, instance_uuid, source_compute, dest_compute, status, deleted) VALUES (4, 'inst-b', 'h1', 'h2', 'finished', 0)`,
		} {
			if _, err := db.ExecContext(ctx, q); err != nil {
				t.Fatal(err)
			}
		}
		c := &Cell{DB: db}
		devs, err := c.InstancePCIDevices(ctx, "inst-a")
		if err != nil {
			t.Fatal(err)
		}
		a, pf, numa := "inst-a", "0000:81:00.0", int64(0)
		want := []nova.PCIDevice{
			{ID: 1, ComputeNodeID: 1, Address: "0000:81:00.1", VendorID: "8086", ProductID: "154c", DevType: "type-VF", Status: "allocated", InstanceUUID: &a, NUMANode: &numa, ParentAddr: &pf},
			{ID: 3, ComputeNodeID: 1, Address: "0000:3b:00.0", VendorID: "10de", ProductID: "1db4", DevType: "type-PCI", Status: "allocated", InstanceUUID: &a},
		}
		if !reflect.DeepEqual(devs, want) {
			t.Fatalf("devices:\n got %+v\nwant %+v", devs, want)
		}
		ms, err := c.InstanceMigrations(ctx, "inst-a")
		if err != nil {
			t.Fatal(err)
		}
		h1 := "h1"
		wantM := []claims.InstanceMigration{{SourceCompute: &h1, DestCompute: &h1, Status: "finished"}, {SourceCompute: &h1, Status: "error"}}
		if !reflect.DeepEqual(ms, wantM) {
			t.Fatalf("migrations:\n got %+v\nwant %+v", ms, wantM)
		}
		if devs, err := c.InstancePCIDevices(ctx, "inst-none"); err != nil || len(devs) != 0 {
			t.Fatalf("no devices: got %v, %v", devs, err)
		}
	})
}
