package celldb

import (
	"context"
	"database/sql"
	"time"

	"github.com/rpctl/rpctl/storage"
)

// ComputeServicesUpdatedSince lists the hosts of the live, enabled
// nova-compute services whose updated_at is at or after since (the
// servicegroup's idea of "up"), implementing migrate.ComputeServices.
func (c *Cell) ComputeServicesUpdatedSince(ctx context.Context, since time.Time) ([]string, error) {
	db := c.DB
	rows, err := db.QueryContext(ctx, "SELECT COALESCE(host, ''), updated_at FROM services WHERE deleted = 0 AND `binary` = 'nova-compute' AND (disabled IS NULL OR disabled = 0) ORDER BY host")
	if err != nil {
		return nil, db.Errorf("read services: %w", storage.CleanError(err))
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var host string
		var updated sql.NullTime
		if err := rows.Scan(&host, &updated); err != nil {
			return nil, db.Errorf("read services: %w", storage.CleanError(err))
		}
		if updated.Valid && !updated.Time.UTC().Before(since.UTC()) {
			out = append(out, host)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, db.Errorf("read services: %w", storage.CleanError(err))
	}
	return out, nil
}
