package placementdb

import (
	"context"

	"github.com/rpctl/rpctl/candidates"
)

// PlacementModel reads every provider as the built-in core loads them, for
// heal to place instances on their trees (claims.ProviderModel).
func (p *ClaimsPlacement) PlacementModel(ctx context.Context) (*candidates.ModelInput, error) {
	return LoadPlacementModel(ctx, p.DB)
}
