// Package migrate holds `rpctl migrate`: inventory, ratios, aggregates,
// allocations and all, with dry runs (the migrate domain does the work).
package migrate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/rpctl/rpctl/cmd/internal/cmdutil"
	"github.com/rpctl/rpctl/cmd/internal/shared"
	"github.com/rpctl/rpctl/internal/flagnum"
	"github.com/rpctl/rpctl/internal/logging"
	"github.com/rpctl/rpctl/internal/output"
	"github.com/rpctl/rpctl/internal/release"
	"github.com/rpctl/rpctl/internal/sanitize"
	"github.com/rpctl/rpctl/migrate"
	"github.com/rpctl/rpctl/storage"
)

// MigrateOptions are the flags every migration shares.
type MigrateOptions struct {
	DryRun   bool
	MaxCount int
	// maxCountText is --max-count as typed, parsed by flagnum.Count (a
	// value pflag refuses would exit 255, not nova-manage's 127).
	maxCountText flagnum.Text
	// MaxCountSet distinguishes "--max-count not given" (batches until done)
	// from a given value, as nova-manage does.
	MaxCountSet bool
	// dryRunAll: this dry run is migrate all's, whose inventory step
	// creates the providers the later steps need.
	dryRunAll bool
	// BatchSize is the batch of an unlimited run (nova-manage's is 50).
	BatchSize int
	Cells     []string // --cell NAME: only these cells
	// flags are the values of the migrations' own flags (AddFlags).
	flags migrationFlags
	// skipLog is where the run's steps tell each other which compute node
	// rows were skipped as bad (the aggregate sync names them).
	skipLog *migrate.SkipLog
	// bars are the steps' progress reports, cleared before each of the
	// runner's lines (bar).
	bars []*cmdutil.Progress
}

// bar is a step's progress report of what in units, on standard error:
// a bar on a terminal, a line every few seconds otherwise (issue 35).
func (o *MigrateOptions) bar(f *cmdutil.Factory, what, units string) *cmdutil.Progress {
	p := cmdutil.NewProgressOf(f.IO.ErrOut, f.IO.IsStderrTTY(), what, units)
	o.bars = append(o.bars, p)
	return p
}

// clearBars is a writer that clears every step's bar before each line.
type clearBars struct {
	bars []*cmdutil.Progress
	w    io.Writer
}

func (c clearBars) Write(b []byte) (int, error) {
	for _, p := range c.bars {
		p.Clear()
	}
	return c.w.Write(b)
}

// migrationFlags hold the values of the migrations' own flags, one set per
// command (migrate all, and each migration's subcommand). They live in the
// command tree, not in package variables: rpctl may run several
// invocations in one process (the tests do), and building another tree
// would otherwise reset this one's values to their defaults mid-run.
type migrationFlags struct {
	inventory  inventoryFlags
	ratios     ratioFlagSet
	aggregates aggregateFlags
}

// migrationSpec is one online migration that `rpctl migrate` knows. Each
// lives in its own file and registers itself in init, so `migrate all` runs
// them all, ordered by Order.
type migrationSpec struct {
	Name  string // subcommand name and summary-table key prefix
	Order int    // `migrate all` runs lower first
	// Rows are the migration's rows in the summary table, in the order it
	// runs them (Nova's and Placement's names for theirs).
	Rows  []string
	Short string
	Long  string
	Need  storage.Need
	// AddFlags adds the migration's own flags (also offered by `migrate all`).
	AddFlags func(fs *pflag.FlagSet, mf *migrationFlags)
	// Build returns the migrations to run on dbs.
	Build func(ctx context.Context, f *cmdutil.Factory, dbs *storage.Databases, o *MigrateOptions) ([]migrate.Migration, error)
	// DryRun prints what Build's migrations would do, writing nothing, and
	// returns the exit code the real run of this step would end with (0,
	// or 2 for rows it would skip), given that the steps before it in the
	// same run (o.dryRunAll: `migrate all`) have done their part.
	DryRun func(ctx context.Context, f *cmdutil.Factory, dbs *storage.Databases, o *MigrateOptions) (int, error)
	// Standalone, when set, is what the migration's own subcommand runs
	// instead of the runner (a port of a nova-manage command with its own
	// exit codes, ExitCodes); the subcommand then has only --dry-run and
	// AddFlags' flags.
	Standalone func(ctx context.Context, f *cmdutil.Factory, o *MigrateOptions) error
	ExitCodes  []cmdutil.ExitCodeRow
}

