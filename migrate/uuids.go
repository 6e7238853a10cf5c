package migrate

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// The uuid migrations' rows in the summary table, named as nova-manage names
// them.
const (
	MigrationUUIDName = "migration_migrate_to_uuid"
	BDMUUIDName       = "populate_uuids"
	PCIDevUUIDName    = "populate_dev_uuids"
)

// UUIDTable says which of the uuid migrations a FillUUIDs is.
type UUIDTable int

// The tables of the uuid migrations.
const (
	MigrationsTable UUIDTable = iota // migration_migrate_to_uuid
	BDMTable                         // populate_uuids
	PCIDevicesTable                  // populate_dev_uuids
)

// UUIDCell is a cell database's side of the uuid migrations; storage/celldb
// implements it.
type UUIDCell interface {
	Name() string
	// MigrationsWithoutUUID returns the ids of up to limit live migrations
	// rows (deleted = 0) with a NULL uuid, in the order the database gives
	// them (Nova's model_query, without ORDER BY).
	MigrationsWithoutUUID(ctx context.Context, limit int) ([]int64, error)
	// BDMsWithoutUUID returns the ids of up to limit block_device_mapping
	// rows, deleted ones included, with a NULL uuid (Nova's session query,
	// without a deleted filter or ORDER BY).
	BDMsWithoutUUID(ctx context.Context, limit int) ([]int64, error)
	// PCIDevicesWithoutUUID is the same over pci_devices (Nova's
	// PciDevice.populate_dev_uuids: deleted rows included).
	PCIDevicesWithoutUUID(ctx context.Context, limit int) ([]int64, error)
	// SetMigrationUUIDs and SetBDMUUIDs set uuid (and updated_at) of the
	// rows by id whose uuid is still NULL, and return how many they changed.
	SetMigrationUUIDs(ctx context.Context, uuids map[int64]string, now time.Time) (int, error)
	SetBDMUUIDs(ctx context.Context, uuids map[int64]string, now time.Time) (int, error)
	SetPCIDeviceUUIDs(ctx context.Context, uuids map[int64]string, now time.Time) (int, error)
}

// FillUUIDs is one of Nova 26's uuid migrations, run over every cell with
// one budget (nova-manage runs them on [database] connection's cell only):
// migration_migrate_to_uuid (nova/db/main/api.py: every live migrations row
// without a uuid is read as a Migration object, whose _ensure_uuid saves a
// random one) or BlockDeviceMapping.populate_uuids
// (nova/objects/block_device.py: every block_device_mapping row without one,
// deleted ones too, gets one through update_on_match) or
// PciDevice.populate_dev_uuids (nova/objects/pci_device.py: the same over
// pci_devices). All report every
// row read as found and done (a row another writer filled first counts:
// Nova then reads the winner's uuid).
type FillUUIDs struct {
	Table UUIDTable
	Cells []UUIDCell
	Now   func() time.Time
}

// Name implements Migration.
func (m *FillUUIDs) Name() string {
	switch m.Table {
	case BDMTable:
		return BDMUUIDName
	case PCIDevicesTable:
		return PCIDevUUIDName
	}
	return MigrationUUIDName
}

// Run implements Migration.
func (m *FillUUIDs) Run(ctx context.Context, count int) (found, done int, err error) {
	now := timeNow(m.Now)
	for _, cell := range m.Cells {
		if count-found <= 0 {
			break
		}
		list, set := cell.MigrationsWithoutUUID, cell.SetMigrationUUIDs
		switch m.Table {
		case BDMTable:
			list, set = cell.BDMsWithoutUUID, cell.SetBDMUUIDs
		case PCIDevicesTable:
			list, set = cell.PCIDevicesWithoutUUID, cell.SetPCIDeviceUUIDs
		}
		ids, err := list(ctx, count-found)
		if err != nil {
			return found, done, err
		}
		if len(ids) == 0 {
			continue
		}
		uuids := make(map[int64]string, len(ids))
		for _, id := range ids {
			uuids[id] = uuid.NewString()
		}
		if _, err := set(ctx, uuids, now); err != nil {
			return found, done, err
		}
		found += len(ids)
		done += len(ids)
	}
	return found, done, nil
}
