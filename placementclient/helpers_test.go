package placementclient_test

import (
	"context"
	"testing"

	"github.com/rpctl/rpctl/internal/placementtest"
	"github.com/rpctl/rpctl/placementclient"
)

// livePlacement starts the real placement-api (noauth2) on a fresh database
// with Placement's schema and returns a client at the given microversion
// ("" negotiates) and the API's base URL.
func livePlacement(t *testing.T, mv string) (*placementclient.Client, string) {
	t.Helper()
	ctx := context.Background()
	base := placementtest.New(t).Base
	c, err := placementclient.New(ctx, placementclient.Config{Endpoint: base, Auth: placementclient.StaticToken("admin"), Microversion: mv})
	if err != nil {
		t.Fatal(err)
	}
	return c, base
}
