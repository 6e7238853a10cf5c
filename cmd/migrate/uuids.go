package migrate

import (
	"context"

	"github.com/rpctl/rpctl/cmd/internal/cmdutil"
	"github.com/rpctl/rpctl/migrate"
	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/stores"
)

// uuidsMigration is Nova 26's migration_migrate_to_uuid and
// BlockDeviceMapping.populate_uuids.
func uuidsMigration() migrationSpec {
	return migrationSpec{
		Name:  "uuids",
		Rows:  []string{migrate.MigrationUUIDName, migrate.BDMUUIDName},
		Order: 13, // Nova's order: before populate_missing_availability_zones
		Short: "Give migrations and block device mappings their missing uuids as Nova 26 does",
		Long: `Two of Nova 26's online migrations, in its order: migration_migrate_to_uuid (each live
migrations row with a NULL uuid gets a random one; nova/db/main/api.py) and populate_uuids
(each block_device_mapping row with a NULL uuid, deleted ones included, gets one;
BlockDeviceMapping.populate_uuids in nova/objects/block_device.py). updated_at is stamped as
Nova's ORM does; a row another writer gave a uuid first keeps it. The summary rows keep
Nova's names. They run over every cell (or --cell) with one --max-count budget; nova-manage
runs them on [database] connection's cell only.`,
		Need: storage.NeedCells,
		Build: func(ctx context.Context, f *cmdutil.Factory, dbs *storage.Databases, o *MigrateOptions) ([]migrate.Migration, error) {
			cells := stores.UUIDCells(dbs.Cells)
			return []migrate.Migration{&migrate.FillUUIDs{Cells: cells}, &migrate.FillUUIDs{Table: migrate.BDMTable, Cells: cells}}, nil
		},
		DryRun: skipDryRun(migrate.MigrationUUIDName + ", " + migrate.BDMUUIDName),
	}
}

// devUUIDsMigration is Nova 26's PciDevice.populate_dev_uuids.
func devUUIDsMigration() migrationSpec {
	return migrationSpec{
		Name:  "dev-uuids",
		Rows:  []string{migrate.PCIDevUUIDName},
		Order: 23, // Nova's order: last, after populate_user_id
		Short: "Give PCI devices their missing uuids as Nova 26 does (populate_dev_uuids)",
		Long: `Each pci_devices row with a NULL uuid, deleted ones included, gets a random one, as Nova
26's PciDevice.populate_dev_uuids (nova/objects/pci_device.py) does; updated_at is stamped,
a row another writer gave a uuid first keeps it. The summary row keeps Nova's name. It runs
over every cell (or --cell) with one --max-count budget; nova-manage runs it on [database]
connection's cell only.`,
		Need: storage.NeedCells,
		Build: func(ctx context.Context, f *cmdutil.Factory, dbs *storage.Databases, o *MigrateOptions) ([]migrate.Migration, error) {
			return []migrate.Migration{&migrate.FillUUIDs{Table: migrate.PCIDevicesTable, Cells: stores.UUIDCells(dbs.Cells)}}, nil
		},
		DryRun: skipDryRun(migrate.PCIDevUUIDName),
	}
}
