// Package cmd assembles rpctl's command tree (NewCmdRoot) and runs it as a
// program (Main, Run). It only assembles: each command group is a package
// of its own below it (cmd/migrate, cmd/status, cmd/inventory, ...), laid out
// as the GitHub CLI's pkg/cmd/<noun>, and what they share lives in
// cmd/internal. Commands are thin: they parse flags into an options struct,
// ask the Factory for streams and databases, call a domain package and
// print. They hold no SQL and no domain rules.
package cmd

import (
	"github.com/spf13/cobra"

	allocationcmd "github.com/rpctl/rpctl/cmd/allocation"
	candidatescmd "github.com/rpctl/rpctl/cmd/candidates"
	capacitycmd "github.com/rpctl/rpctl/cmd/capacity"
	claimscmd "github.com/rpctl/rpctl/cmd/claims"
	computenodecmd "github.com/rpctl/rpctl/cmd/computenode"
	exportercmd "github.com/rpctl/rpctl/cmd/exporter"
	"github.com/rpctl/rpctl/cmd/internal/cmdutil"
	inventorycmd "github.com/rpctl/rpctl/cmd/inventory"
	migratecmd "github.com/rpctl/rpctl/cmd/migrate"
	providercmd "github.com/rpctl/rpctl/cmd/provider"
	resourceclasscmd "github.com/rpctl/rpctl/cmd/resourceclass"
	samplecloudcmd "github.com/rpctl/rpctl/cmd/samplecloud"
	statuscmd "github.com/rpctl/rpctl/cmd/status"
	traitcmd "github.com/rpctl/rpctl/cmd/trait"
	usagecmd "github.com/rpctl/rpctl/cmd/usage"
)

// NewCmdRoot builds the rpctl command tree.
func NewCmdRoot(f *cmdutil.Factory, version string) *cobra.Command {
	root := &cobra.Command{
		Use:   "rpctl",
		Short: "Move Nova compute-node capacity into Placement, check upgrades, and query a built-in Placement core",
		Long: `rpctl is an operator's tool for Nova's legacy compute_nodes and Placement.

Point it at the databases in one of three ways:
  --db FILE                 the embedded SQLite file (cell, API and Placement in one)
  --cell-db/--api-db/--placement-db URL   SQLAlchemy URLs or go-sql-driver DSNs
  --config-file nova.conf   [database], [api_database], [placement_database] connection
                            (default: /etc/nova/nova.conf, /etc/placement/placement.conf;
                            --config-dir DIR adds every DIR/*.conf; $option substitution)

Commands that read or edit Placement can use its REST API instead:
  --os-cloud NAME           a clouds.yaml entry (or the OS_* variables), Keystone auth
  --os-endpoint URL --os-token T   a noauth2 Placement service`,
		Version:       version,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			f.IO.Verbose = f.Verbose && !f.Quiet
			if err := cmdutil.SetupLogging(cmd, f); err != nil {
				return err
			}
			if err := cmdutil.ApplyNovaRelease(cmd, f); err != nil {
				return err
			}
			return cmdutil.ValidateOutputFlags(cmd, f)
		},
	}
	pf := root.PersistentFlags()
	pf.StringArrayVar(&f.ConfigFiles, "config-file", nil, "oslo.config file to read (repeatable; later files win; default: /etc/nova/nova.conf and /etc/placement/placement.conf when they exist and no database flag is given)")
	pf.StringArrayVar(&f.ConfigDirs, "config-dir", nil, "read every *.conf in this directory, in name order, after the --config-file files (repeatable)")
	pf.StringVar(&f.Embedded, "db", "", "embedded SQLite database file holding the cell, API and Placement schemas")
	pf.StringArrayVar(&f.CellDBs, "cell-db", nil, "Nova cell database URL (repeatable: exactly these cells)")
	pf.StringVar(&f.APIDB, "api-db", "", "Nova API database URL")
	pf.StringVar(&f.PlacementDB, "placement-db", "", "Placement database URL")
	pf.BoolVar(&f.Verbose, "verbose", false, "print more detail on standard error")
	pf.BoolVar(&f.Debug, "debug", false, "log every SQL statement (shape and timing) and HTTP request on standard error (or --log-file), passwords redacted")
	pf.StringVar(&f.LogFile, "log-file", "", "write log records to this new file instead of standard error (an existing file: --force appends)")
	pf.BoolVar(&f.Force, "force", false, "let --out, --plot and --log-file replace (a log: append to) an existing file; a database or config file rpctl reads is never written")
	pf.BoolVarP(&f.Quiet, "quiet", "q", false, "print nothing on standard error but errors")
	pf.StringVar(&f.NovaReleaseFlag, "nova-release", "", cmdutil.NovaReleaseHelp)
	root.MarkFlagsMutuallyExclusive("quiet", "verbose")
	cmdutil.MarkPathFlags(pf, "output", "log-file")
	cmdutil.MarkPathFlags(pf, "input", "config-file", "config-dir", "db", "cell-db", "api-db", "placement-db")
	cmdutil.MarkSecretFlags(pf, "url", "cell-db", "api-db", "placement-db")
	cmdutil.AddOutputFlags(root, f)
	cmdutil.AddAPIFlags(pf, &f.API)

	root.AddCommand(
		samplecloudcmd.NewCmdInit(f),
		samplecloudcmd.NewCmdSampleCloud(f),
		computenodecmd.NewCmdComputeNode(f),
		migratecmd.NewCmdMigrate(f),
		statuscmd.NewCmdStatus(f, nil),
		statuscmd.NewCmdUpgrade(f, nil),
		candidatescmd.NewCmdCandidates(f, nil),
		capacitycmd.NewCmdCapacity(f, nil),
		claimscmd.NewCmdClaims(f),
		exportercmd.NewCmdExporter(f, nil),
	)
	// Ad hoc edits of Placement (issue #10): database or API backend.
	adhoc := []*cobra.Command{providercmd.NewCmdProvider(f), inventorycmd.NewCmdInventory(f), usagecmd.NewCmdUsage(f), resourceclasscmd.NewCmdResourceClass(f), traitcmd.NewCmdTrait(f), allocationcmd.NewCmdAllocation(f)}
	cmdutil.SetStoreExitCodes(adhoc...)
	cmdutil.CompleteStoreArgs(f, adhoc...)
	root.AddCommand(adhoc...)
	// Subcommands under parents another file owns, once every command exists.
	providercmd.AttachProviderApply(root, f)
	b := cmdutil.Build
	if b.Version == "" {
		b.Version = version
	}
	root.SetVersionTemplate(cmdutil.VersionString(b))
	cmdutil.AddOptionsTopic(root)
	cmdutil.SetExamples(commandExample)
	cmdutil.FinishCommandTree(root)
	cmdutil.RegisterCompletions(root, f)
	return root
}
