package placementdb_test

import (
	"context"
	"testing"

	"github.com/rpctl/rpctl/internal/placementtest"
	"github.com/rpctl/rpctl/inventory"
	"github.com/rpctl/rpctl/placementclient"
)

// TestAPIStoreEditsMatchPlacementAPI runs the same script of edits through
// rpctl's API store (placementclient) on one copy and as raw requests on the
// other: statuses, error codes, rows and every GET body must agree, so the
// API backend leaves what the database backend and Placement itself leave.
func TestAPIStoreEditsMatchPlacementAPI(t *testing.T) {
	runEditScript(t, func(c placementtest.Placement) inventory.Store {
		client, err := placementclient.New(context.Background(), placementclient.Config{Endpoint: c.Base, Auth: placementclient.StaticToken("admin")})
		if err != nil {
			t.Fatal(err)
		}
		return placementclient.Store{C: client}
	})
}
