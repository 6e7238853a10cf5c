package placementdb

import (
	"context"
	"database/sql"

	"github.com/rpctl/rpctl/status"
	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/internal/sqlutil"
)

// ConsumersWithAllocations returns every consumer that GET
// /allocations/{consumer} shows allocations for: allocations whose consumer
// record exists.
func ConsumersWithAllocations(ctx context.Context, p *storage.DB) (map[string]bool, error) {
	rows, err := p.QueryContext(ctx, `SELECT DISTINCT a.consumer_id FROM allocations a JOIN consumers c ON c.uuid = a.consumer_id`)
	if err != nil {
		return nil, p.Errorf("read allocations and consumers: %w", storage.CleanError(err))
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var u string
		if err := rows.Scan(&u); err != nil {
			return nil, p.Errorf("read allocations: %w", storage.CleanError(err))
		}
		out[u] = true
	}
	return out, rows.Err()
}

// InventoryUsages returns every inventory of the given providers with what
// their allocations use (status.Overuse's shape, over-used or not).
func InventoryUsages(ctx context.Context, p *storage.DB, uuids []string) ([]status.Overuse, error) {
	var out []status.Overuse
	for start := 0; start < len(uuids); start += sqlutil.MaxInList {
		chunk := uuids[start:min(start+sqlutil.MaxInList, len(uuids))]
		args := make([]any, len(chunk))
		for i, u := range chunk {
			args[i] = u
		}
		rows, err := p.QueryContext(ctx, p.Rebind(`SELECT rp.uuid, COALESCE(rp.name, ''), COALESCE(rc.name, ''), i.total, i.reserved, i.allocation_ratio,
	COALESCE((SELECT SUM(a.used) FROM allocations a WHERE a.resource_provider_id = i.resource_provider_id AND a.resource_class_id = i.resource_class_id), 0)
FROM inventories i JOIN resource_providers rp ON rp.id = i.resource_provider_id
LEFT JOIN resource_classes rc ON rc.id = i.resource_class_id
WHERE rp.uuid IN (`+sqlutil.InList(len(chunk))+`) ORDER BY rp.name, rp.uuid, rc.name`), args...)
		if err != nil {
			return nil, p.Errorf("read inventories: %w", storage.CleanError(err))
		}
		for rows.Next() {
			var o status.Overuse
			var ratio sql.NullFloat64
			if err := rows.Scan(&o.UUID, &o.Name, &o.Class, &o.Total, &o.Reserved, &ratio, &o.Used); err != nil {
				rows.Close()
				return nil, p.Errorf("read inventories: %w", storage.CleanError(err))
			}
			o.AllocationRatio = *p.FloatPtr(ratio)
			out = append(out, o)
		}
		if err := rows.Close(); err != nil {
			return nil, p.Errorf("read inventories: %w", storage.CleanError(err))
		}
	}
	return out, nil
}
