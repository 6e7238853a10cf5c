// Package stores wires opened databases to the stores the domains declare:
// a cell database to migrate.Cell and status.Cell, the Placement database
// to migrate.Placement and status.Placement, all of them to the sample
// cloud writer. A missing database stays a nil interface (never a typed
// nil), which is how the domains tell "not configured".
package stores

import (
	"context"

	"github.com/rpctl/rpctl/internal/nova"
	"github.com/rpctl/rpctl/migrate"
	"github.com/rpctl/rpctl/samplecloud"
	"github.com/rpctl/rpctl/status"
	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/apidb"
	"github.com/rpctl/rpctl/storage/celldb"
	"github.com/rpctl/rpctl/storage/placementdb"
)

// MigrateCells wraps cell databases for the migrations.
func MigrateCells(dbs []*storage.DB) []migrate.Cell { return cells[migrate.Cell](dbs) }

// MigratePlacement wraps the Placement database for the migrations.
func MigratePlacement(db *storage.DB) migrate.Placement {
	if db == nil {
		return nil
	}
	return placementdb.New(db)
}

// StatusCells wraps cell databases for the upgrade checks.
func StatusCells(dbs []*storage.DB) []status.Cell { return cells[status.Cell](dbs) }

// StatusPlacement wraps the Placement database for the upgrade checks.
func StatusPlacement(db *storage.DB) status.Placement {
	if db == nil {
		return nil
	}
	return placementdb.New(db)
}

// SampleTarget is where sample-cloud writes, for a set of opened databases.
func SampleTarget(dbs *storage.Databases) samplecloud.Target {
	t := samplecloud.Target{Embedded: dbs.Embedded}
	for _, db := range dbs.Cells {
		t.Cells = append(t.Cells, celldb.New(db))
	}
	if dbs.API != nil {
		t.API = apidb.New(dbs.API)
	}
	return t
}

// AggregateCells wraps cell databases for the aggregate sync.
func AggregateCells(dbs []*storage.DB) []migrate.AggregateCell {
	return cells[migrate.AggregateCell](dbs)
}

// AggregateAPI wraps the API database for the aggregate sync.
func AggregateAPI(db *storage.DB) migrate.AggregateAPI {
	if db == nil {
		return nil
	}
	return apidb.New(db)
}

// AggregatePlacement wraps the Placement database for the aggregate sync.
func AggregatePlacement(db *storage.DB) migrate.AggregatePlacement {
	if db == nil {
		return nil
	}
	return placementdb.New(db)
}

// cells wraps every cell database in celldb's store, seen as T (one of the
// cell interfaces *celldb.Cell implements).
func cells[T any](dbs []*storage.DB) []T {
	out := make([]T, len(dbs))
	for i, db := range dbs {
		out[i] = any(celldb.New(db)).(T)
	}
	return out
}

// StatusReleaseSources wraps cell databases for status.DetectRelease.
func StatusReleaseSources(dbs []*storage.DB) []status.ReleaseSource {
	return cells[status.ReleaseSource](dbs)
}

// StatusAPI wraps the API database for the upgrade checks.
func StatusAPI(db *storage.DB) status.APIDB { return apidb.New(db) }

// InstanceMappingAPI wraps the API database for the instance mapping
// migrations (populate_queued_for_delete, populate_user_id).
func InstanceMappingAPI(db *storage.DB) migrate.InstanceMappingAPI {
	if db == nil {
		return nil
	}
	return apidb.New(db)
}

// InstanceCells returns the opener of the cell databases the instance
// mapping migrations read: a mapping's cell is the run's cell opened from
// that mapping (the embedded file holds every cell but cell0), and cell0,
// which the run's cells exclude, is opened on first use when withCell0 is
// set (no --cell was given). A mapping the run does not work on gives nil.
func InstanceCells(dbs *storage.Databases, withCell0 bool) migrate.CellOpener {
	return cellOpener[migrate.InstanceCell](dbs, withCell0)
}

// VIFCells is InstanceCells for fill_virtual_interface_list.
func VIFCells(dbs *storage.Databases, withCell0 bool) migrate.VIFCellOpener {
	return cellOpener[migrate.VIFCell](dbs, withCell0)
}

// cellOpener opens a cell mapping's database as celldb's store, seen as T
// (nil when the run does not work on it).
func cellOpener[T any](dbs *storage.Databases, withCell0 bool) func(ctx context.Context, c migrate.CellMappingRef) (T, error) {
	return func(ctx context.Context, c migrate.CellMappingRef) (T, error) {
		var none T
		if c.UUID == nova.Cell0UUID {
			if !withCell0 || dbs.Embedded {
				return none, nil
			}
			db, err := dbs.Cell0(ctx)
			if err != nil || db == nil {
				return none, err
			}
			return any(celldb.New(db)).(T), nil
		}
		if dbs.Embedded && len(dbs.Cells) == 1 {
			return any(celldb.New(dbs.Cells[0])).(T), nil
		}
		for _, db := range dbs.Cells {
			if db.MappingUUID == c.UUID {
				return any(celldb.New(db)).(T), nil
			}
		}
		return none, nil
	}
}

// AZCells wraps cell databases for populate_missing_availability_zones.
func AZCells(dbs []*storage.DB) []migrate.AZCell { return cells[migrate.AZCell](dbs) }

// AZAggregates wraps the API database for populate_missing_availability_zones
// (nil without one).
func AZAggregates(db *storage.DB) migrate.AZAggregates {
	if db == nil {
		return nil
	}
	return apidb.New(db)
}

// UUIDCells wraps cell databases for the uuid migrations
// (migration_migrate_to_uuid, populate_uuids).
func UUIDCells(dbs []*storage.DB) []migrate.UUIDCell { return cells[migrate.UUIDCell](dbs) }

// QuotaCells wraps cell databases for the quota migrations.
func QuotaCells(dbs []*storage.DB) []migrate.QuotaCell { return cells[migrate.QuotaCell](dbs) }

// QuotaAPI wraps the API database for the quota migrations.
func QuotaAPI(db *storage.DB) migrate.QuotaAPI {
	if db == nil {
		return nil
	}
	return apidb.New(db)
}

// PlacementOnline wraps the Placement database for placement-manage's
// online migrations.
func PlacementOnline(db *storage.DB) migrate.PlacementOnline {
	if db == nil {
		return nil
	}
	return placementdb.New(db)
}

// ComputeIDCells wraps cell databases for populate_instance_compute_id.
func ComputeIDCells(dbs []*storage.DB) []migrate.ComputeIDCell {
	return cells[migrate.ComputeIDCell](dbs)
}
