package celldb

import (
	"context"

	"github.com/rpctl/rpctl/status"
	"github.com/rpctl/rpctl/storage"
)

var _ status.ClusterMember = (*Cell)(nil)

// ClusterState implements status.ClusterMember.
func (c *Cell) ClusterState(ctx context.Context) (status.ClusterState, bool, error) {
	g, galera, err := storage.GaleraState(ctx, c.DB)
	return status.ClusterState(g), galera, err
}
