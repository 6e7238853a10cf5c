package migrate

import (
	"context"

	"github.com/rpctl/rpctl/cmd/internal/cmdutil"
	"github.com/rpctl/rpctl/migrate"
	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/stores"
)

// missingAZMigration is Nova 26's populate_missing_availability_zones.
func missingAZMigration() migrationSpec {
	return migrationSpec{
		Name:  "availability-zones",
		Rows:  []string{migrate.MissingAZName},
		Order: 14, // Nova's order: before populate_queued_for_delete
		Short: "Fill instances' missing availability zones as Nova 26 does (populate_missing_availability_zones)",
		Long: `Each instance (deleted ones included) with a host and a NULL availability_zone gets its
host's zone: the availability_zone metadata of the first aggregate (lowest id) holding the
host, else [DEFAULT] default_availability_zone ("nova") from --config-file. Instances
without a host are left alone. This is Nova 26's populate_missing_availability_zones
(nova/objects/instance.py); the summary row keeps its name. It runs over every cell (or
--cell) with one --max-count budget; nova-manage runs it on [database] connection's cell
only. Without an API database every host is in the default zone.`,
		Need: storage.NeedCells,
		Build: func(ctx context.Context, f *cmdutil.Factory, dbs *storage.Databases, o *MigrateOptions) ([]migrate.Migration, error) {
			opts, err := f.Options()
			if err != nil {
				return nil, err
			}
			return []migrate.Migration{&migrate.MissingAZ{Cells: stores.AZCells(dbs.Cells), API: stores.AZAggregates(dbs.API), Default: opts.DefaultAvailabilityZone}}, nil
		},
		DryRun: skipDryRun(migrate.MissingAZName),
	}
}
