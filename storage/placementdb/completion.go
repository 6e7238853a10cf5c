package placementdb

import (
	"context"

	"github.com/rpctl/rpctl/storage"
)

// PlacementNames lists the names shell completion offers: resource classes,
// traits and resource providers, each sorted.
func PlacementNames(ctx context.Context, db *storage.DB) (classes, traits, providers []string, err error) {
	for _, q := range []struct {
		dst *[]string
		sql string
	}{
		{&classes, "SELECT name FROM resource_classes ORDER BY name"},
		{&traits, "SELECT name FROM traits ORDER BY name"},
		{&providers, "SELECT name FROM resource_providers ORDER BY name"},
	} {
		if err := db.SelectContext(ctx, q.dst, q.sql); err != nil {
			return nil, nil, nil, db.Errorf("%w", storage.CleanError(err))
		}
	}
	return classes, traits, providers, nil
}
