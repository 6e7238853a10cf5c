package placementdb

import (
	"context"

	"github.com/rpctl/rpctl/migrate"
	"github.com/rpctl/rpctl/status"
)

// The Store is the Placement database for every domain that writes or
// reads it: inventory edits (store.go), the inventory migration and the
// upgrade checks (below), each through the interface that domain declares.
var (
	_ migrate.Placement = (*Store)(nil)
	_ status.Placement  = (*Store)(nil)
)

// LoadPlacementState implements migrate.Placement.
func (s *Store) LoadPlacementState(ctx context.Context) (*migrate.PlacementState, error) {
	return LoadPlacementState(ctx, s.db)
}

// LoadProviders implements migrate.Placement.
func (s *Store) LoadProviders(ctx context.Context, uuids, names []string) (*migrate.PlacementState, error) {
	return LoadProviders(ctx, s.db, uuids, names)
}

// EnsurePlacementNames implements migrate.Placement.
func (s *Store) EnsurePlacementNames(ctx context.Context, classes, traits, aggregates []string) (*migrate.PlacementIDs, error) {
	return EnsurePlacementNames(ctx, s.db, classes, traits, aggregates)
}

// WriteNodes implements migrate.Placement.
func (s *Store) WriteNodes(ctx context.Context, ids *migrate.PlacementIDs, nodes []migrate.NodeWrite) []error {
	return WriteNodes(ctx, s.db, ids, nodes)
}

// SingleWriter implements migrate.Placement: SQLite takes one writer.
func (s *Store) SingleWriter() bool { return !s.db.IsMySQL() }

// ListProviderTotals implements status.Placement.
func (s *Store) ListProviderTotals(ctx context.Context) ([]status.ProviderTotals, error) {
	return ListProviderTotals(ctx, s.db)
}

// ListOverusedInventories implements status.Placement.
func (s *Store) ListOverusedInventories(ctx context.Context) ([]status.Overuse, error) {
	return ListOverusedInventories(ctx, s.db)
}

// MissingRootProviderIDs implements status.Placement.
func (s *Store) MissingRootProviderIDs(ctx context.Context) (bool, error) {
	return MissingRootProviderIDs(ctx, s.db)
}

// ProviderConsumers implements status.Placement.
func (s *Store) ProviderConsumers(ctx context.Context, providerUUID, class string) ([]status.ConsumerUse, error) {
	return ProviderConsumers(ctx, s.db, providerUUID, class)
}

// IncompleteConsumers implements status.Placement.
func (s *Store) IncompleteConsumers(ctx context.Context) (int, error) {
	return IncompleteConsumers(ctx, s.db)
}

// ConsumersWithAllocations implements status.Placement.
func (s *Store) ConsumersWithAllocations(ctx context.Context) (map[string]bool, error) {
	return ConsumersWithAllocations(ctx, s.db)
}

// InventoryUsages implements status.Placement.
func (s *Store) InventoryUsages(ctx context.Context, uuids []string) ([]status.Overuse, error) {
	return InventoryUsages(ctx, s.db, uuids)
}
