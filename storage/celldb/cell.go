// Package celldb holds the SQL of a Nova cell database (compute_nodes,
// services, instances, migrations): the domains' cell stores.
package celldb

import (
	"context"
	"strings"
	"time"

	"github.com/rpctl/rpctl/claims"
	"github.com/rpctl/rpctl/internal/nova"
	"github.com/rpctl/rpctl/internal/release"
	"github.com/rpctl/rpctl/migrate"
	"github.com/rpctl/rpctl/samplecloud"
	"github.com/rpctl/rpctl/status"
	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/schema"
)

var (
	_ claims.Cell          = (*Cell)(nil)
	_ claims.CellView      = (*Cell)(nil)
	_ claims.PCICell       = (*Cell)(nil)
	_ migrate.Cell         = (*Cell)(nil)
	_ status.Cell          = (*Cell)(nil)
	_ status.MachineTypes  = (*Cell)(nil)
	_ status.ReleaseSource = (*Cell)(nil)
	_ samplecloud.CellDB   = (*Cell)(nil)
)

// New returns the store of an opened cell database.
func New(db *storage.DB) *Cell { return &Cell{DB: db} }

// Cells wraps every opened cell database.
func Cells(dbs []*storage.DB) []*Cell {
	out := make([]*Cell, len(dbs))
	for i, db := range dbs {
		out[i] = New(db)
	}
	return out
}

// Name is the cell's name.
func (c *Cell) Name() string { return c.DB.Name }

// ScanNodesForInventory implements migrate.Cell.
func (c *Cell) ScanNodesForInventory(ctx context.Context, fn func(nova.ComputeNode)) error {
	return ScanNodesForInventory(ctx, c.DB, fn)
}

// SetComputeNodeUUIDs implements migrate.Cell.
func (c *Cell) SetComputeNodeUUIDs(ctx context.Context, want map[int64]string) (map[int64]string, error) {
	return SetComputeNodeUUIDs(ctx, c.DB, want)
}

// ListEmptyRatioNodes implements migrate.Cell.
func (c *Cell) ListEmptyRatioNodes(ctx context.Context, afterID int64, limit int) ([]migrate.NodeRatios, error) {
	return ListEmptyRatioNodes(ctx, c.DB, afterID, limit)
}

// FillEmptyRatios implements migrate.Cell.
func (c *Cell) FillEmptyRatios(ctx context.Context, ids []int64, fill migrate.RatioFill, now time.Time) (int, error) {
	return FillEmptyRatios(ctx, c.DB, ids, fill, now)
}

// ListNodeCapacities implements status.Cell.
func (c *Cell) ListNodeCapacities(ctx context.Context) ([]status.NodeCapacity, error) {
	return ListNodeCapacities(ctx, c.DB)
}

// ServiceVersionSummary implements status.Cell.
func (c *Cell) ServiceVersionSummary(ctx context.Context, binaries []string, threshold int64, limit int) ([]status.ServiceVersions, error) {
	return ServiceVersionSummary(ctx, c.DB, binaries, threshold, limit)
}

// Label names the database in messages, without its password.
func (c *Cell) Label() string { return c.DB.Label() }

// CountComputeNodes implements samplecloud.CellDB.
func (c *Cell) CountComputeNodes(ctx context.Context, includeDeleted bool) (int, error) {
	return CountComputeNodes(ctx, c.DB, includeDeleted)
}

// InsertCellRows implements samplecloud.CellDB.
func (c *Cell) InsertCellRows(ctx context.Context, rows nova.CellRows) error {
	return InsertCellRows(ctx, c.DB, rows)
}

// ConnectionURL implements samplecloud.CellDB.
func (c *Cell) ConnectionURL() (string, error) {
	return storage.CellConnectionURL(c.DB, false)
}

// CreateCell0 implements samplecloud.CellDB.
func (c *Cell) CreateCell0(ctx context.Context, rel release.Name) (string, error) {
	return schema.CreateCell0Release(ctx, c.DB, rel)
}

// ServiceVersionRanges implements status.ReleaseSource.
func (c *Cell) ServiceVersionRanges(ctx context.Context, binaries []string) ([]status.ServiceVersionRange, error) {
	return ServiceVersionRanges(ctx, c.DB, binaries)
}

// CellSchemaHead implements status.ReleaseSource: alembic_version's
// version_num, "" when no db sync stamped the schema.
func (c *Cell) CellSchemaHead(ctx context.Context) (string, error) {
	ok, err := c.DB.TableExists(ctx, "alembic_version")
	if err != nil || !ok {
		return "", err
	}
	var heads []string
	if err := c.DB.SelectContext(ctx, &heads, `SELECT version_num FROM alembic_version`); err != nil {
		return "", c.DB.Errorf("read alembic_version: %w", storage.CleanError(err))
	}
	if len(heads) != 1 {
		return strings.Join(heads, ","), nil
	}
	return heads[0], nil
}
