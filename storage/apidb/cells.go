package apidb

import (
	"context"
	"database/sql"
	"errors"

	"github.com/rpctl/rpctl/storage"
)

// InstanceCell is the API database's instance mapping of an instance: the
// cell's name and uuid, found false when there is no mapping. A mapping
// without a cell (the instance was never scheduled) has cellUUID "".
func InstanceCell(ctx context.Context, api *storage.DB, instance string) (cellName, cellUUID string, found bool, err error) {
	var r struct {
		Name sql.NullString `db:"name"`
		UUID sql.NullString `db:"uuid"`
	}
	err = api.GetContext(ctx, &r, api.Rebind(`SELECT c.name, c.uuid FROM instance_mappings m LEFT JOIN cell_mappings c ON c.id = m.cell_id WHERE m.instance_uuid = ?`), instance)
	if errors.Is(err, sql.ErrNoRows) {
		return "", "", false, nil
	}
	if err != nil {
		return "", "", false, api.Errorf("read instance_mappings: %w", storage.CleanError(err))
	}
	return r.Name.String, r.UUID.String, true, nil
}

// ListCellMappings returns every cell mapping in id order: the read that
// tells storage.Connect which cells to open (its Sources.CellMappings).
func ListCellMappings(ctx context.Context, api *storage.DB) ([]storage.CellMapping, error) {
	var out []storage.CellMapping
	err := api.SelectContext(ctx, &out, `SELECT id, uuid, COALESCE(name, '') AS name, COALESCE(database_connection, '') AS database_connection FROM cell_mappings ORDER BY id`)
	if err != nil {
		return nil, api.Errorf("read cell_mappings: %w", storage.CleanError(err))
	}
	return out, nil
}
