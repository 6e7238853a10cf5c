package migrate_test

import (
	"github.com/rpctl/rpctl/migrate"
	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/stores"
)

// cellStores and placementStore give the tests' opened databases to the
// migrations as cmd does.
func cellStores(dbs ...*storage.DB) []migrate.Cell { return stores.MigrateCells(dbs) }

func placementStore(db *storage.DB) migrate.Placement { return stores.MigratePlacement(db) }

func ratioFP(v float64) *float64 { return &v }
