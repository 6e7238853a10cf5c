// Package status holds `rpctl status` and `rpctl upgrade check`.
package status

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rpctl/rpctl/cmd/internal/cmdutil"
	"github.com/rpctl/rpctl/cmd/internal/shared"
	"github.com/rpctl/rpctl/internal/output"
	"github.com/rpctl/rpctl/internal/sanitize"
	"github.com/rpctl/rpctl/metrics"
	"github.com/rpctl/rpctl/status"
)

// StatusOptions are the flags of `rpctl status`: the checks' own, which
// the exporter shares (shared.StatusCheckOptions), and the output's.
type StatusOptions struct {
	JSON bool
	shared.StatusCheckOptions
}

// statusLong is status' help; its list of checks is read from the check
// registry (status.Checks), so that a new check is listed.
func statusLong() string {
	var names []string
	for _, ch := range status.Checks(&status.Env{}) {
		names = append(names, ch.Name)
	}
	return `Check whether the cloud is ready for (or done with) the move of Nova's compute-node
capacity into Placement, the way nova-status upgrade check does: every check runs, in
order, across all cells, and the table is oslo.upgradecheck's: its details are wrapped by
Python's textwrap as nova-status wraps them, so a long word, a UUID too, is broken after a
hyphen. -f value, csv, json and yaml print the details unwrapped, for copying.

Checks, in order: ` + strings.Join(names, ", ") + `.
Compute Node Inventories is a Warning when a compute node's providers hold inventories
other than its nova-compute would report for its compute_nodes row and nova.conf (planned
as rpctl migrate inventory plans it, --compute-config-dir read the same way), naming the
node, the class and the fields (Placement's value -> the reported one). A tree rpctl
wrote with --layout nested, --shared-storage or --newton-classes, not yet owned by a
nova-compute, is checked against that layout and its nodes are named (nova-compute
reports only the flat layout and rewrites them when it starts).

The first are every check of the release's (--release) nova-status upgrade check, then
placement-status upgrade check's, with their names, rules, texts and exit codes; rpctl's
own follow. --check nova-status, placement-status or rpctl runs one tool's checks.

Which file gives what:
  nova.conf [api_database] connection   Cells v2 (cell and host mappings), the cell
                                        databases (cell_mappings), host aggregates
  nova.conf [database] connection       the cell Cells v2 counts compute nodes in (and the
                                        only cell without [api_database])
  nova.conf [placement]                 the Placement API: auth_type with Keystone
                                        credentials (the catalog, or endpoint_override),
                                        or admin_token with endpoint and token. nova-status'
                                        Placement API check asks it; without a Placement
                                        database every check that reads Placement reads it
                                        through this API, as nova-status does
  nova.conf [cinder]                    the Cinder API (auth_type, endpoint_template or
                                        catalog_info)
  nova.conf [service_user]              send_service_user_token
  [oslo_policy] policy_file             looked up beside the config files and in /etc/nova
                                        (nova-status) or /etc/placement (placement-status)
  placement.conf [placement_database]   Placement's database: read directly (fast, one
                                        bulk read), and the only way to run
                                        placement-status' two checks, which count rows the
                                        API does not show (providers without
                                        root_provider_id, allocations without consumer)
So nova.conf alone runs every check but those two, which then fail with no verdict (exit
255; --check nova-status --check rpctl leaves them out); with placement.conf beside it,
every check. --json (and the Source column of -f json/value/csv/yaml) says where each check
read from. An API that cannot be reached is a Failure of each check that reads it, naming
it, with no verdict (exit 255); the other checks still run.
Aggregates in Sync is a Warning when Nova's host aggregates and Placement's provider
aggregates disagree either way: memberships rpctl migrate aggregates would add, hosts it
cannot place, and memberships --prune would remove, with counts and the first hosts; it
needs the API database. Database Cluster warns when a database is a Galera node that is
not Synced, and fails when its cluster lost quorum.

A check that crashes, or cannot read its database (not configured, unreachable, a
table missing), shows as a Failure naming the database; the other checks still run and
rpctl exits 255, as nova-status does, since no verdict could be reached.

-f prometheus prints the checks' results, the drifted inventories and the instances
without allocations as Prometheus metrics (text format 0.0.4), as rpctl exporter serves them.`
}

// NewCmdStatus builds `rpctl status`. runF, when not nil, gets the parsed
// options instead of the command running (how the flags are tested, as the
// GitHub CLI's NewCmd constructors).
func NewCmdStatus(f *cmdutil.Factory, runF func(*StatusOptions) error) *cobra.Command {
	o := &StatusOptions{}
	c := &cobra.Command{
		Use:   "status",
		Short: "Run nova-status-style upgrade checks of the cells and Placement (exit 0/1/2)",
		Long:  statusLong(),
		Args:  cobra.NoArgs,
		RunE:  func(c *cobra.Command, _ []string) error { return runStatusOr(c, f, o, runF) },
	}
	addStatusFlags(c, o)
	return c
}

