package placementdb

import (
	"context"

	"github.com/rpctl/rpctl/status"
	"github.com/rpctl/rpctl/storage"
)

// providerTreeLinks fills each provider's parent and root uuids (from the
// ids read with it) and its aggregates, for the checks that look at a
// compute node's whole tree.
func providerTreeLinks(ctx context.Context, p *storage.DB, out []status.ProviderTotals, index map[int64]int, links [][2]int64) error {
	uuidOf := func(id int64) string {
		if i, ok := index[id]; ok && id != 0 {
			return out[i].UUID
		}
		return ""
	}
	for i, l := range links {
		out[i].ParentUUID, out[i].RootUUID = uuidOf(l[0]), uuidOf(l[1])
	}
	rows, err := p.QueryContext(ctx, `SELECT rpa.resource_provider_id, pa.uuid FROM resource_provider_aggregates rpa
		JOIN placement_aggregates pa ON pa.id = rpa.aggregate_id`)
	if err != nil {
		return p.Errorf("read resource_provider_aggregates: %w", storage.CleanError(err))
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var agg string
		if err := rows.Scan(&id, &agg); err != nil {
			return p.Errorf("read resource_provider_aggregates: %w", storage.CleanError(err))
		}
		if i, ok := index[id]; ok {
			out[i].Aggregates = append(out[i].Aggregates, agg)
		}
	}
	if err := rows.Err(); err != nil {
		return p.Errorf("read resource_provider_aggregates: %w", storage.CleanError(err))
	}
	return nil
}
