package apidb

import (
	"context"
	"database/sql"

	"github.com/rpctl/rpctl/storage"
)

// AggregateMetadata returns each Nova host aggregate's metadata by its
// UUID (availability_zone, filter_tenant_id…), from the API database; an
// API database without the tables gives an empty map.
func AggregateMetadata(ctx context.Context, api *storage.DB) (map[string]map[string]string, error) {
	out := map[string]map[string]string{}
	for _, t := range []string{"aggregates", "aggregate_metadata"} {
		ok, err := api.TableExists(ctx, t)
		if err != nil || !ok {
			return out, err
		}
	}
	rows, err := api.QueryContext(ctx, `SELECT a.uuid, m.`+api.QuoteKey()+`, m.value FROM aggregate_metadata m
JOIN aggregates a ON a.id = m.aggregate_id WHERE a.uuid IS NOT NULL`)
	if err != nil {
		return nil, api.Errorf("read aggregate_metadata: %w", storage.CleanError(err))
	}
	defer rows.Close()
	for rows.Next() {
		var u, k string
		var v sql.NullString
		if err := rows.Scan(&u, &k, &v); err != nil {
			return nil, api.Errorf("read aggregate_metadata: %w", storage.CleanError(err))
		}
		if out[u] == nil {
			out[u] = map[string]string{}
		}
		out[u][k] = v.String
	}
	if err := rows.Err(); err != nil {
		return nil, api.Errorf("read aggregate_metadata: %w", storage.CleanError(err))
	}
	return out, nil
}
