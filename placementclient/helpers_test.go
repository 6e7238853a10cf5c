package placementclient_test

import (
	"context"
	"testing"

	"github.com/rpctl/rpctl/internal/placementtest"
	"github.com/rpctl/rpctl/placementclient"
	"github.com/rpctl/rpctl/storage"
)

// livePlacement starts the real placement-api (noauth2) on a fresh database
// with Placement's schema and returns a client at the given microversion
// ("" negotiates) and the API's base URL.
func livePlacement(t testing.TB, mv string) (*placementclient.Client, string) {
	t.Helper()
	c, base, _ := livePlacementDB(t, mv)
	return c, base
}

// livePlacementDB is livePlacement that also returns the database, open.
func livePlacementDB(t testing.TB, mv string) (*placementclient.Client, string, *storage.DB) {
	t.Helper()
	ctx := context.Background()
	pl := placementtest.New(t)
	base, db := pl.Base, pl.DB
	c, err := placementclient.New(ctx, placementclient.Config{Endpoint: base, Auth: placementclient.StaticToken("admin"), Microversion: mv})
	if err != nil {
		t.Fatal(err)
	}
	return c, base, db
}
