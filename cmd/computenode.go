package cmd

import (
	"strconv"

	"github.com/spf13/cobra"

	"github.com/rpctl/rpctl/migrate"
	"github.com/rpctl/rpctl/nova"
	"github.com/rpctl/rpctl/output"
	"github.com/rpctl/rpctl/storage"
)

// NewCmdComputeNode builds `rpctl compute-node`.
func NewCmdComputeNode(f *Factory) *cobra.Command {
	c := &cobra.Command{
		Use:   "compute-node",
		Short: "Inspect the legacy compute_nodes rows of the Nova cells",
		Args:  cobra.NoArgs,
	}
	c.AddCommand(newCmdComputeNodeList(f))
	return c
}

// computeNodeRow is one compute node in JSON/YAML output.
type computeNodeRow struct {
	Cell string `json:"cell"`
	nova.ComputeNode
}

func newCmdComputeNodeList(f *Factory) *cobra.Command {
	var cell string
	var all bool
	c := &cobra.Command{
		Use:   "list",
		Short: "List compute nodes with their capacity and allocation ratios",
		Long: `List the compute_nodes rows of every cell (or of --cell NAME), live ones only unless
--all. A NULL uuid shows as "-", a NULL allocation ratio as "NULL" (Nova treats NULL
and 0.0 alike as "unset"; they are shown apart). JSON and YAML carry every column.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			ctx := c.Context()
			dbs, err := f.Databases(ctx, storage.NeedCells, 0)
			if err != nil {
				return err
			}
			defer dbs.Close()
			if cell != "" {
				if err := selectCells(dbs, []string{cell}); err != nil {
					return err
				}
			}
			rows := output.Rows{Headers: []string{"Cell", "ID", "UUID", "Host", "Hypervisor Hostname", "vCPUs", "Memory MB", "Local GB",
				"CPU Ratio", "RAM Ratio", "Disk Ratio", "Deleted"}, Align: output.AlignLeft}
			data := []computeNodeRow{}
			for _, db := range dbs.Cells {
				nodes, err := storage.ListComputeNodes(ctx, db, all)
				if err != nil {
					return err
				}
				for _, n := range nodes {
					rows.Rows = append(rows.Rows, []string{db.Name, strconv.FormatInt(n.ID, 10), strOr(n.UUID, "-"), strOr(n.Host, "-"),
						strOr(n.HypervisorHostname, "-"), strconv.FormatInt(n.VCPUs, 10), strconv.FormatInt(n.MemoryMB, 10),
						strconv.FormatInt(n.LocalGB, 10), migrate.FormatRatio(n.CPUAllocationRatio), migrate.FormatRatio(n.RAMAllocationRatio),
						migrate.FormatRatio(n.DiskAllocationRatio), strconv.FormatBool(n.IsDeleted())})
					data = append(data, computeNodeRow{Cell: db.Name, ComputeNode: n})
				}
			}
			return f.Write(rows, data)
		},
	}
	c.Flags().StringVar(&cell, "cell", "", "only this cell (its cell mapping name, or the --cell-db database name)")
	c.Flags().BoolVar(&all, "all", false, "include soft-deleted rows")
	return c
}

func strOr(s *string, def string) string {
	if s == nil {
		return def
	}
	return *s
}
