package celldb

import (
	"context"
	"database/sql"

	"github.com/rpctl/rpctl/migrate"
	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/internal/sqlutil"
)

// ComputeNodesByHost implements migrate.AggregateCell: the uuids of the
// live compute nodes of each host ("" for a NULL uuid), in id order.
func (c *Cell) ComputeNodesByHost(ctx context.Context) (map[string][]string, error) {
	rows, err := c.DB.QueryContext(ctx, "SELECT host, uuid FROM compute_nodes WHERE deleted = 0 AND host IS NOT NULL ORDER BY id")
	if err != nil {
		return nil, c.DB.Errorf("read compute nodes: %w", storage.CleanError(err))
	}
	defer rows.Close()
	out := map[string][]string{}
	for rows.Next() {
		var h string
		var u sql.NullString
		if err := rows.Scan(&h, &u); err != nil {
			return nil, c.DB.Errorf("read compute nodes: %w", storage.CleanError(err))
		}
		out[h] = append(out[h], sqlutil.FoldUUID(u.String))
	}
	if err := rows.Err(); err != nil {
		return nil, c.DB.Errorf("read compute nodes: %w", storage.CleanError(err))
	}
	return out, nil
}

var _ migrate.AggregateCell = (*Cell)(nil)
