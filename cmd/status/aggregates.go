package status

import (
	"context"

	"github.com/rpctl/rpctl/migrate"
	"github.com/rpctl/rpctl/status"
	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/stores"
)

// statusAggregates wires the "Aggregates in Sync" check: Nova's side from
// the API database (opened here: the other checks do not read it) and the
// reachable cells, Placement's from its database. Neither is set when no
// API database is configured; a database that cannot be opened is the
// error.
func statusAggregates(ctx context.Context, src storage.Sources, r *storage.Reachable) (status.AggregateDiffer, func(), error) {
	if src.Embedded == "" && src.APIDB.URL == "" {
		return nil, func() {}, nil
	}
	if r.Placement == nil {
		return nil, func() {}, r.PlacementErr
	}
	d, err := storage.Connect(ctx, storage.Sources{Embedded: src.Embedded, APIDB: src.APIDB}, storage.NeedAPI, 0)
	if err != nil {
		return nil, func() {}, err
	}
	s := &migrate.AggregateSync{API: stores.AggregateAPI(d.API), Cells: stores.AggregateCells(r.Cells), Placement: stores.AggregatePlacement(r.Placement)}
	return s, func() { d.Close() }, nil
}
