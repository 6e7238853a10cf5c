package migrate

import (
	"context"

	"github.com/spf13/pflag"

	"github.com/rpctl/rpctl/cmd/internal/cmdutil"
	"github.com/rpctl/rpctl/cmd/internal/shared"
	"github.com/rpctl/rpctl/migrate"
	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/stores"
)

// computeIDsMigration is Nova 31's populate_instance_compute_id (2023.2
// on: migrate.OnlineOf lists it for 2023.2 to 2025.1, not for Zed or 2023.1).
func computeIDsMigration() migrationSpec {
	return migrationSpec{
		Name:  "compute-ids",
		Rows:  []string{migrate.InstanceComputeIDName},
		Order: 24, // Nova's order: last, after populate_dev_uuids
		Short: "Give instances their compute node's id as Nova 31 does (populate_instance_compute_id, --release 2023.2 on)",
		Long: `Each instance (deleted ones included) whose compute_id is NULL gets the id of the compute
node its host and node name, as Nova 31's populate_instance_compute_id
(nova/objects/instance.py) does: the lowest id among the compute_nodes rows, deleted ones
included, with that host and hypervisor_hostname. An instance whose node is not found (no
host, or its node gone) is left as Nova leaves it: counted in total_needed at every batch,
never completed. The summary row keeps Nova's name. It runs over every cell (or --cell) with
one --max-count budget; nova-manage runs it on [database] connection's cell only.

Nova 28 (2023.2) added instances.compute_id and this migration; Nova 29 to 31 run the same
code. It runs with --release 2023.2, 2024.1, 2024.2 and 2025.1 (proven against Nova 31; the
others by their nova/cmd/manage.py); with --release zed or 2023.1 this subcommand is
refused and migrate all leaves it out.

While a compute node has a NULL uuid Nova 31's own migration fails, its whole batch
("Error attempting to run populate_instance_compute_id", exit 2) until the node has one.
rpctl skips the instances on such a node as bad rows naming it (exit 2) and migrates the
others; rpctl migrate inventory gives the node its uuid, and migrate all runs it first.`,
		Need: storage.NeedCells,
		AddFlags: func(fs *pflag.FlagSet, mf *migrationFlags) {
			shared.AddReleaseFlag(fs, &mf.ratios.release, "whose online migrations run")
		},
		Build: func(ctx context.Context, f *cmdutil.Factory, dbs *storage.Databases, o *MigrateOptions) ([]migrate.Migration, error) {
			return []migrate.Migration{&migrate.InstanceComputeIDs{Cells: stores.ComputeIDCells(dbs.Cells)}}, nil
		},
		DryRun: skipDryRun(migrate.InstanceComputeIDName),
	}
}
