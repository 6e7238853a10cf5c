package celldb

import (
	"context"
	"database/sql"
	"maps"
	"slices"
	"strconv"

	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/internal/sqlutil"
)

// SetComputeNodeUUIDs stores generated uuids (compute node id -> uuid) on
// nodes that have none, in one conditional UPDATE (a nova-compute that set
// one first wins), and returns the uuid each row holds afterwards.
func SetComputeNodeUUIDs(ctx context.Context, cell *storage.DB, want map[int64]string) (map[int64]string, error) {
	if len(want) == 0 {
		return map[int64]string{}, nil
	}
	keys := slices.Sorted(maps.Keys(want))
	// One statement per chunk instead of one per node: a batch of uuids is
	// one round trip, and each statement is atomic without a transaction.
	// Chunks keep CASE (evaluated per row) short and SQLite under its
	// bound-variable limit.
	const chunk = 500
	changedAll := true
	for lo := 0; lo < len(keys); lo += chunk {
		part := keys[lo:min(lo+chunk, len(keys))]
		q := []byte("UPDATE compute_nodes" + sqlutil.ForcePrimary(cell) + " SET uuid = CASE id")
		args := make([]any, 0, len(part))
		for _, id := range part {
			q = append(q, " WHEN "...)
			q = strconv.AppendInt(q, id, 10)
			q = append(q, " THEN ?"...)
			args = append(args, want[id])
		}
		q = append(q, " END WHERE id IN ("...)
		q = append(q, sqlutil.SQLInts(part)...)
		q = append(q, ") AND uuid IS NULL"...)
		res, err := sqlutil.ExecInline(ctx, cell, cell, string(q), args...)
		if err != nil {
			return nil, cell.Errorf("set compute node uuids: %w", storage.CleanError(err))
		}
		if n, err := res.RowsAffected(); err != nil || n != int64(len(part)) {
			changedAll = false
		}
	}
	if changedAll {
		// Every row was still NULL and now holds the uuid asked for.
		return maps.Clone(want), nil
	}
	ids := sqlutil.SQLInts(keys)
	rows, err := cell.QueryContext(ctx, "SELECT id, uuid FROM compute_nodes WHERE id IN ("+ids+")")
	if err != nil {
		return nil, cell.Errorf("read compute node uuids: %w", storage.CleanError(err))
	}
	defer rows.Close()
	got := make(map[int64]string, len(want))
	for rows.Next() {
		var id int64
		var u sql.NullString
		if err := rows.Scan(&id, &u); err != nil {
			return nil, cell.Errorf("read compute node uuids: %w", storage.CleanError(err))
		}
		if u.Valid && u.String != "" {
			got[id] = u.String
		}
	}
	return got, rows.Err()
}
