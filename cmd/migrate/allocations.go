package migrate

import (
	"context"
	"fmt"

	"github.com/rpctl/rpctl/claims"
	"github.com/rpctl/rpctl/cmd/internal/cmdutil"
	"github.com/rpctl/rpctl/cmd/internal/shared"
	"github.com/rpctl/rpctl/migrate"
	"github.com/rpctl/rpctl/placementclient"
	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/placementdb"
)

func allocationsMigration() migrationSpec {
	return migrationSpec{
		Name:  "allocations",
		Rows:  []string{migrate.AllocationsName},
		Order: 30,
		Short: "Give every instance without an allocation the one heal_allocations would (after inventory)",
		Long: `Every live instance on a node, in no task state, whose consumer has no allocation in
Placement gets one built from its embedded flavor, exactly as rpctl claims heal (Nova's
heal_allocations) builds it: on its compute node's provider, or where the layout put the
resources (NUMA children, a sharing provider; see "rpctl claims heal --help"); an
allocation under the wrong project or user is fixed. Run it after "migrate inventory", which creates the providers.

As an online migration it heals at most --max-count instances per run (or batches until
done) and does not stop at an instance it cannot heal (no compute node record, a vGPU
request, no room in its tree: the row names the class and what to do): that one is
reported as a skipped row (exit code 2)
and the others go on. See "rpctl claims heal --help" for the rules.`,
		Need: storage.NeedCells | storage.NeedPlacement,
		// The PCI device allocations go where the hosts' own [pci]
		// config put the device providers.
		AddFlags: addComputeConfigDirFlag,
		Build: func(ctx context.Context, f *cmdutil.Factory, dbs *storage.Databases, o *MigrateOptions) ([]migrate.Migration, error) {
			pci, err := computeConfig(f, &o.flags)
			if err != nil {
				return nil, err
			}
			placement, err := claimsPlacement(ctx, f, dbs)
			if err != nil {
				return nil, err
			}
			// The bar of the instances looked at, across the runner's
			// batches (issue 35).
			prog := o.bar(f, migrate.AllocationsName, "instances")
			return []migrate.Migration{&migrate.Allocations{Batch: &claims.Batch{Cells: shared.ClaimsCells[claims.Cell](dbs.Cells), Placement: placement, PCI: pci, Progress: prog.UpdateDone}, Skipped: o.skipLog}}, nil
		},
		DryRun: func(ctx context.Context, f *cmdutil.Factory, dbs *storage.Databases, o *MigrateOptions) (int, error) {
			pci, err := computeConfig(f, &o.flags)
			if err != nil {
				return 0, err
			}
			placement, err := claimsPlacement(ctx, f, dbs)
			if err != nil {
				return 0, err
			}
			h := claims.Healer{Cells: shared.ClaimsCells[claims.Cell](dbs.Cells), Placement: placement, PCI: pci}
			res, err := h.Heal(ctx, claims.HealOptions{DryRun: true, DryRunOut: f.IO.Out})
			if err != nil {
				return 0, err
			}
			exit := 0
			if res.Message != "" {
				// heal_allocations would stop here; the migration skips
				// the instance and goes on.
				fmt.Fprintf(f.IO.ErrOut, "would skip %s: %s\n", migrate.AllocationsName, res.Message)
				exit = 2
			}
			would := 0
			for _, c := range res.Cells {
				would += c.DryRun
			}
			switch {
			case res.NoProvider > 0 && o.dryRunAll:
				fmt.Fprintf(f.IO.ErrOut, "%s: %d instances would be healed, and %d more on %s once the inventory step has created their compute nodes' providers (not listed above); nothing written (--dry-run)\n",
					migrate.AllocationsName, would, res.NoProvider, shared.FewNames(res.NoProviderHosts, 5))
			case res.NoProvider > 0:
				fmt.Fprintf(f.IO.ErrOut, "would skip %s: %d instances on %s: their compute nodes have no resource provider yet (run \"rpctl migrate inventory\" first)\n",
					migrate.AllocationsName, res.NoProvider, shared.FewNames(res.NoProviderHosts, 5))
				exit = 2
			default:
				fmt.Fprintf(f.IO.ErrOut, "%s: %d instances would be healed; nothing written (--dry-run)\n", migrate.AllocationsName, would)
			}
			return exit, nil
		},
	}
}

// claimsPlacement is the Placement the allocations are healed in: its
// database, or, when the config files or flags name it only by its API,
// that API at the microversion of Nova's heal_allocations.
func claimsPlacement(ctx context.Context, f *cmdutil.Factory, dbs *storage.Databases) (claims.Placement, error) {
	if dbs.Placement != nil {
		return &placementdb.ClaimsPlacement{DB: dbs.Placement}, nil
	}
	client, err := f.PlacementClient(ctx)
	if err != nil {
		return nil, err
	}
	return placementclient.Claims{C: client, Microversion: &placementclient.NovaHealVersion}, nil
}
