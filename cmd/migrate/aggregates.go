package migrate

import (
	"context"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/rpctl/rpctl/cmd/internal/cmdutil"
	"github.com/rpctl/rpctl/internal/output"
	"github.com/rpctl/rpctl/migrate"
	"github.com/rpctl/rpctl/placementclient"
	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/stores"
)

func aggregatesMigration() migrationSpec {
	return migrationSpec{
		Name:  "aggregates",
		Rows:  []string{migrate.AggregatesName},
		Order: 25, // after inventory (the providers must exist) and ratios
		Short: "Mirror Nova's host aggregates into Placement (nova-manage placement sync_aggregates)",
		Long: `Each Nova host aggregate's uuid is added to the resource provider of each of its hosts'
compute node, as nova-manage placement sync_aggregates does: aggregates in id order, hosts
in order, one generation-checked write per missing membership (a conflict is re-read and
retried, four attempts in all), with Nova's messages (--verbose adds its progress lines)
and exit codes. Hosts without a host mapping or without a compute node are listed at the
end; a host whose compute node has no provider stops the run (exit 2), as in Nova.

--prune also removes the memberships Nova's command never removes: a compute node's
provider in a Nova aggregate that does not have the host, or in an aggregate Nova does not
know whose members are all compute nodes (an aggregate with a sharing or other provider
is kept). Hosts with several compute nodes (ironic) are left alone. The removals come
first; --dry-run lists them and the additions and writes nothing.

Works on the Placement database (--placement-db, --db, placement.conf) or through the
Placement API (--os-cloud/--os-endpoint); Nova's side is read from the API and cell
databases. migrate all runs it after inventory.

The table format is nova-manage's text; -f json, yaml, csv and value print one row per
membership removed or added (or, with --dry-run, to remove or add: action, aggregate,
name, host, provider), nova-manage's messages going to standard error.`,
		// The API database is opened with the cells when configured; migrate
		// all without one skips this step (buildAggregates says so).
		Need:       storage.NeedCells,
		AddFlags:   addAggregateFlags,
		Build:      buildAggregates,
		DryRun:     dryRunAggregates,
		Standalone: runAggregates,
		ExitCodes: []cmdutil.ExitCodeRow{
			{Code: migrate.AggExitOK, Meaning: "done: every membership is in Placement"},
			{Code: migrate.AggExitTooManyComputes, Meaning: "a host has more than one compute node record"},
			{Code: migrate.AggExitRetrieval, Meaning: "a provider's aggregates could not be read (e.g. a host's compute node has no provider)"},
			{Code: migrate.AggExitUpdate, Meaning: "a provider's aggregates could not be written"},
			{Code: migrate.AggExitUnmapped, Meaning: "aggregate hosts without a host mapping (run nova-manage cell_v2 discover_hosts)"},
			{Code: migrate.AggExitNoCompute, Meaning: "aggregate hosts without a compute node record"},
		},
	}
}

// aggregateFlags are the flags of `migrate aggregates`, also on `migrate all`.
type aggregateFlags struct {
	verbose bool
	prune   bool
}

func addAggregateFlags(fs *pflag.FlagSet, mf *migrationFlags) {
	aggregateFlags := &mf.aggregates
	fs.BoolVar(&aggregateFlags.verbose, "verbose", false, "print nova-manage's progress lines (aggregates, hosts, memberships added)")
	fs.BoolVar(&aggregateFlags.prune, "prune", false, "also remove provider memberships no Nova aggregate explains (see migrate aggregates --help)")
}

// aggregateSync wires Nova's databases and the selected Placement (API or
// database) to the sync.
func aggregateSync(ctx context.Context, f *cmdutil.Factory, dbs *storage.Databases, o *MigrateOptions, dryRun bool) (*migrate.AggregateSync, error) {
	aggregateFlags := o.flags.aggregates
	// A bar with rate and ETA on a terminal, a line every few seconds
	// otherwise (issue 35); Nova's messages clear it first.
	p := o.bar(f, migrate.AggregatesName, "memberships")
	s := &migrate.AggregateSync{API: stores.AggregateAPI(dbs.API), Cells: stores.AggregateCells(dbs.Cells),
		Out: p.Before(cmdutil.LineSanitizer(f.NoticeOut())), Err: p.Before(cmdutil.LineSanitizer(f.IO.ErrOut)), Verbose: aggregateFlags.verbose, Prune: aggregateFlags.prune, DryRun: dryRun,
		Progress: p.UpdateDone}
	if f.UsePlacementAPI() {
		c, err := f.PlacementClient(ctx)
		if err != nil {
			return nil, err
		}
		s.Placement = placementclient.Store{C: c}
	} else {
		s.Placement = stores.AggregatePlacement(dbs.Placement)
	}
	if s.API == nil {
		return nil, fmt.Errorf("%w for the Nova API (host aggregates live there): give --db FILE, --api-db URL, or --config-file nova.conf with [api_database] connection", storage.ErrNoDatabase)
	}
	if s.Placement == nil {
		return nil, fmt.Errorf("%w for Placement: give --placement-db URL (or --db FILE), or the Placement API with --os-cloud/--os-endpoint", storage.ErrNoDatabase)
	}
	return s, nil
}

