package placementdb

import (
	"context"

	"github.com/jmoiron/sqlx"

	"github.com/rpctl/rpctl/migrate"
	"github.com/rpctl/rpctl/storage/internal/sqlutil"
)

var (
	_ migrate.AggregatePlacement = (*Store)(nil)
	_ migrate.AggregateScanner   = (*Store)(nil)
)

// AllProviderAggregates implements migrate.AggregateScanner: every
// provider's generation and aggregates (in placement_aggregates id order,
// as GET /resource_providers/{uuid}/aggregates lists them) in one read.
func (s *Store) AllProviderAggregates(ctx context.Context) (map[string]migrate.ProviderAggregates, error) {
	out := map[string]migrate.ProviderAggregates{}
	err := s.db.ReadTx(ctx, func(tx *sqlx.Tx) error {
		clear(out)
		rows, err := tx.QueryContext(ctx, `SELECT rp.uuid, rp.generation, pa.uuid FROM resource_providers rp
			LEFT JOIN resource_provider_aggregates a ON a.resource_provider_id = rp.id
			LEFT JOIN placement_aggregates pa ON pa.id = a.aggregate_id
			ORDER BY rp.id, pa.id`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var u string
			var gen int64
			var agg *string
			if err := rows.Scan(&u, &gen, &agg); err != nil {
				return err
			}
			u = sqlutil.FoldUUID(u) // as the cells' node uuids are read
			pa := out[u]
			pa.Generation = gen
			if agg != nil {
				pa.Aggregates = append(pa.Aggregates, *agg)
			}
			out[u] = pa
		}
		return rows.Err()
	})
	if err != nil {
		return nil, s.fail("read provider aggregates", err)
	}
	return out, nil
}
