package migrate

import (
	"context"
	"fmt"

	"github.com/rpctl/rpctl/cmd/internal/cmdutil"
	"github.com/rpctl/rpctl/migrate"
	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/stores"
)

// placementOnlineMigration is placement-manage db online_data_migrations'
// set_root_provider_ids and create_incomplete_consumers (Placement 8.0.0).
func placementOnlineMigration() migrationSpec {
	return migrationSpec{
		Name:  "placement",
		Rows:  []string{migrate.SetRootProviderIDsName, migrate.CreateIncompleteConsumersName},
		Order: 5, // before rpctl writes to Placement: its own data first
		Short: "Run placement-manage's online data migrations (set_root_provider_ids, create_incomplete_consumers)",
		Long: `Placement 8.0.0's own online migrations (placement/cmd/manage.py), in its order, on the
Placement database: set_root_provider_ids (each provider without a root_provider_id becomes
its own root; placement/objects/resource_provider.py) and create_incomplete_consumers (each
consumer of allocations without a consumers row gets one, of the project and user
[placement] incomplete_consumer_project_id and incomplete_consumer_user_id name, all zeros
by default, whose projects and users rows it creates; placement/objects/consumer.py). The
summary rows keep Placement's names. migrate all runs them first, before anything rpctl
writes to Placement.`,
		Need: storage.NeedPlacement,
		Build: func(ctx context.Context, f *cmdutil.Factory, dbs *storage.Databases, o *MigrateOptions) ([]migrate.Migration, error) {
			if dbs.Placement == nil {
				// nova.conf alone: the API shows neither a provider without a
				// root nor allocations without a consumer row, so these
				// steps fail alone, as placement-manage needs placement.conf.
				return []migrate.Migration{
					placementNeedsDatabase{name: migrate.SetRootProviderIDsName, why: placementOnlineNeedsDatabase},
					placementNeedsDatabase{name: migrate.CreateIncompleteConsumersName, why: placementOnlineNeedsDatabase},
				}, nil
			}
			opts, err := f.Options()
			if err != nil {
				return nil, err
			}
			p := stores.PlacementOnline(dbs.Placement)
			return []migrate.Migration{
				&migrate.SetRootProviderIDs{Placement: p},
				&migrate.CreateIncompleteConsumers{Placement: p, Project: opts.IncompleteConsumerProject, User: opts.IncompleteConsumerUser},
			}, nil
		},
		DryRun: func(ctx context.Context, f *cmdutil.Factory, dbs *storage.Databases, o *MigrateOptions) (int, error) {
			if dbs.Placement == nil {
				// As the real run: these two fail, the others run (exit 2).
				for _, name := range []string{migrate.SetRootProviderIDsName, migrate.CreateIncompleteConsumersName} {
					fmt.Fprintf(f.IO.ErrOut, "%s: would fail: %s\n", name, placementOnlineNeedsDatabase)
				}
				return 2, nil
			}
			return skipDryRun(migrate.SetRootProviderIDsName+", "+migrate.CreateIncompleteConsumersName)(ctx, f, dbs, o)
		},
	}
}

// placementOnlineNeedsDatabase is why placement-manage's migrations do not
// run through the Placement API.
const placementOnlineNeedsDatabase = "placement-manage's online migrations read and write Placement's database (the API lists neither a provider without root_provider_id nor allocations without a consumer row): give placement.conf with [placement_database] connection, or --placement-db"
