// Package cmd assembles rpctl's command tree (NewCmdRoot) and runs it as a
// program (Main, Run). It only assembles: each command group is a package
// of its own below it (cmd/migrate, cmd/status, cmd/inventory, ...), laid out
// as the GitHub CLI's pkg/cmd/<noun>, and what they share lives in
// cmd/internal. Commands are thin: they parse flags into an options struct,
// ask the Factory for streams and databases, call a domain package and
// print. They hold no SQL and no domain rules.
package cmd

import (
	"runtime"
	"slices"
	"strings"

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

// topCommand is one of rpctl's top-level commands and what builds it.
type topCommand struct {
	name string
	// adhoc: an ad hoc edit of Placement (issue #10), on the database or
	// the API backend: the store's exit codes and argument completion.
	adhoc bool
	// oneP: the command does its work on one goroutine, so the process
	// runs on one P from before its tree is built (see newCmdRoot).
	oneP  bool
	build func(f *cmdutil.Factory) *cobra.Command
}

// topCommands is every top-level command (the options topic and cobra's
// help and completion aside).
var topCommands = []topCommand{
	{name: "init", build: samplecloudcmd.NewCmdInit},
	{name: "sample-cloud", build: samplecloudcmd.NewCmdSampleCloud},
	{name: "compute-node", build: computenodecmd.NewCmdComputeNode},
	{name: "migrate", build: migratecmd.NewCmdMigrate},
	{name: "status", build: func(f *cmdutil.Factory) *cobra.Command { return statuscmd.NewCmdStatus(f, nil) }},
	{name: "upgrade", build: func(f *cmdutil.Factory) *cobra.Command { return statuscmd.NewCmdUpgrade(f, nil) }},
	{name: "candidates", oneP: true, build: func(f *cmdutil.Factory) *cobra.Command { return candidatescmd.NewCmdCandidates(f, nil) }},
	{name: "capacity", build: func(f *cmdutil.Factory) *cobra.Command { return capacitycmd.NewCmdCapacity(f, nil) }},
	{name: "claims", build: claimscmd.NewCmdClaims},
	{name: "exporter", build: func(f *cmdutil.Factory) *cobra.Command { return exportercmd.NewCmdExporter(f, nil) }},
	{name: "provider", adhoc: true, build: providercmd.NewCmdProvider},
	{name: "inventory", adhoc: true, build: inventorycmd.NewCmdInventory},
	{name: "usage", adhoc: true, build: usagecmd.NewCmdUsage},
	{name: "resource-class", adhoc: true, build: resourceclasscmd.NewCmdResourceClass},
	{name: "trait", adhoc: true, build: traitcmd.NewCmdTrait},
	{name: "allocation", adhoc: true, build: allocationcmd.NewCmdAllocation},
}

// NewCmdRoot builds the whole rpctl command tree.
func NewCmdRoot(f *cmdutil.Factory, version string) *cobra.Command {
	return newCmdRoot(f, version, nil, true)
}

// NewCmdRootFor builds the tree that running args needs: the root and,
// when args name a top-level command, only that command's subtree, the
// same as in the whole tree (TestRootForSameSubtree). Building every
// command's flags was about a millisecond and 600 KB of each run's start
// (pflag renders every repeatable flag's default through a CSV writer of
// its own); `rpctl candidates` is run once per query (issue 35). Help,
// completion, an unknown command and a command line not understood here
// get the whole tree.
func NewCmdRootFor(f *cmdutil.Factory, version string, args []string) *cobra.Command {
	return newCmdRoot(f, version, args, false)
}

// versionFlag is cobra's flag on the root: it prints the version and
// runs no command.
const versionFlag = "--version"

// commandName is the top-level command args name: the first word that
// is not a flag of root's or a flag's value, or versionFlag when that
// comes first; "" when a word before it is not understood ("--", a flag
// root does not know, bundled shorthands).
func commandName(root *cobra.Command, args []string) string {
	pf := root.PersistentFlags()
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return ""
		case a == versionFlag:
			return a
		case strings.HasPrefix(a, "--"):
			name, _, hasValue := strings.Cut(a[2:], "=")
			fl := pf.Lookup(name)
			if fl == nil {
				return ""
			}
			if !hasValue && fl.NoOptDefVal == "" {
				i++ // its value
			}
		case strings.HasPrefix(a, "-") && len(a) > 1:
			fl := pf.ShorthandLookup(a[1:2])
			if fl == nil || (len(a) > 2 && fl.NoOptDefVal != "") {
				return "" // unknown, or bundled bool shorthands
			}
			if len(a) == 2 && fl.NoOptDefVal == "" {
				i++ // -f json
			}
		default:
			return a
		}
	}
	return ""
}

// newCmdRoot builds the root and every top-level command (all) or the
// one args name, if they name one.
func newCmdRoot(f *cmdutil.Factory, version string, args []string, all bool) *cobra.Command {
	root := newRootFlags(f, version)
	only := ""
	if n := commandName(root, args); !all && (n == versionFlag || slices.ContainsFunc(topCommands, func(t topCommand) bool { return t.name == n })) {
		only = n // --version: no command at all
	}
	want := func(name string) bool { return only == "" || name == only }
	var adhoc []*cobra.Command
	for _, t := range topCommands {
		if !want(t.name) {
			continue
		}
		if only != "" && t.oneP {
			// The second P is given back before the command allocates
			// (and, in Main, before the signal watcher starts): later,
			// giving it back returned every span it had cached to the
			// heap's central lists, a fresh page for each list, and the
			// runtime had handed work between the two Ps meanwhile.
			// `rpctl candidates` on placement-perfload: page faults
			// 1,548 -> 1,354 (median of 5), 0.67 ms of 14 (paired median
			// of 201 alternated runs; issue 35). The command still asks
			// for one P itself, for callers that build the whole tree.
			runtime.GOMAXPROCS(1)
		}
		c := t.build(f)
		if t.adhoc {
			adhoc = append(adhoc, c)
		}
		root.AddCommand(c)
	}
	cmdutil.SetStoreExitCodes(adhoc...)
	cmdutil.CompleteStoreArgs(f, adhoc...)
	// Subcommands under parents another file owns, once every command exists.
	if want("provider") {
		providercmd.AttachProviderApply(root, f)
	}
	// Cobra prints the version only when the line resolves to the root
	// (the flag is the root's own): a line that names a command does not
	// need it, and composing it (the schemas' releases, read from the
	// embedded dumps) was a fifth of building the tree for one command.
	if only == "" || only == versionFlag {
		b := cmdutil.Build
		if b.Version == "" {
			b.Version = version
		}
		root.SetVersionTemplate(cmdutil.VersionString(b))
	}
	cmdutil.AddOptionsTopic(root)
	cmdutil.SetExamples(commandExample)
	cmdutil.FinishCommandTree(root)
	cmdutil.RegisterCompletions(root, f)
	return root
}

// newRootFlags is the root command and its (global) flags.
func newRootFlags(f *cmdutil.Factory, version string) *cobra.Command {
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
	return root
}