// migrationSpecs are the migrations in the order `migrate all` runs them
// (by Order), built when a command needs them rather than at init.
func migrationSpecs() []migrationSpec {
	specs := []migrationSpec{placementOnlineMigration(), inventoryMigration(), quotasMigration(), uuidsMigration(), missingAZMigration(), queuedForDeleteMigration(), ratiosMigration(), vifListMigration(), userIDMigration(), devUUIDsMigration(), computeIDsMigration(), aggregatesMigration(), allocationsMigration()}
	sort.SliceStable(specs, func(i, j int) bool { return specs[i].Order < specs[j].Order })
	return specs
}

// NewCmdMigrate builds `rpctl migrate` and its subcommands.
func NewCmdMigrate(f *cmdutil.Factory) *cobra.Command {
	specs := migrationSpecs()
	parent := &cobra.Command{
		Use:   "migrate",
		Short: "Run rpctl's online data migrations (like nova-manage db online_data_migrations)",
		Long: `Online data migrations, run the way nova-manage db online_data_migrations runs Nova's:
idempotent, in batches until complete (--batch-size, default 1000; nova-manage uses 50),
or one batch of --max-count records. Exit codes are nova-manage's.

A row Placement would refuse is a bad row, named with its cell, id, hostname, column and
value, and skipped before anything is written: a total, reserved or unit outside
1..2147483647 (0..2147483647 for reserved), a ratio not above 0 or beyond a FLOAT, a uuid
that is not one, an empty, non-UTF-8 or over-200-character provider name, a name or uuid
another row already claims, unreadable JSON in pci_stats, numa_topology or extra_resources.
A row is named once with every bad column. --dry-run lists them. In migrate all a host
whose compute node row was skipped is left out of its aggregates (naming that row and its
bad columns) and every other host is synced; the run ends with the list of the records
skipped, each with why, and says whether --log-file kept them. A signal rolls back the
current transaction and prints the summary of what was written.

Which file gives what: nova.conf gives the cells ([database], [api_database] and the cell
mappings) and, with [placement] credentials (Keystone, or endpoint_override), the Placement
API; placement.conf gives Placement's database ([placement_database] connection, or
--placement-db). With nova.conf alone the inventory, aggregate and allocation steps go
through the Placement API, as nova-compute writes it: per compute node a POST of each new
provider and generation-checked PUTs of its inventories, traits and aggregates (a 409
generation conflict re-reads the node and re-plans, at most 4 times, then skips it, named).
Through the API a node's write is no single transaction (providers it created are deleted
again when a later call fails; PUTs already applied to existing providers stay, and a re-run
completes them), and a layout switch that must move allocations is refused for that node.
placement-manage's own steps (set_root_provider_ids, create_incomplete_consumers) read rows
the API does not show: without placement.conf they fail alone, naming it, while the others
run (exit 2).`,
	}
	all := &cobra.Command{
		Use:   "all",
		Short: "Run every online migration rpctl has, in order",
		Long:  allLong(specs),
		Args:  cobra.NoArgs,
	}
	var allOpts MigrateOptions
	addCommonMigrateFlags(all, &allOpts)
	all.RunE = func(c *cobra.Command, _ []string) error {
		allOpts.MaxCountSet = c.Flags().Changed("max-count")
		return runMigrations(c.Context(), f, specs, &allOpts)
	}
	parent.AddCommand(all)
	for _, spec := range specs {
		spec := spec
		if spec.AddFlags != nil {
			spec.AddFlags(all.Flags(), &allOpts.flags)
		}
		var o MigrateOptions
		sub := &cobra.Command{
			Use:   spec.Name,
			Short: spec.Short,
			Long:  spec.Long,
			Args:  cobra.NoArgs,
			RunE: func(c *cobra.Command, _ []string) error {
				o.MaxCountSet = c.Flags().Changed("max-count")
				return runMigrations(c.Context(), f, []migrationSpec{spec}, &o)
			},
		}
		if spec.Standalone != nil {
			sub.RunE = func(c *cobra.Command, _ []string) error { return spec.Standalone(c.Context(), f, &o) }
			cmdutil.SetExitCodes(sub, spec.ExitCodes...)
			sub.Flags().BoolVar(&o.DryRun, "dry-run", false, "print what would change and write nothing")
		} else {
			addCommonMigrateFlags(sub, &o)
		}
		if spec.AddFlags != nil {
			spec.AddFlags(sub.Flags(), &o.flags)
		}
		parent.AddCommand(sub)
	}
	return parent
}

