// Package stores wires opened databases to the stores the domains declare:
// a cell database to migrate.Cell and status.Cell, the Placement database
// to migrate.Placement and status.Placement, all of them to the sample
// cloud writer. A missing database stays a nil interface (never a typed
// nil), which is how the domains tell "not configured".
package stores

import (
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

// StatusAPI wraps the API database for the upgrade checks.
func StatusAPI(db *storage.DB) status.APIDB { return apidb.New(db) }
