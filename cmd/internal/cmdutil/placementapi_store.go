package cmdutil

import (
	"context"

	"github.com/rpctl/rpctl/inventory"
	"github.com/rpctl/rpctl/placementclient"
)

// The provider, inventory, usage, resource-class and trait commands work
// through the Placement API when --os-cloud/--os-endpoint (or the OS_*
// variables, with no database named) select it.

func apiInventoryStore(ctx context.Context, f *Factory) (inventory.Store, func(), error) {
	if !f.UsePlacementAPI() {
		return nil, nil, nil
	}
	c, err := f.PlacementClient(ctx)
	if err != nil {
		return nil, nil, &ExitError{Code: ExitStoreUnexpected, Err: err}
	}
	return placementclient.Store{C: c}, func() {}, nil
}