// allLong is migrate all's help: its steps in the order it runs them.
func allLong(specs []migrationSpec) string {
	var b strings.Builder
	b.WriteString(`Runs every online data migration of --release's nova-manage db online_data_migrations
(Zed: Nova 26.2.2's ten, 2025.1: Nova 31.0.0's eleven, in Nova's order: nova/cmd/manage.py
DbCommands.online_migrations) and placement-manage db online_data_migrations (first:
Placement's own data before rpctl writes there), with rpctl's Placement steps (inventory,
aggregates, allocations) among them, in batches until a batch migrates nothing (a migration
that fails or skips bad rows does not stop the others). In order (step: summary rows):

`)
	for _, s := range specs {
		fmt.Fprintf(&b, "  %-19s %s%s\n", s.Name+":", strings.Join(s.Rows, ", "), onlyIn(s))
	}
	b.WriteString(`
Each step is also its own subcommand (rpctl migrate STEP --help). The steps that need the
Nova API database (quotas, fill_virtual_interface_list, the instance mapping ones,
aggregates) are skipped, saying so, without one. A step of another release than --release
is left out: populate_instance_compute_id runs with --release 2023.2 or later, after rpctl's
inventory step has given compute nodes with a NULL uuid theirs (Nova 31's own migration fails
while one has none).

Which file gives what: nova.conf gives the cells and the Nova API database, and with
[placement] credentials (Keystone, or endpoint_override) the Placement API, through which
the inventory, aggregates and heal_allocations steps run when no Placement database is
given; placement.conf's [placement_database] connection (or --placement-db) gives
Placement's database, which set_root_provider_ids and create_incomplete_consumers need (they
fail alone without it, naming it, and the run exits 2) and which writes each compute node in
one transaction.`)
	return b.String()
}

// specsOfRelease keeps the steps that run in release rel (--release):
// rpctl's own steps, and the Nova and Placement migrations of rel's own
// tools (migrate.OnlineOf), so that a migration of one release never runs
// on another's schema. A single step (its subcommand) of another release
// is refused (otherRelease), naming the releases it belongs to.
func specsOfRelease(specs []migrationSpec, relFlag string) (kept []migrationSpec, otherRelease, err error) {
	rel, err := shared.ParseRelease(relFlag)
	if err != nil {
		return nil, nil, &cmdutil.ExitError{Code: cmdutil.ExitBadMaxCount, Err: err}
	}
	online, err := migrate.OnlineOf(rel)
	if err != nil {
		return nil, nil, &cmdutil.ExitError{Code: cmdutil.ExitBadMaxCount, Err: err}
	}
	var out []migrationSpec
	for _, s := range specs {
		keep := true
		for _, r := range s.Rows {
			if migrate.Upstream(r) && !slices.Contains(online.Nova, r) && !slices.Contains(online.Placement, r) {
				keep = false
			}
		}
		if keep {
			out = append(out, s)
		} else if len(specs) == 1 {
			var in []string
			for _, n := range release.Names() {
				if o, err := migrate.OnlineOf(n); err == nil && (slices.Contains(o.Nova, s.Rows[0]) || slices.Contains(o.Placement, s.Rows[0])) {
					in = append(in, string(n))
				}
			}
			return specs, &cmdutil.ExitError{Code: cmdutil.ExitBadMaxCount,
				Err: fmt.Errorf("%s is not an online migration of release %s (it is of %s): give --release", strings.Join(s.Rows, ", "), rel, strings.Join(in, ", "))}, nil
		}
	}
	return out, nil, nil
}

