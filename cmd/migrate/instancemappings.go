package migrate

import (
	"context"
	"fmt"

	"github.com/rpctl/rpctl/cmd/internal/cmdutil"
	"github.com/rpctl/rpctl/migrate"
	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/stores"
)

// queuedForDeleteMigration is Nova 26's populate_queued_for_delete.
func queuedForDeleteMigration() migrationSpec {
	return migrationSpec{
		Name:  "queued-for-delete",
		Rows:  []string{migrate.QueuedForDeleteName},
		Order: 15, // Nova's order: before migrate_empty_ratio
		Short: "Fill instance_mappings.queued_for_delete as Nova 26 does (populate_queued_for_delete)",
		Long: `Each instance mapping of the API database whose queued_for_delete is NULL gets True when
its instance, in the mapping's cell, is deleted or soft-deleted, else False (a live instance,
or none). Cells in cell_mappings' id order, cell0 included; --max-count bounds the mappings
read. Mappings without a cell are left alone. This is Nova 26's populate_queued_for_delete
(nova/objects/instance_mapping.py); the summary row keeps its name. Without an API database
the step is skipped.`,
		Need:   storage.NeedCells,
		Build:  buildInstanceMappings(migrate.QueuedForDeleteName),
		DryRun: skipDryRun(migrate.QueuedForDeleteName),
	}
}

// userIDMigration is Nova 26's populate_user_id.
func userIDMigration() migrationSpec {
	return migrationSpec{
		Name:  "user-id",
		Rows:  []string{migrate.UserIDName},
		Order: 22, // Nova's order: after migrate_empty_ratio
		Short: "Fill instance_mappings.user_id as Nova 26 does (populate_user_id)",
		Long: `Each instance mapping of the API database without a user_id (but the marker
fill_virtual_interface_list makes) takes the user_id of its instance in the mapping's cell,
deleted and soft-deleted instances included. A mapping without a cell, or whose instance
is not in its cell, is counted but left (Nova says they "were not migratable"). An
instance whose own user_id is NULL is a bad row (Nova would copy the NULL and find the
mapping again at every batch). This is Nova 26's populate_user_id
(nova/objects/instance_mapping.py); the summary row keeps its name. Without an API
database the step is skipped.`,
		Need:   storage.NeedCells,
		Build:  buildInstanceMappings(migrate.UserIDName),
		DryRun: skipDryRun(migrate.UserIDName),
	}
}

func buildInstanceMappings(name string) func(ctx context.Context, f *cmdutil.Factory, dbs *storage.Databases, o *MigrateOptions) ([]migrate.Migration, error) {
	return func(ctx context.Context, f *cmdutil.Factory, dbs *storage.Databases, o *MigrateOptions) ([]migrate.Migration, error) {
		if dbs.API == nil {
			fmt.Fprintf(f.IO.ErrOut, "%s: skipped: no Nova API database configured (instance mappings live there)\n", name)
			return nil, nil
		}
		api, cells := stores.InstanceMappingAPI(dbs.API), stores.InstanceCells(dbs, len(o.Cells) == 0)
		if name == migrate.QueuedForDeleteName {
			return []migrate.Migration{&migrate.QueuedForDelete{API: api, Cells: cells}}, nil
		}
		warn := func(s string) { fmt.Fprintf(f.IO.ErrOut, "%s: %s\n", name, s) }
		return []migrate.Migration{&migrate.UserID{API: api, Cells: cells, Warn: warn}}, nil
	}
}

// skipDryRun is the dry run of a migration that cannot list its changes yet:
// it says so and writes nothing.
func skipDryRun(name string) func(ctx context.Context, f *cmdutil.Factory, dbs *storage.Databases, o *MigrateOptions) (int, error) {
	return func(ctx context.Context, f *cmdutil.Factory, dbs *storage.Databases, o *MigrateOptions) (int, error) {
		fmt.Fprintf(f.IO.ErrOut, "%s: --dry-run does not list this step's changes; nothing written\n", name)
		return 0, nil
	}
}