// NewCmdUpgrade builds `rpctl upgrade check`, the spelling nova-status and
// Placement-status use, for the same checks.
func NewCmdUpgrade(f *cmdutil.Factory, runF func(*StatusOptions) error) *cobra.Command {
	o := &StatusOptions{}
	parent := &cobra.Command{
		Use:   "upgrade",
		Short: "Upgrade checks (rpctl upgrade check is rpctl status)",
	}
	check := &cobra.Command{
		Use:   "check",
		Short: "Run the upgrade checks (same as rpctl status)",
		Long:  statusLong(),
		Args:  cobra.NoArgs,
		RunE:  func(c *cobra.Command, _ []string) error { return runStatusOr(c, f, o, runF) },
	}
	addStatusFlags(check, o)
	parent.AddCommand(check)
	return parent
}

// runStatusOr runs the checks, or runF when the caller gave one.
func runStatusOr(c *cobra.Command, f *cmdutil.Factory, o *StatusOptions, runF func(*StatusOptions) error) error {
	if runF != nil {
		return runF(o)
	}
	return runStatus(c, f, o)
}

func addStatusFlags(c *cobra.Command, o *StatusOptions) {
	c.Flags().BoolVar(&o.JSON, "json", false, `print {"name", "checks": [{"check", "result", "details", "source"}]}: oslo.upgradecheck's --json (result 0, 1 or 2), and where each check read from; -f json prints the rows, result Success, Warning or Failure, as yaml, csv and value do`)
	shared.AddStatusCheckFlags(c.Flags(), &o.StatusCheckOptions)
	c.RegisterFlagCompletionFunc("check", func(_ *cobra.Command, _ []string, prefix string) ([]string, cobra.ShellCompDirective) {
		var out []string
		for _, s := range status.CheckSlugs() {
			if strings.HasPrefix(s, strings.ToLower(prefix)) {
				out = append(out, s)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	})
	// oslo.upgradecheck's codes; a usage error exits 255 (the common code),
	// never 1 or 2, which CI reads as a warning or a failure of the cloud.
	cmdutil.OfferFormats(c, output.Prometheus)
	cmdutil.SetExitCodes(c,
		cmdutil.ExitCodeRow{Code: cmdutil.ExitOK, Meaning: "all checks succeeded"},
		cmdutil.ExitCodeRow{Code: cmdutil.ExitMore, Meaning: "at least one check warns"},
		cmdutil.ExitCodeRow{Code: cmdutil.ExitFailed, Meaning: "at least one check failed"},
	)
}

func runStatus(c *cobra.Command, f *cmdutil.Factory, o *StatusOptions) error {
	ctx := c.Context()
	usage := func(err error) error { return &cmdutil.ExitError{Code: status.ExitCrashed, Err: err} }
	// The one path the exporter's collection takes too.
	run, err := shared.RunStatus(ctx, f, o.StatusCheckOptions)
	if err != nil {
		return usage(err)
	}
	defer run.Close()
	env, rep := run.Env, run.Report
	if err := ctx.Err(); err != nil {
		return usage(err)
	}
	format := f.Format
	if o.JSON {
		format = "oslo-json"
	}
	switch format {
	case "oslo-json":
		// --json is oslo.upgradecheck's document (result 0/1/2); -f json
		// is a list of rows as every other format prints them (result
		// Success/Warning/Failure), -c and --sort-column included.
		err = status.RenderJSON(f.IO.Out, rep.Results)
	case output.Prometheus:
		fams, errs := shared.StatusFamilies(ctx, env, rep)
		for _, e := range errs {
			// What could not be read is left out of the page, not
			// published as none found.
			fmt.Fprintf(f.IO.ErrOut, "rpctl: status: left out of the metrics: %s\n", sanitize.String(e.Error()))
		}
		err = metrics.WriteText(f.IO.Out, fams)
	case output.Table, "":
		err = status.RenderTable(f.IO.Out, rep.Results, f.IO.Palette())
	default:
		rows := output.Rows{Headers: []string{"Check", "Result", "Details", "Source"}}
		for _, r := range rep.Results {
			rows.Rows = append(rows.Rows, []string{r.Check, r.Code.String(), r.Details, r.Source})
		}
		err = f.Write(rows, nil)
	}
	if err != nil {
		return usage(err)
	}
	code := rep.Exit()
	if code == status.ExitCrashed {
		// The table says which; this line tells a CI log why there is no
		// verdict.
		n := 0
		for _, r := range rep.Results {
			if r.Crashed || r.Unreadable {
				n++
			}
		}
		return &cmdutil.ExitError{Code: code, Err: fmt.Errorf("%d of %d checks could not run (a check crashed or its database cannot be read; see the table): no verdict", n, len(rep.Results))}
	}
	if code != 0 {
		return cmdutil.Exit(code)
	}
	return nil
}