// onlyIn is " (RELEASE only)" for a step that is an online migration of
// some releases rpctl knows but not of all, for migrate all's help.
func onlyIn(s migrationSpec) string {
	var in []string
	for _, n := range release.Names() {
		o, err := migrate.OnlineOf(n)
		if err != nil {
			continue
		}
		for _, r := range s.Rows {
			if slices.Contains(o.Nova, r) || slices.Contains(o.Placement, r) {
				in = append(in, string(n))
				break
			}
		}
	}
	if len(in) == 0 || len(in) == len(release.Names()) {
		return ""
	}
	return " (" + strings.Join(in, ", ") + " only)"
}

// migrateExitCodes are nova-manage db online_data_migrations' codes.
var migrateExitCodes = []cmdutil.ExitCodeRow{
	{Code: cmdutil.ExitOK, Meaning: "done: nothing left to migrate"},
	{Code: cmdutil.ExitMore, Meaning: "some records migrated and more may remain (--max-count): run again"},
	{Code: cmdutil.ExitFailed, Meaning: "a migration failed or skipped bad rows (named on standard error)"},
	{Code: cmdutil.ExitBadMaxCount, Meaning: "invalid --max-count (not a positive integer: digits only, 1 to 9223372036854775807) or ratio flag (not a decimal number from 0 to 3.40282e+38, the largest Placement stores); nothing written"},
}

func addCommonMigrateFlags(c *cobra.Command, o *MigrateOptions) {
	cmdutil.SetExitCodes(c, migrateExitCodes...)
	c.Flags().BoolVar(&o.DryRun, "dry-run", false, "print what would change and write nothing")
	c.Flags().Var(&o.maxCountText, "max-count", "migrate at most this many records in one batch (default: batches of --batch-size until complete)")
	c.Flags().IntVar(&o.BatchSize, "batch-size", migrate.DefaultBatch, "records per batch when --max-count is not given (nova-manage uses 50)")
	c.Flags().StringArrayVar(&o.Cells, "cell", nil, "only this cell (repeatable; name as in cell_mappings or --cell-db's database name)")
}

