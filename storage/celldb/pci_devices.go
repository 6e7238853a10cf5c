package celldb

import (
	"context"
	"database/sql"

	"github.com/rpctl/rpctl/internal/nova"
	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/internal/sqlutil"
)

// PCIDevices implements migrate.Cell: the live pci_devices rows of the live
// compute nodes, by compute node id, in id order (the order Nova's PCI
// tracker lists them).
func (c *Cell) PCIDevices(ctx context.Context) (map[int64][]nova.PCIDevice, error) {
	db := c.DB
	rows, err := db.QueryContext(ctx, "SELECT p.id, p.compute_node_id, p.address, p.vendor_id, p.product_id, p.dev_type, p.status, p.instance_uuid, p.numa_node, p.parent_addr "+
		"FROM pci_devices p JOIN compute_nodes ON compute_nodes.id = p.compute_node_id "+
		"WHERE p.deleted = 0 AND compute_nodes.deleted = 0 ORDER BY p.id")
	if err != nil {
		return nil, db.Errorf("read pci_devices: %w", storage.CleanError(err))
	}
	defer rows.Close()
	out := map[int64][]nova.PCIDevice{}
	for rows.Next() {
		var d nova.PCIDevice
		var inst, parent sql.NullString
		var numa sql.NullInt64
		if err := rows.Scan(&d.ID, &d.ComputeNodeID, &d.Address, &d.VendorID, &d.ProductID, &d.DevType, &d.Status, &inst, &numa, &parent); err != nil {
			return nil, db.Errorf("read pci_devices: %w", storage.CleanError(err))
		}
		d.InstanceUUID, d.ParentAddr, d.NUMANode = sqlutil.StrPtr(inst), sqlutil.StrPtr(parent), sqlutil.IntPtr(numa)
		out[d.ComputeNodeID] = append(out[d.ComputeNodeID], d)
	}
	if err := rows.Err(); err != nil {
		return nil, db.Errorf("read pci_devices: %w", storage.CleanError(err))
	}
	return out, nil
}
