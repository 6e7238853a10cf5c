package cmd

import (
	"github.com/spf13/cobra"

	"github.com/rpctl/rpctl/output"
)

// NewCmdRoot builds the rpctl command tree.
func NewCmdRoot(f *Factory, version string) *cobra.Command {
	root := &cobra.Command{
		Use:   "rpctl",
		Short: "Move Nova compute-node capacity into Placement, check upgrades, and query a built-in Placement core",
		Long: `rpctl is an operator's tool for Nova's legacy compute_nodes and Placement.

Point it at the databases in one of three ways:
  --db FILE                 the embedded SQLite file (cell, API and Placement in one)
  --cell-db/--api-db/--placement-db URL   SQLAlchemy URLs or go-sql-driver DSNs
  --config-file nova.conf   [database], [api_database], [placement_database] connection

Commands that read or edit Placement can use its REST API instead:
  --os-cloud NAME           a clouds.yaml entry (or the OS_* variables), Keystone auth
  --os-endpoint URL --os-token T   a noauth2 Placement service`,
		Version:       version,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			f.IO.Verbose = f.Verbose
			return output.ValidateFormat(f.Format)
		},
	}
	pf := root.PersistentFlags()
	pf.StringArrayVar(&f.ConfigFiles, "config-file", nil, "oslo.config file to read (repeatable; later files win), e.g. /etc/nova/nova.conf")
	pf.StringVar(&f.Embedded, "db", "", "embedded SQLite database file holding the cell, API and Placement schemas")
	pf.StringArrayVar(&f.CellDBs, "cell-db", nil, "Nova cell database URL (repeatable: exactly these cells)")
	pf.StringVar(&f.APIDB, "api-db", "", "Nova API database URL")
	pf.StringVar(&f.PlacementDB, "placement-db", "", "Placement database URL")
	pf.StringVarP(&f.Format, "format", "f", output.Table, "output format: table, json, yaml or value")
	pf.BoolVar(&f.Verbose, "verbose", false, "print more detail on standard error")
	addAPIFlags(pf, &f.API)

	root.AddCommand(
		NewCmdInit(f),
		NewCmdSampleCloud(f),
		NewCmdComputeNode(f),
		NewCmdMigrate(f),
		NewCmdStatus(f),
		NewCmdUpgrade(f),
		NewCmdCandidates(f),
		NewCmdClaims(f),
	)
	// Ad hoc edits of Placement (issue #10): database or API backend.
	root.AddCommand(NewCmdProvider(f), NewCmdInventory(f), NewCmdUsage(f), NewCmdResourceClass(f), NewCmdTrait(f))
	return root
}
