package samplecloud

import (
	"context"

	"github.com/rpctl/rpctl/internal/nova"
	"github.com/rpctl/rpctl/internal/release"
)

// CellDB is one Nova cell database as sample-cloud fills it.
type CellDB interface {
	// Name is the name the database was opened under (the embedded
	// database's only cell is "cell1").
	Name() string
	// Label names the database in messages, without its password.
	Label() string
	CountComputeNodes(ctx context.Context, includeDeleted bool) (int, error)
	// InsertCellRows writes the rows in one transaction, ids as given.
	InsertCellRows(ctx context.Context, rows nova.CellRows) error
	// ConnectionURL is the cell_mappings.database_connection that reaches
	// this database.
	ConnectionURL() (string, error)
	// CreateCell0 creates Nova's cell0 database beside this one ("<database>_cell0",
	// nova-manage cell_v2 map_cell0's default) with the cell schema, as
	// map_cell0 then db sync leave it (release rel's schema), and returns
	// its connection URL.
	CreateCell0(ctx context.Context, rel release.Name) (string, error)
}

// APIDB is the Nova API database as sample-cloud fills it.
type APIDB interface {
	Label() string
	CountFlavors(ctx context.Context) (int, error)
	CellMappings(ctx context.Context) ([]nova.CellMapping, error)
	// InsertAPIRows writes the rows in one transaction, ids as given.
	InsertAPIRows(ctx context.Context, rows nova.APIRows) error
}

// Target is where a sample cloud is written.
type Target struct {
	Cells []CellDB
	API   APIDB // nil when no API database is configured
	// Embedded is the single SQLite file holding every schema: all the
	// generated cells go into its one cell.
	Embedded bool
}
