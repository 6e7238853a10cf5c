package placementclient_test

import (
	"context"
	"testing"

	"github.com/rpctl/rpctl/claims"
	"github.com/rpctl/rpctl/internal/placementtest"
	"github.com/rpctl/rpctl/inventory"
	"github.com/rpctl/rpctl/placementclient"
	"github.com/rpctl/rpctl/storage/storetest"
)

// TestAPIStoreEditsMatchPlacementAPI: the API store passes inventory.Store's
// conformance suite (the one storage/placementdb passes), so the API backend
// leaves what the database backend and Placement itself leave.
func TestAPIStoreEditsMatchPlacementAPI(t *testing.T) {
	storetest.InventoryStore(t, func(c placementtest.Placement) inventory.Store {
		client, err := placementclient.New(context.Background(), placementclient.Config{Endpoint: c.Base, Auth: placementclient.StaticToken("admin")})
		if err != nil {
			t.Fatal(err)
		}
		return placementclient.Store{C: client}
	})
}

// TestClaimsLedgerConformance: the API ledger passes claims.Ledger's
// conformance suite (the one storage/placementdb passes).
func TestClaimsLedgerConformance(t *testing.T) {
	storetest.ClaimsLedger(t, func(c placementtest.Placement) claims.Ledger {
		client, err := placementclient.New(context.Background(), placementclient.Config{Endpoint: c.Base, Auth: placementclient.StaticToken("admin")})
		if err != nil {
			t.Fatal(err)
		}
		return &placementclient.ClaimsLedger{C: client}
	})
}
