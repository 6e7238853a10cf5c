// Package samplecloud holds `rpctl sample-cloud` and `rpctl init`.
package samplecloud

import (
	"fmt"
	"math"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/rpctl/rpctl/cmd/internal/cmdutil"
	"github.com/rpctl/rpctl/cmd/internal/shared"
	"github.com/rpctl/rpctl/internal/flagnum"
	"github.com/rpctl/rpctl/internal/output"
	"github.com/rpctl/rpctl/internal/release"
	"github.com/rpctl/rpctl/samplecloud"
	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/schema"
	"github.com/rpctl/rpctl/storage/stores"
)

type sampleCloudOptions struct {
	nodesText                        flagnum.Text
	nodes, cells, badRows, instances int
	seed                             int64
	force                            bool
	release                          string
}

// NewCmdSampleCloud builds `rpctl sample-cloud`.
func NewCmdSampleCloud(f *cmdutil.Factory) *cobra.Command {
	o := sampleCloudOptions{}
	c := &cobra.Command{
		Use:   "sample-cloud",
		Short: "Fill empty Nova databases with a realistic, deterministic pre-migration cloud",
		Long: `Generate a Nova deployment as it looks before its compute_nodes capacity is moved
into Placement, and write it into the cell (and API) databases: compute nodes with NULL
and set uuids, 0.0/NULL/valid allocation ratios, pci_stats and numa_topology in every
format Nova has stored, soft-deleted rows, services, instances with flavors and
in-progress migrations. The same --seed always gives the same cloud. --release names
the release whose service versions the services report: the control services that
release's, the computes spread from it down to the oldest compute its control plane
supports (Zed: 64 over 61-64; 2025.1: 68 over 66-68), so that status on a fresh sample
cloud says what that release's nova-status would. From 2023.2 (Nova 28) on --release also
gives the rows that release's shape: each instance's compute_id and each migration's
dest_compute_id hold the id of the compute node they are on or go to, as the resource
tracker writes them since Nova 28; the rest is the same cloud. Empty databases get the
release's schema first (rpctl init --release); rows with compute_id are refused, naming the
column, by an existing schema without it.

With --db FILE the file's schemas are created if it is empty and the nodes go into its
one cell database, mapped to cell "cell1" (more cells need one --cell-db per cell). With
MySQL/MariaDB databases each cell database gets one cell (--cells defaults to their number); empty databases get the
schema first. The API database, when configured, gets cell0 and cell mappings (unless it
has some), host mappings and flavors. Nova always has cell0: it is mapped to Nova's
"<database>_cell0" beside the first cell database (with --db: the file FILE_cell0), which is
created empty with the cell schema, as nova-manage cell_v2 map_cell0 and db sync leave it.
A Placement database given (--placement-db) gets Placement's empty schema. A cell database that already has compute nodes is
refused unless --force, which deletes the rows of the tables sample-cloud writes first.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			ctx := c.Context()
			if err := o.check(); err != nil {
				return &cmdutil.ExitError{Code: cmdutil.ExitBadMaxCount, Err: err}
			}
			rel, err := shared.ParseRelease(o.release)
			if err != nil {
				return &cmdutil.ExitError{Code: cmdutil.ExitBadMaxCount, Err: err}
			}
			f.CreateFiles = true // this command may create the SQLite files it is given
			if f.Embedded != "" && o.cells > 1 {
				// One file is one cell database: spreading nodes over
				// "cells" that all land in it would only pretend.
				return cmdutil.BadCommandLine("--cells %d: the embedded file (--db) holds one cell; give one --cell-db per cell (and --api-db) for more", o.cells)
			}
			// A pre-migration cloud has no providers: a Placement database
			// given (--placement-db) gets its empty schema, as
			// Placement-manage db sync leaves it, so that the commands that
			// follow find its tables.
			dbs, err := f.Databases(ctx, storage.NeedCells, storage.NeedAPI|storage.NeedPlacement)
			if err != nil {
				return err
			}
			defer dbs.Close()
			if err := initSchemas(c, dbs, rel); err != nil {
				return err
			}
			cells := o.cells
			if cells == 0 {
				cells = 1
				if !dbs.Embedded {
					cells = len(dbs.Cells)
				}
			}
			if o.instances == 0 {
				o.instances = -1 // Options: 0 is the default, negative none
			}
			cloud, err := samplecloud.GenerateContext(ctx, samplecloud.Options{Nodes: o.nodes, Cells: cells, Seed: o.seed, BadRows: o.badRows, MaxInstancesPerNode: o.instances, Release: rel})
			if err != nil {
				return err
			}
			sum, err := samplecloud.Write(ctx, stores.SampleTarget(dbs), cloud, samplecloud.WriteOptions{Force: o.force})
			if err != nil {
				return err
			}
			rows := output.Rows{Headers: []string{"cell", "database", "compute_nodes", "deleted_compute_nodes", "bad_compute_nodes",
				"services", "instances", "migrations", "host_mappings", "flavors"}}
			none := output.Cell{}
			for _, cs := range sum.Cells {
				rows.Add(cs.Cell, cs.Database, cs.ComputeNodes, cs.Deleted, cs.Bad, cs.Services, cs.Instances, cs.Migrations, none, none)
			}
			if sum.API != "" {
				rows.Add("(API)", sum.API, none, none, none, none, none, none, sum.HostMappings, sum.Flavors)
			}
			return f.Write(rows, nil)
		},
	}
	fl := c.Flags()
	o.nodesText = flagnum.Text(strconv.Itoa(samplecloud.DefaultNodes))
	fl.Var(&o.nodesText, "nodes", fmt.Sprintf("live, valid compute nodes to generate, 1 to %d (about 5%% more soft-deleted rows are added)", samplecloud.MaxNodes))
	fl.IntVar(&o.cells, "cells", 0, "cells to spread the nodes over (default: the number of cell databases; --db has one)")
	fl.Int64Var(&o.seed, "seed", 1, "random seed; the same seed gives the same cloud")
	fl.IntVar(&o.badRows, "bad-rows", 0, "malformed compute nodes to add to cell1, for testing error handling")
	fl.IntVar(&o.instances, "max-instances-per-node", samplecloud.DefaultMaxInstancesPerNode, "instances per live node are drawn from 0..this")
	fl.BoolVar(&o.force, "force", false, "write even into cells that have compute nodes, deleting the sample tables' rows first")
	shared.AddReleaseFlag(fl, &o.release, "whose schemas empty databases get and whose row shapes the cloud has")
	return c
}

// check refuses counts out of range before any database is opened: a
// negative --nodes used to mean the default, a huge one grew until the
// memory ran out.
func (o *sampleCloudOptions) check() error {
	n, err := flagnum.Count("nodes", string(o.nodesText), 1, samplecloud.MaxNodes)
	if err != nil {
		return err
	}
	o.nodes = int(n)
	for _, v := range []struct {
		flag string
		n    int
	}{{"cells", o.cells}, {"bad-rows", o.badRows}, {"max-instances-per-node", o.instances}} {
		if err := flagnum.InRange(v.flag, int64(v.n), 0, math.MaxInt32); err != nil {
			return err
		}
	}
	return nil
}

// initSchemas creates release rel's schemas in empty databases, as rpctl
// init --release does; complete schemas (say, from Nova's db sync) are
// left alone.
func initSchemas(c *cobra.Command, dbs *storage.Databases, rel release.Name) error {
	ctx := c.Context()
	if dbs.Embedded {
		_, err := schema.InitRelease(ctx, dbs.Cells[0], rel, schema.PartCell, schema.PartAPI, schema.PartPlacement)
		return err
	}
	for _, db := range dbs.Cells {
		if _, err := schema.InitRelease(ctx, db, rel, schema.PartCell); err != nil {
			return err
		}
	}
	if dbs.API != nil {
		if _, err := schema.InitRelease(ctx, dbs.API, rel, schema.PartAPI); err != nil {
			return err
		}
	}
	if dbs.Placement != nil {
		if _, err := schema.InitRelease(ctx, dbs.Placement, rel, schema.PartPlacement); err != nil {
			return err
		}
	}
	return nil
}
