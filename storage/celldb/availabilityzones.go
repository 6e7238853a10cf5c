package celldb

import (
	"context"
	"time"

	"github.com/rpctl/rpctl/migrate"
	"github.com/rpctl/rpctl/storage"
)

var _ migrate.AZCell = (*Cell)(nil)

// InstancesMissingAZ implements migrate.AZCell with
// populate_missing_availability_zones' query (no deleted filter, no ORDER
// BY, as Nova's).
func (c *Cell) InstancesMissingAZ(ctx context.Context, limit int) ([]migrate.InstanceHost, error) {
	rows, err := c.DB.QueryContext(ctx, c.DB.Rebind(`SELECT id, uuid, host FROM instances
		WHERE host IS NOT NULL AND availability_zone IS NULL LIMIT ?`), limit)
	if err != nil {
		return nil, c.DB.Errorf("read instances: %w", storage.CleanError(err))
	}
	defer rows.Close()
	var out []migrate.InstanceHost
	for rows.Next() {
		var in migrate.InstanceHost
		if err := rows.Scan(&in.ID, &in.UUID, &in.Host); err != nil {
			return nil, c.DB.Errorf("read instances: %w", storage.CleanError(err))
		}
		out = append(out, in)
	}
	if err := rows.Err(); err != nil {
		return nil, c.DB.Errorf("read instances: %w", storage.CleanError(err))
	}
	return out, nil
}

// SetInstanceAZs implements migrate.AZCell: one transaction, one UPDATE per
// instance, updated_at stamped as Instance.save does.
func (c *Cell) SetInstanceAZs(ctx context.Context, azs map[int64]string, now time.Time) (int, error) {
	return storage.UpdateEach(ctx, c.DB, `UPDATE instances SET availability_zone = ?, updated_at = ? WHERE id = ? AND availability_zone IS NULL`,
		"update instances availability_zone", azs, now)
}
