package apidb

import (
	"context"
	"database/sql"
	"sort"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/rpctl/rpctl/migrate"
	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/internal/sqlutil"
)

var _ migrate.InstanceMappingAPI = (*API)(nil)

// ListCellMappings implements migrate.InstanceMappingAPI.
func (a *API) ListCellMappings(ctx context.Context) ([]migrate.CellMappingRef, error) {
	ms, err := ListCellMappings(ctx, a.DB)
	if err != nil {
		return nil, err
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].ID < ms[j].ID })
	out := make([]migrate.CellMappingRef, len(ms))
	for i, m := range ms {
		out[i] = migrate.CellMappingRef{ID: m.ID, UUID: m.UUID, Name: m.Name}
	}
	return out, nil
}

// QueuedForDeleteUnset implements migrate.InstanceMappingAPI with
// populate_queued_for_delete's query (no ORDER BY, as Nova's).
func (a *API) QueuedForDeleteUnset(ctx context.Context, cellID int64, limit int) ([]string, error) {
	var out []string
	err := a.DB.SelectContext(ctx, &out, a.DB.Rebind(`SELECT instance_uuid FROM instance_mappings
		WHERE queued_for_delete IS NULL AND cell_id = ? LIMIT ?`), cellID, limit)
	if err != nil {
		return nil, a.DB.Errorf("read instance_mappings: %w", storage.CleanError(err))
	}
	return out, nil
}

// SetQueuedForDelete implements migrate.InstanceMappingAPI.
func (a *API) SetQueuedForDelete(ctx context.Context, cellID int64, instances []string, queued bool, now time.Time) (int, error) {
	n := 0
	err := a.DB.Tx(ctx, func(tx *sqlx.Tx) error {
		n = 0
		for start := 0; start < len(instances); start += sqlutil.MaxInList {
			chunk := instances[start:min(start+sqlutil.MaxInList, len(instances))]
			args := []any{queued, a.DB.TimeArg(&now), cellID}
			for _, u := range chunk {
				args = append(args, u)
			}
			res, err := tx.ExecContext(ctx, a.DB.Rebind(`UPDATE instance_mappings SET queued_for_delete = ?, updated_at = ?
				WHERE cell_id = ? AND queued_for_delete IS NULL AND instance_uuid IN (`+sqlutil.InList(len(chunk))+`)`), args...)
			if err != nil {
				return a.DB.Errorf("update instance_mappings queued_for_delete: %w", storage.CleanError(err))
			}
			k, _ := res.RowsAffected()
			n += int(k)
		}
		return nil
	})
	return n, err
}

// UserIDUnset implements migrate.InstanceMappingAPI with populate_user_id's
// query (no ORDER BY, as Nova's).
func (a *API) UserIDUnset(ctx context.Context, limit int) ([]migrate.InstanceMappingRef, error) {
	rows, err := a.DB.QueryContext(ctx, a.DB.Rebind(`SELECT instance_uuid, cell_id FROM instance_mappings
		WHERE user_id IS NULL AND project_id != ? LIMIT ?`), migrate.FakeInstanceUUID, limit)
	if err != nil {
		return nil, a.DB.Errorf("read instance_mappings: %w", storage.CleanError(err))
	}
	defer rows.Close()
	var out []migrate.InstanceMappingRef
	for rows.Next() {
		var im migrate.InstanceMappingRef
		var cell sql.NullInt64
		if err := rows.Scan(&im.InstanceUUID, &cell); err != nil {
			return nil, a.DB.Errorf("read instance_mappings: %w", storage.CleanError(err))
		}
		if cell.Valid {
			id := cell.Int64
			im.CellID = &id
		}
		out = append(out, im)
	}
	if err := rows.Err(); err != nil {
		return nil, a.DB.Errorf("read instance_mappings: %w", storage.CleanError(err))
	}
	return out, nil
}

// SetUserIDs implements migrate.InstanceMappingAPI: one transaction, one
// UPDATE per mapping.
func (a *API) SetUserIDs(ctx context.Context, userIDs map[string]string, now time.Time) (int, error) {
	return storage.UpdateEach(ctx, a.DB, `UPDATE instance_mappings SET user_id = ?, updated_at = ? WHERE instance_uuid = ? AND user_id IS NULL`,
		"update instance_mappings user_id", userIDs, now)
}