func runMigrations(ctx context.Context, f *cmdutil.Factory, specs []migrationSpec, o *MigrateOptions) error {
	o.skipLog = &migrate.SkipLog{}
	if o.BatchSize < 1 {
		return fmt.Errorf("--batch-size must be at least 1, got %d", o.BatchSize)
	}
	// A bad --release is refused before anything connects; a step of
	// another release (its own subcommand) once the config files and
	// databases have been read, so that their errors come first, as in
	// every other step.
	specs, otherRelease, err := specsOfRelease(specs, o.flags.ratios.release)
	if err != nil {
		return err
	}
	if o.MaxCountSet {
		n, err := flagnum.Count("max-count", string(o.maxCountText), 1, math.MaxInt)
		if err != nil {
			fmt.Fprintf(f.IO.ErrOut, "%v (%v)\n", migrate.ErrMaxCount, err)
			return cmdutil.Exit(cmdutil.ExitBadMaxCount)
		}
		o.MaxCount = int(n)
	}
	// A controller's nova.conf names Placement by its API only (or
	// --os-*): the steps that can reach Placement through it do, and the
	// inventory step, which writes Placement's database, fails alone
	// (placementNeedsDatabase) while the others run.
	api := f.UsePlacementAPI()
	var need storage.Need
	for _, s := range specs {
		n := s.Need
		if api {
			n &^= storage.NeedPlacement
		}
		need |= n
	}
	var want storage.Need
	if api {
		// A Placement database given as well still serves the inventory
		// step.
		want = storage.NeedPlacement
	}
	dbs, err := f.Databases(ctx, need, want)
	if err != nil {
		return err
	}
	defer dbs.Close()
	if otherRelease != nil {
		return otherRelease
	}
	if err := cmdutil.SelectCells(ctx, f, dbs, o.Cells); err != nil {
		return err
	}
	if o.DryRun {
		// The dry run exits as the real run would: 2 when a step would
		// skip rows (the runner's code for them), else 0.
		o.dryRunAll = len(specs) > 1
		exit := 0
		for _, s := range specs {
			code, err := s.DryRun(ctx, f, dbs, o)
			if err != nil {
				return err
			}
			exit = max(exit, code)
		}
		if exit != 0 {
			fmt.Fprintf(f.IO.ErrOut, "nothing written (--dry-run); the real run would exit %d: rows would be skipped (listed above as \"would skip\")\n", exit)
			return cmdutil.Exit(exit)
		}
		return nil
	}
	var ms []migrate.Migration
	for _, s := range specs {
		built, err := s.Build(ctx, f, dbs, o)
		if err != nil {
			return err
		}
		ms = append(ms, built...)
	}
	r := &migrate.Runner{Migrations: ms, Log: clearBars{o.bars, f.IO.ErrOut}, Batch: o.BatchSize}
	// A bad --max-count was refused above, before any database was opened.
	sum, runErr := r.Run(ctx, o.MaxCount, !o.MaxCountSet)
	if runErr != nil && sum.Rows == nil {
		return runErr
	}
	// An interrupted run (signal) still says what it wrote before it ends
	// with the signal's exit code.
	// nova-manage's table, with rpctl's column names.
	rows := output.Rows{Headers: []string{"migration", "total_needed", "completed"}, Align: output.AlignCenter}
	for _, r := range sum.Rows {
		rows.Add(r.Migration, r.TotalNeeded, r.Completed)
	}
	if err := f.Write(rows, nil); err != nil {
		return err
	}
	fmt.Fprintln(f.IO.ErrOut, phaseTimes(sum.Rows, sum.Took, sum.Parts))
	if runErr != nil {
		return runErr
	}
	if len(sum.Errors) > 0 {
		// nova-manage's words point to its log; rpctl printed each
		// failure above ("Error attempting to run ...").
		fmt.Fprintln(f.IO.ErrOut, `Some migrations failed unexpectedly: see "Error attempting to run" above.`)
	}
	// Not nova-manage's "failed unexpectedly": these rows were expected to
	// fail, were named above, and the rest of the run went on.
	bad, unfit, kept := 0, 0, 0
	for _, re := range sum.RowErrors {
		switch {
		case !re.Unfit:
			bad++
		case re.Migration == migrate.AllocationsName:
			unfit++
		case re.Migration == migrate.AggregatesName:
			// Counted apart: a host left out because its compute node
			// row is bad (or not migrated).
		default:
			kept++
		}
	}
	if bad > 0 {
		fmt.Fprintf(f.IO.ErrOut, "%d rows were skipped because their data is bad (listed above as \"Skipped\"); fix them and run again.\n", bad)
	}
	if kept > 0 {
		fmt.Fprintf(f.IO.ErrOut, "%d compute nodes kept their layout: the switch was refused (listed above as \"Skipped\", each with its reason); free the room they name, or keep the layout.\n", kept)
	}
	if unfit > 0 {
		fmt.Fprintf(f.IO.ErrOut, "%d instances were not healed (listed above as \"Skipped\", each with its reason and what to do); do what they say and run again.\n", unfit)
	}
	if skippedHosts := len(sum.RowErrors) - bad - unfit - kept; skippedHosts > 0 {
		fmt.Fprintf(f.IO.ErrOut, "%d records were left out because of another record (listed above as \"Skipped\", each naming it); fix that one and run again.\n", skippedHosts)
	}
	reportSkipped(f, sum)
	if sum.Exit != 0 {
		return cmdutil.Exit(sum.Exit)
	}
	return nil
}

