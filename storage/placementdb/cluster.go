package placementdb

import (
	"context"

	"github.com/rpctl/rpctl/status"
	"github.com/rpctl/rpctl/storage"
)

var _ status.ClusterMember = (*Store)(nil)

// ClusterState implements status.ClusterMember.
func (s *Store) ClusterState(ctx context.Context) (status.ClusterState, bool, error) {
	g, galera, err := storage.GaleraState(ctx, s.db)
	return status.ClusterState(g), galera, err
}