func aggregateNeed(f *cmdutil.Factory) storage.Need {
	need := storage.NeedCells | storage.NeedAPI
	if !f.UsePlacementAPI() {
		need |= storage.NeedPlacement
	}
	return need
}

func runAggregates(ctx context.Context, f *cmdutil.Factory, o *MigrateOptions) error {
	dbs, err := f.Databases(ctx, aggregateNeed(f), 0)
	if err != nil {
		return &cmdutil.ExitError{Code: cmdutil.ExitStoreUnexpected, Err: err}
	}
	defer dbs.Close()
	s, err := aggregateSync(ctx, f, dbs, o, o.DryRun)
	if err != nil {
		return &cmdutil.ExitError{Code: cmdutil.ExitStoreUnexpected, Err: err}
	}
	res, err := s.Run(ctx)
	if err != nil {
		return &cmdutil.ExitError{Code: cmdutil.ExitStoreUnexpected, Err: err}
	}
	if o.DryRun {
		fmt.Fprintf(f.IO.ErrOut, "%s: %d memberships to add, %d to remove; nothing written (--dry-run)\n", migrate.AggregatesName, len(res.Added), len(res.Removed))
	}
	if f.NoticeOut() != f.IO.Out {
		// Nova's messages went to stderr: stdout gets the rows.
		rows := output.Rows{Headers: []string{"action", "aggregate", "name", "host", "provider"}}
		for _, m := range res.Removed {
			rows.Add("remove", m.Aggregate, m.Name, m.Host, m.Provider)
		}
		for _, m := range res.Added {
			rows.Add("add", m.Aggregate, m.Name, m.Host, m.Provider)
		}
		if err := f.Write(rows, nil); err != nil {
			return err
		}
	}
	if res.Exit != migrate.AggExitOK {
		return cmdutil.Exit(res.Exit)
	}
	return nil
}

func buildAggregates(ctx context.Context, f *cmdutil.Factory, dbs *storage.Databases, o *MigrateOptions) ([]migrate.Migration, error) {
	if dbs.API == nil {
		fmt.Fprintf(f.IO.ErrOut, "%s: skipped: no Nova API database configured (host aggregates live there)\n", migrate.AggregatesName)
		return nil, nil
	}
	s, err := aggregateSync(ctx, f, dbs, o, false)
	if err != nil {
		return nil, err
	}
	s.Skipped = o.skipLog
	return []migrate.Migration{&migrate.AggregatesMigration{Sync: s}}, nil
}

func dryRunAggregates(ctx context.Context, f *cmdutil.Factory, dbs *storage.Databases, o *MigrateOptions) (int, error) {
	if dbs.API == nil {
		fmt.Fprintf(f.IO.ErrOut, "%s: skipped: no Nova API database configured (host aggregates live there)\n", migrate.AggregatesName)
		return 0, nil
	}
	s, err := aggregateSync(ctx, f, dbs, o, true)
	if err != nil {
		return 0, err
	}
	// As the real run of migrate all: a host whose compute node has no
	// provider yet is named and the other hosts are listed.
	s.SkipHosts = o.dryRunAll
	res, err := s.Run(ctx)
	if err != nil {
		return 0, err
	}
	for _, re := range res.Skipped {
		fmt.Fprintf(f.IO.ErrOut, "would skip %v (unless the inventory step creates its provider)\n", re)
	}
	fmt.Fprintf(f.IO.ErrOut, "%s: %d memberships to add, %d to remove; nothing written (--dry-run)\n", migrate.AggregatesName, len(res.Added), len(res.Removed))
	if res.Exit != migrate.AggExitOK {
		// Not an error of the dry run: in migrate all the providers the
		// inventory step would create do not exist yet.
		fmt.Fprintf(f.IO.ErrOut, "%s: the sync would end with nova-manage's exit code %d (see above; providers migrate inventory would create are not there yet)\n", migrate.AggregatesName, res.Exit)
	}
	// Its code is not the real run's: that one runs after the inventory
	// step has created the providers (see the note above).
	return 0, nil
}
