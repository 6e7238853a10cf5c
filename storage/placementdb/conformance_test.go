package placementdb_test

import (
	"testing"

	"github.com/rpctl/rpctl/internal/placementtest"
	"github.com/rpctl/rpctl/inventory"
	"github.com/rpctl/rpctl/storage/placementdb"
	"github.com/rpctl/rpctl/storage/storetest"
)

// TestEditsMatchPlacementAPI: the database store passes inventory.Store's
// conformance suite.
func TestEditsMatchPlacementAPI(t *testing.T) {
	storetest.InventoryStore(t, func(c placementtest.Placement) inventory.Store { return placementdb.New(c.DB) })
}
