package placementclient

import (
	"context"

	"github.com/rpctl/rpctl/candidates"
)

// modelWorkers is how many provider reads heal's model load keeps in flight.
const modelWorkers = 8

// PlacementModel reads every provider through the API, for heal to place
// instances on their trees (claims.ProviderModel): one GET per provider's
// inventories, usages, traits and aggregates, once per heal.
func (a Claims) PlacementModel(ctx context.Context) (*candidates.ModelInput, error) {
	return a.C.LoadModelInput(ctx, modelWorkers)
}
