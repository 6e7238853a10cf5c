package samplecloud

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/rpctl/rpctl/cmd/internal/cmdutil"
	"github.com/rpctl/rpctl/cmd/internal/shared"
	"github.com/rpctl/rpctl/internal/output"
	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/schema"
)

// NewCmdInit builds `rpctl init`.
func NewCmdInit(f *cmdutil.Factory) *cobra.Command {
	var rel string
	c := &cobra.Command{
		Use:   "init",
		Short: "Create the cell, API and Placement schemas (as --release's Nova and Placement do) in empty databases",
		Long: `Create the schemas rpctl uses, exactly as --release's Nova and Placement db sync create
them, in the embedded file (--db) or in empty MySQL/MariaDB databases (--cell-db, --api-db,
--placement-db): zed as Nova 26.2.2 and Placement 8.0.0, 2025.1 as Nova 31.0.0 (instances
.compute_id, migrations.dest_compute_id) and Placement 13.0.0 (five indexes fewer, alembic
a082b8bb98d0). The Placement database is stamped with that release's alembic revision and
given its standard resource classes and traits (Zed's 345, 2023.1's 348, 2023.2's and
2024.1's 349, 2024.2's 353, 2025.1's 359). Databases whose schema is already complete are
left alone, whichever release made them.

For 2023.1 to 2024.2, known by rules only, it creates what their own migrations create
for these tables: 2023.1 Zed's schema without instances' duplicate uuid index (Nova 27's
960aac0e09ea), 2023.2 to 2024.2 2025.1's (their later migrations touch no table rpctl
holds) — compared with Nova 31's and Placement 13's own migrations run to each release's
alembic heads.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			ctx := c.Context()
			name, err := shared.ParseRelease(rel)
			if err != nil {
				return &cmdutil.ExitError{Code: cmdutil.ExitBadMaxCount, Err: err}
			}
			f.CreateFiles = true // this command may create the SQLite files it is given
			// The API schema comes first: the cells are found through its
			// cell_mappings, a table a new API database does not have yet.
			dbs, err := f.Databases(ctx, 0, storage.NeedAPI|storage.NeedPlacement)
			if err != nil {
				return err
			}
			defer dbs.Close()
			rows := output.Rows{Headers: []string{"schema", "database", "state", "tables"}}
			do := func(db *storage.DB, part schema.Part) error {
				res, err := schema.InitRelease(ctx, db, name, part)
				for _, r := range res {
					state := "created"
					if len(r.Created) == 0 {
						state = "already present"
					}
					rows.Add(string(r.Part), db.Label(), state, len(r.Created)+len(r.Present))
				}
				return err
			}
			if dbs.API != nil {
				if err := do(dbs.API, schema.PartAPI); err != nil {
					return err
				}
			}
			cells := dbs.Cells // the embedded file's one cell, already open
			if !dbs.Embedded {
				cdbs, err := f.Databases(ctx, 0, storage.NeedCells)
				if err != nil {
					return err
				}
				defer cdbs.Close()
				cells = cdbs.Cells
			}
			for _, c := range cells {
				if err := do(c, schema.PartCell); err != nil {
					return err
				}
			}
			if dbs.Placement != nil {
				if err := do(dbs.Placement, schema.PartPlacement); err != nil {
					return err
				}
			}
			if len(rows.Rows) == 0 {
				return fmt.Errorf("%w: give --db FILE, or --cell-db/--api-db/--placement-db URLs, or --config-file", storage.ErrNoDatabase)
			}
			return f.Write(rows, nil)
		},
	}
	shared.AddReleaseFlag(c.Flags(), &rel, "whose schemas are created and whose standard traits are synced")
	return c
}
