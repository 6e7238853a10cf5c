package placementclient_test

import (
	"context"
	"testing"

	"github.com/rpctl/rpctl/dsn"
	"github.com/rpctl/rpctl/internal/testdb"
	"github.com/rpctl/rpctl/placementclient"
	"github.com/rpctl/rpctl/storage"
)

// livePlacement starts the real placement-api (noauth2) on a fresh database
// with Placement's schema and returns a client at the given microversion
// ("" negotiates) and the API's base URL.
func livePlacement(t *testing.T, mv string) (*placementclient.Client, string) {
	t.Helper()
	ctx := context.Background()
	my := testdb.NewMySQL(t)
	tg, err := dsn.Parse(my.DSN)
	if err != nil {
		t.Fatal(err)
	}
	db, err := storage.Open(ctx, tg, storage.RolePlacement, "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := storage.Init(ctx, db, storage.PartPlacement); err != nil {
		t.Fatal(err)
	}
	base := testdb.PlacementAPI(t, my.URL)
	c, err := placementclient.New(ctx, placementclient.Config{Endpoint: base, Auth: placementclient.StaticToken("admin"), Microversion: mv})
	if err != nil {
		t.Fatal(err)
	}
	return c, base
}
