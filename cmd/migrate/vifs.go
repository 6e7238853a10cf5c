package migrate

import (
	"context"
	"fmt"

	"github.com/rpctl/rpctl/cmd/internal/cmdutil"
	"github.com/rpctl/rpctl/migrate"
	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/stores"
)

// vifListMigration is Nova 26's fill_virtual_interface_list.
func vifListMigration() migrationSpec {
	return migrationSpec{
		Name:  "vif-list",
		Rows:  []string{migrate.FillVIFListName},
		Order: 21, // Nova's order: after migrate_empty_ratio, before populate_user_id
		Short: "Rebuild virtual_interfaces from the instances' info caches as Nova 26 does (fill_virtual_interface_list)",
		Long: `In every cell of cell_mappings (id order, cell0 included), from the cell's marker on, up to
--max-count live instances (by created_at, id) are checked: one whose live virtual_interfaces
rows are fewer than the VIFs of its instance_info_caches.network_info (a pre-Newton
instance), or in another order, gets them rebuilt from the cache (the old rows soft-deleted,
tags kept by port). The marker, as Nova keeps it, is a virtual_interfaces row of the fake
instance 00000000-0000-0000-0000-000000000000 (created deleted in the cell, as Nova does);
each batch goes on from the last instance listed. This is Nova 26's
fill_virtual_interface_list (nova/objects/virtual_interface.py); the summary row keeps its
name (found: the instances with VIFs in their cache; completed: those rebuilt). An
instance whose network_info is not a JSON list of VIFs is skipped as a bad row (Nova's
migration fails there at every batch). Without an API database the step is skipped.`,
		Need: storage.NeedCells,
		Build: func(ctx context.Context, f *cmdutil.Factory, dbs *storage.Databases, o *MigrateOptions) ([]migrate.Migration, error) {
			if dbs.API == nil {
				fmt.Fprintf(f.IO.ErrOut, "%s: skipped: no Nova API database configured (its cell_mappings list the cells)\n", migrate.FillVIFListName)
				return nil, nil
			}
			return []migrate.Migration{&migrate.FillVIFList{API: stores.InstanceMappingAPI(dbs.API), Cells: stores.VIFCells(dbs, len(o.Cells) == 0)}}, nil
		},
		DryRun: skipDryRun(migrate.FillVIFListName),
	}
}