// phaseTimes is the summary's line of each migration's time, in the
// table's order, and their sum (issue 35): which phase a long run spent
// its time in. A migration that took less than a tenth of a second is
// left out of the list (a run has fifteen, most of them instant), not out
// of the sum, unless it has parts shown apart (migrate.PhaseParts: the
// inventory step's layout switch), which follow its time in parentheses.
func phaseTimes(rows []migrate.Row, took map[string]time.Duration, parts map[string][]migrate.PhasePart) string {
	const shown = 100 * time.Millisecond
	var b strings.Builder
	var all time.Duration
	b.WriteString("time:")
	n := 0
	for _, r := range rows {
		all += took[r.Migration]
		if took[r.Migration] < shown && len(parts[r.Migration]) == 0 {
			continue
		}
		if n > 0 {
			b.WriteString(",")
		}
		n++
		fmt.Fprintf(&b, " %s %s", r.Migration, took[r.Migration].Round(shown))
		for i, p := range parts[r.Migration] {
			sep := ", "
			if i == 0 {
				sep = " ("
			}
			fmt.Fprintf(&b, "%s%s of %d %s %s", sep, p.Name, p.Items, p.Unit, p.Took.Round(shown))
		}
		if len(parts[r.Migration]) > 0 {
			b.WriteString(")")
		}
	}
	if n == 0 {
		fmt.Fprintf(&b, " %s in all (each under %s)", all.Round(time.Millisecond), shown)
		return b.String()
	}
	fmt.Fprintf(&b, " (%s in all)", all.Round(shown))
	return b.String()
}

// reportSkipped ends a run that skipped records or had a migration fail
// with the list of them, each once with its reason (the "Skipped" lines
// above are interleaved with the progress lines of every batch), and says
// where they were kept: in --log-file's file too, or on standard error
// only, naming --log-file (nova-manage's "Check log for details" points to
// a log that rpctl writes only when asked).
func reportSkipped(f *cmdutil.Factory, sum migrate.Summary) {
	if len(sum.RowErrors) == 0 && len(sum.Errors) == 0 {
		return
	}
	out := f.IO.ErrOut
	if n := len(sum.RowErrors); n > 0 {
		fmt.Fprintf(out, "Skipped, not migrated (%d):\n", n)
		for _, re := range sum.RowErrors {
			fmt.Fprintf(out, "  %s\n", sanitize.String(re.Error()))
		}
	}
	// A migration that fails fails in every batch: once each.
	var failed []string
	for _, err := range sum.Errors {
		if msg := sanitize.String(err.Error()); !slices.Contains(failed, msg) {
			failed = append(failed, msg)
		}
	}
	if len(failed) > 0 {
		fmt.Fprintf(out, "Failed (%d):\n", len(failed))
		for _, msg := range failed {
			fmt.Fprintf(out, "  %s\n", msg)
		}
	}
	if f.LogFile == "" {
		fmt.Fprintln(out, "Nothing was logged: these lines are on standard error only (give --log-file FILE to keep them in a file).")
		return
	}
	log := logging.Logger()
	for _, re := range sum.RowErrors {
		log.Warn("skipped", "migration", re.Migration, "record", re.Error())
	}
	for _, msg := range failed {
		log.Error("migration failed", "error", msg)
	}
	fmt.Fprintf(out, "These are also in --log-file %s.\n", f.LogFile)
}

// placementNeedsDatabase is a migration that cannot run through the
// Placement API: its Run fails, naming what to give, so that migrate all
// reports it as a failed migration (exit 2) and runs the others, as
// nova-manage's runner goes on past a migration that fails.
type placementNeedsDatabase struct {
	name, why string
}

func (m placementNeedsDatabase) Name() string { return m.name }

func (m placementNeedsDatabase) Run(context.Context, int) (int, int, error) {
	return 0, 0, errors.New(m.why)
}
