package placementdb

import (
	"context"
	"database/sql"

	"github.com/rpctl/rpctl/status"
	"github.com/rpctl/rpctl/storage"
)

// ProviderConsumers lists the consumers holding class on the provider, the
// most recently allocated first (highest allocation id): the ones that
// took it over its capacity, when it is over.
func ProviderConsumers(ctx context.Context, p *storage.DB, providerUUID, class string) ([]status.ConsumerUse, error) {
	rows, err := p.QueryContext(ctx, p.Rebind(`SELECT a.consumer_id, SUM(a.used), MAX(a.id)
		FROM allocations a
		JOIN resource_providers rp ON rp.id = a.resource_provider_id
		JOIN resource_classes rc ON rc.id = a.resource_class_id
		WHERE rp.uuid = ? AND rc.name = ?
		GROUP BY a.consumer_id
		ORDER BY MAX(a.id) DESC`), providerUUID, class)
	if err != nil {
		return nil, p.Errorf("read allocations: %w", storage.CleanError(err))
	}
	defer rows.Close()
	var out []status.ConsumerUse
	for rows.Next() {
		var c status.ConsumerUse
		var last sql.NullInt64
		if err := rows.Scan(&c.Consumer, &c.Used, &last); err != nil {
			return nil, p.Errorf("read allocations: %w", storage.CleanError(err))
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, p.Errorf("read allocations: %w", storage.CleanError(err))
	}
	return out, nil
}
