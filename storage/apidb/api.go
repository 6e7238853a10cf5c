// Package apidb holds the SQL of the Nova API database (cell, host and
// instance mappings, flavors, aggregates).
package apidb

import (
	"context"

	"github.com/rpctl/rpctl/internal/nova"
	"github.com/rpctl/rpctl/migrate"
	"github.com/rpctl/rpctl/samplecloud"
	"github.com/rpctl/rpctl/status"
	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/internal/sqlutil"
)

// API is the Nova API database.
type API struct{ DB *storage.DB }

var (
	_ samplecloud.APIDB    = (*API)(nil)
	_ migrate.AggregateAPI = (*API)(nil)
	_ status.APIDB         = (*API)(nil)
)

// New returns the store of an opened API database.
func New(db *storage.DB) *API { return &API{DB: db} }

// Label names the database in messages, without its password.
func (a *API) Label() string { return a.DB.Label() }

// CountFlavors implements samplecloud.APIDB.
func (a *API) CountFlavors(ctx context.Context) (int, error) {
	return sqlutil.CountRows(ctx, a.DB, "flavors")
}

// CellMappings implements samplecloud.APIDB.
func (a *API) CellMappings(ctx context.Context) ([]nova.CellMapping, error) {
	ms, err := ListCellMappings(ctx, a.DB)
	if err != nil {
		return nil, err
	}
	out := make([]nova.CellMapping, len(ms))
	for i, m := range ms {
		out[i] = nova.CellMapping{ID: m.ID, UUID: m.UUID, Name: m.Name, DatabaseConnection: m.DatabaseConnection}
	}
	return out, nil
}

// InsertAPIRows implements samplecloud.APIDB.
func (a *API) InsertAPIRows(ctx context.Context, rows nova.APIRows) error {
	return InsertAPIRows(ctx, a.DB, rows)
}

// CellMappingUUIDs implements status.APIDB.
func (a *API) CellMappingUUIDs(ctx context.Context) ([]string, error) {
	ms, err := ListCellMappings(ctx, a.DB)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.UUID
	}
	return out, nil
}

// CountHostMappings implements status.APIDB.
func (a *API) CountHostMappings(ctx context.Context) (int, error) {
	return sqlutil.CountRows(ctx, a.DB, "host_mappings")
}
