package celldb

import (
	"context"
	"database/sql"

	"github.com/rpctl/rpctl/claims"
	"github.com/rpctl/rpctl/internal/nova"
	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/internal/sqlutil"
)

// PCIDevices implements migrate.Cell: the live pci_devices rows of the live
// compute nodes, by compute node id, in id order (the order Nova's PCI
// tracker lists them).
func (c *Cell) PCIDevices(ctx context.Context) (map[int64][]nova.PCIDevice, error) {
	devs, err := c.pciDevices(ctx, "JOIN compute_nodes ON compute_nodes.id = p.compute_node_id WHERE p.deleted = 0 AND compute_nodes.deleted = 0")
	if err != nil {
		return nil, err
	}
	out := map[int64][]nova.PCIDevice{}
	for _, d := range devs {
		out[d.ComputeNodeID] = append(out[d.ComputeNodeID], d)
	}
	return out, nil
}

// InstancePCIDevices implements claims.PCICell: the live pci_devices rows
// whose instance_uuid is uuid, in id order.
func (c *Cell) InstancePCIDevices(ctx context.Context, uuid string) ([]nova.PCIDevice, error) {
	return c.pciDevices(ctx, "WHERE p.deleted = 0 AND p.instance_uuid = ?", uuid)
}

// pciDevices reads pci_devices rows (alias p) after the FROM clause rest.
func (c *Cell) pciDevices(ctx context.Context, rest string, args ...any) ([]nova.PCIDevice, error) {
	db := c.DB
	rows, err := db.QueryContext(ctx, db.Rebind("SELECT p.id, p.compute_node_id, p.address, p.vendor_id, p.product_id, p.dev_type, p.status, p.instance_uuid, p.numa_node, p.parent_addr "+
		"FROM pci_devices p "+rest+" ORDER BY p.id"), args...)
	if err != nil {
		return nil, db.Errorf("read pci_devices: %w", storage.CleanError(err))
	}
	defer rows.Close()
	var out []nova.PCIDevice
	for rows.Next() {
		var d nova.PCIDevice
		var inst, parent sql.NullString
		var numa sql.NullInt64
		if err := rows.Scan(&d.ID, &d.ComputeNodeID, &d.Address, &d.VendorID, &d.ProductID, &d.DevType, &d.Status, &inst, &numa, &parent); err != nil {
			return nil, db.Errorf("read pci_devices: %w", storage.CleanError(err))
		}
		d.InstanceUUID, d.ParentAddr, d.NUMANode = sqlutil.StrPtr(inst), sqlutil.StrPtr(parent), sqlutil.IntPtr(numa)
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, db.Errorf("read pci_devices: %w", storage.CleanError(err))
	}
	return out, nil
}

// InstanceMigrations implements claims.PCICell: the instance's live
// migrations rows, in id order.
func (c *Cell) InstanceMigrations(ctx context.Context, uuid string) ([]claims.InstanceMigration, error) {
	db := c.DB
	rows, err := db.QueryContext(ctx, db.Rebind("SELECT source_compute, dest_compute, COALESCE(status, '') FROM migrations WHERE COALESCE(deleted, 0) = 0 AND instance_uuid = ? ORDER BY id"), uuid)
	if err != nil {
		return nil, db.Errorf("read migrations: %w", storage.CleanError(err))
	}
	defer rows.Close()
	var out []claims.InstanceMigration
	for rows.Next() {
		var src, dst sql.NullString
		var m claims.InstanceMigration
		if err := rows.Scan(&src, &dst, &m.Status); err != nil {
			return nil, db.Errorf("read migrations: %w", storage.CleanError(err))
		}
		m.SourceCompute, m.DestCompute = sqlutil.StrPtr(src), sqlutil.StrPtr(dst)
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, db.Errorf("read migrations: %w", storage.CleanError(err))
	}
	return out, nil
}
