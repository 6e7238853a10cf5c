package apidb

import (
	"context"
	"database/sql"

	"time"

	"github.com/jmoiron/sqlx"

	"github.com/rpctl/rpctl/internal/nova"
	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/internal/sqlutil"
)

// aggHost and aggMeta are aggregate_hosts and aggregate_metadata rows.
type aggHost struct {
	aggID int64
	host  string
	at    *time.Time
}

type aggMeta struct {
	aggID      int64
	key, value string
	at         *time.Time
}

func insertAggregates(ctx context.Context, api *storage.DB, tx *sqlx.Tx, aggs []nova.Aggregate) error {
	if len(aggs) == 0 {
		return nil
	}
	var hosts []aggHost
	var meta []aggMeta
	for _, a := range aggs {
		for _, h := range a.Hosts {
			hosts = append(hosts, aggHost{a.ID, h, a.CreatedAt})
		}
		for _, k := range sortedKeys(a.Metadata) {
			meta = append(meta, aggMeta{a.ID, k, a.Metadata[k], a.CreatedAt})
		}
	}
	if err := sqlutil.InsertAll(ctx, api, tx, "aggregates", []string{"id", "created_at", "uuid", "name"},
		aggs, func(a *nova.Aggregate) []any { return []any{a.ID, api.TimeArg(a.CreatedAt), a.UUID, a.Name} }); err != nil {
		return err
	}
	if err := sqlutil.InsertAll(ctx, api, tx, "aggregate_hosts", []string{"created_at", "host", "aggregate_id"},
		hosts, func(h *aggHost) []any { return []any{api.TimeArg(h.at), h.host, h.aggID} }); err != nil {
		return err
	}
	return sqlutil.InsertAll(ctx, api, tx, "aggregate_metadata", []string{"created_at", "aggregate_id", "key", "value"},
		meta, func(m *aggMeta) []any { return []any{api.TimeArg(m.at), m.aggID, m.key, m.value} })
}

// ListAggregates reads every host aggregate with its hosts and metadata, in
// id order, hosts in aggregate_hosts id order. An aggregate whose uuid is
// NULL comes back with UUID "" (Nova generates one when it first loads it).
func ListAggregates(ctx context.Context, api *storage.DB) ([]nova.Aggregate, error) {
	var out []nova.Aggregate
	err := api.Tx(ctx, func(tx *sqlx.Tx) error {
		rows, err := tx.QueryContext(ctx, "SELECT id, uuid, name FROM aggregates ORDER BY id")
		if err != nil {
			return err
		}
		defer rows.Close()
		byID := map[int64]int{}
		for rows.Next() {
			var a nova.Aggregate
			var u, n sql.NullString
			if err := rows.Scan(&a.ID, &u, &n); err != nil {
				return err
			}
			a.UUID, a.Name, a.Metadata = u.String, n.String, map[string]string{}
			byID[a.ID] = len(out)
			out = append(out, a)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		rows.Close()
		hrows, err := tx.QueryContext(ctx, "SELECT aggregate_id, host FROM aggregate_hosts WHERE host IS NOT NULL ORDER BY id")
		if err != nil {
			return err
		}
		defer hrows.Close()
		for hrows.Next() {
			var id int64
			var h string
			if err := hrows.Scan(&id, &h); err != nil {
				return err
			}
			if i, ok := byID[id]; ok {
				out[i].Hosts = append(out[i].Hosts, h)
			}
		}
		if err := hrows.Err(); err != nil {
			return err
		}
		hrows.Close()
		mrows, err := tx.QueryContext(ctx, "SELECT aggregate_id, "+api.QuoteKey()+", value FROM aggregate_metadata ORDER BY id")
		if err != nil {
			return err
		}
		defer mrows.Close()
		for mrows.Next() {
			var id int64
			var k, v string
			if err := mrows.Scan(&id, &k, &v); err != nil {
				return err
			}
			if i, ok := byID[id]; ok {
				out[i].Metadata[k] = v
			}
		}
		return mrows.Err()
	})
	if err != nil {
		return nil, api.Errorf("read aggregates: %w", storage.CleanError(err))
	}
	return out, nil
}

// HostCells maps every host of host_mappings to its cell mapping's name.
func HostCells(ctx context.Context, api *storage.DB) (map[string]string, error) {
	rows, err := api.QueryContext(ctx, "SELECT h.host, c.name FROM host_mappings h JOIN cell_mappings c ON c.id = h.cell_id")
	if err != nil {
		return nil, api.Errorf("read host mappings: %w", storage.CleanError(err))
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var h string
		var n sql.NullString
		if err := rows.Scan(&h, &n); err != nil {
			return nil, api.Errorf("read host mappings: %w", storage.CleanError(err))
		}
		out[h] = n.String
	}
	if err := rows.Err(); err != nil {
		return nil, api.Errorf("read host mappings: %w", storage.CleanError(err))
	}
	return out, nil
}

// ListAggregates implements migrate.AggregateAPI.
func (a *API) ListAggregates(ctx context.Context) ([]nova.Aggregate, error) {
	return ListAggregates(ctx, a.DB)
}

// HostCells implements migrate.AggregateAPI.
func (a *API) HostCells(ctx context.Context) (map[string]string, error) {
	return HostCells(ctx, a.DB)
}
