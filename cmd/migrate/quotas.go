package migrate

import (
	"context"
	"fmt"

	"github.com/rpctl/rpctl/cmd/internal/cmdutil"
	"github.com/rpctl/rpctl/migrate"
	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/stores"
)

// quotasMigration is Nova 26's migrate_quota_limits_to_api_db and
// migrate_quota_classes_to_api_db.
func quotasMigration() migrationSpec {
	return migrationSpec{
		Name:  "quotas",
		Rows:  []string{migrate.QuotaLimitsName, migrate.QuotaClassesName},
		Order: 11, // Nova's order: first of its online migrations
		Short: "Move quota limits and classes from the cells to the API database as Nova 26 does",
		Long: `Two of Nova 26's online migrations, in its order: migrate_quota_limits_to_api_db (each live
row of a cell's quotas, then of its project_user_quotas, is created in the API database and
soft-deleted in the cell; a per-user limit of fixed_ips, floating_ips or networks becomes a
project limit, as Nova's PER_PROJECT_QUOTAS) and migrate_quota_classes_to_api_db (the same for
quota_classes). nova/objects/quotas.py. A limit or class the API database already has is kept
as it is there and the cell's row soft-deleted (Nova rolls its whole batch back then, and
loses the batch's other rows). The summary rows keep Nova's names. They run over every cell
(or --cell) with one --max-count budget; nova-manage runs them on [database] connection's
cell only. Without an API database the step is skipped.`,
		Need: storage.NeedCells,
		Build: func(ctx context.Context, f *cmdutil.Factory, dbs *storage.Databases, o *MigrateOptions) ([]migrate.Migration, error) {
			if dbs.API == nil {
				fmt.Fprintf(f.IO.ErrOut, "%s, %s: skipped: no Nova API database configured (the quotas move there)\n", migrate.QuotaLimitsName, migrate.QuotaClassesName)
				return nil, nil
			}
			api, cells := stores.QuotaAPI(dbs.API), stores.QuotaCells(dbs.Cells)
			return []migrate.Migration{&migrate.QuotaLimits{API: api, Cells: cells}, &migrate.QuotaClasses{API: api, Cells: cells}}, nil
		},
		DryRun: skipDryRun(migrate.QuotaLimitsName + ", " + migrate.QuotaClassesName),
	}
}
