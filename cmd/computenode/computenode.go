// Package computenode holds `rpctl compute-node list`.
package computenode

import (
	"slices"

	"github.com/spf13/cobra"

	"github.com/rpctl/rpctl/cmd/internal/cmdutil"
	"github.com/rpctl/rpctl/internal/output"
	"github.com/rpctl/rpctl/migrate"
	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/celldb"
)

// NewCmdComputeNode builds `rpctl compute-node`.
func NewCmdComputeNode(f *cmdutil.Factory) *cobra.Command {
	c := &cobra.Command{
		Use:   "compute-node",
		Short: "Inspect the legacy compute_nodes rows of the Nova cells",
		Args:  cobra.NoArgs,
	}
	c.AddCommand(newCmdComputeNodeList(f))
	return c
}

// computeNodeColumns are compute-node list's columns; --long adds every
// other column of compute_nodes, by its name.
var computeNodeColumns = []string{"cell", "id", "uuid", "host", "hypervisor_hostname", "vcpus", "memory_mb", "local_gb",
	"cpu_allocation_ratio", "ram_allocation_ratio", "disk_allocation_ratio", "deleted"}

func newCmdComputeNodeList(f *cmdutil.Factory) *cobra.Command {
	var cell string
	var all, long bool
	c := &cobra.Command{
		Use:   "list",
		Short: "List compute nodes with their capacity and allocation ratios",
		Long: `List the compute_nodes rows of every cell (or of --cell NAME), live ones only unless
--all. A NULL uuid shows as "-", a NULL allocation ratio as "NULL" in tables (null in
json; Nova treats NULL and 0.0 alike as "unset"; they are shown apart). --long adds every
other column of compute_nodes (pci_stats, numa_topology, ...), in every format.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			ctx := c.Context()
			dbs, err := f.Databases(ctx, storage.NeedCells, 0)
			if err != nil {
				return err
			}
			defer dbs.Close()
			if cell != "" {
				if err := cmdutil.SelectCells(ctx, f, dbs, []string{cell}); err != nil {
					return err
				}
			}
			rows := output.Rows{Headers: computeNodeColumns, Align: output.AlignLeft}
			for _, db := range dbs.Cells {
				nodes, err := celldb.ListComputeNodes(ctx, db, all)
				if err != nil {
					return err
				}
				for _, n := range nodes {
					ratio := func(v *float64) output.Cell { return output.Cell{Text: migrate.FormatRatio(v), Value: v} }
					cells := []any{db.Name, n.ID, output.Cell{Text: strOr(n.UUID, "-"), Value: n.UUID}, output.Cell{Text: strOr(n.Host, "-"), Value: n.Host},
						output.Cell{Text: strOr(n.HypervisorHostname, "-"), Value: n.HypervisorHostname}, n.VCPUs, n.MemoryMB, n.LocalGB,
						ratio(n.CPUAllocationRatio), ratio(n.RAMAllocationRatio), ratio(n.DiskAllocationRatio), n.IsDeleted()}
					if long {
						names, vals := output.Fields(n)
						for i, name := range names {
							if !slices.Contains(computeNodeColumns, name) {
								if len(rows.Rows) == 0 {
									rows.Headers = append(rows.Headers, name)
								}
								cells = append(cells, vals[i])
							}
						}
					}
					rows.Add(cells...)
				}
			}
			return f.Write(rows, nil)
		},
	}
	c.Flags().StringVar(&cell, "cell", "", "only this cell (its cell mapping name, or the --cell-db database name)")
	c.Flags().BoolVar(&all, "all", false, "include soft-deleted rows")
	c.Flags().BoolVar(&long, "long", false, "add every other column of compute_nodes")
	return c
}

func strOr(s *string, def string) string {
	if s == nil {
		return def
	}
	return *s
}
