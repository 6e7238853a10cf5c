package placementdb

import (
	"context"
	"database/sql"

	"github.com/jmoiron/sqlx"

	"github.com/rpctl/rpctl/claims"
	"github.com/rpctl/rpctl/storage"
)

// ClaimsLedger is the Placement database side of claims list, audit and
// snapshot. It implements claims.Ledger.
type ClaimsLedger struct{ DB *storage.DB }

// AllocationRows reads every allocation, ordered by consumer, provider id
// and class.
func (l ClaimsLedger) AllocationRows(ctx context.Context) ([]claims.AllocationRow, error) {
	p := l.DB
	if err := placementTablesPresent(ctx, p); err != nil {
		return nil, err
	}
	var out []claims.AllocationRow
	err := p.ReadTx(ctx, func(tx *sqlx.Tx) error {
		out = nil
		return scanPlacementRows(ctx, p, tx, "allocations", `SELECT a.consumer_id, rp.id, rp.uuid, rp.name, COALESCE(root.uuid, rp.uuid), rc.name, a.used,
			c.id IS NOT NULL, COALESCE(pr.external_id, ''), COALESCE(us.external_id, ''), COALESCE(c.generation, 0),
			c.created_at, a.created_at
			FROM allocations a
			JOIN resource_providers rp ON rp.id = a.resource_provider_id
			LEFT JOIN resource_providers root ON root.id = rp.root_provider_id
			JOIN resource_classes rc ON rc.id = a.resource_class_id
			LEFT JOIN consumers c ON c.uuid = a.consumer_id
			LEFT JOIN projects pr ON pr.id = c.project_id
			LEFT JOIN users us ON us.id = c.user_id
			ORDER BY a.consumer_id, rp.id, rc.name`, func(rows *sql.Rows) error {
			var r claims.AllocationRow
			var name sql.NullString
			var created, allocCreated sql.NullTime
			if err := rows.Scan(&r.Consumer, &r.ProviderID, &r.ProviderUUID, &name, &r.RootUUID, &r.Class, &r.Used,
				&r.HasConsumer, &r.Project, &r.User, &r.Generation, &created, &allocCreated); err != nil {
				return err
			}
			r.ProviderName = name.String
			if !created.Valid {
				created = allocCreated
			}
			if created.Valid {
				r.CreatedAt = created.Time.UTC()
			}
			out = append(out, r)
			return nil
		})
	})
	return out, err
}
