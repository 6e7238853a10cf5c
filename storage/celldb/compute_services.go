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

// DisabledComputeHosts implements migrate.Cell: the hosts of the live
// nova-compute services that are disabled (a NULL disabled is enabled, as
// the Service object reads it).
func (c *Cell) DisabledComputeHosts(ctx context.Context) (map[string]bool, error) {
	db := c.DB
	rows, err := db.QueryContext(ctx, "SELECT host FROM services WHERE deleted = 0 AND `binary` = 'nova-compute' AND disabled = 1 AND host IS NOT NULL")
	if err != nil {
		return nil, db.Errorf("read services: %w", storage.CleanError(err))
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var host string
		if err := rows.Scan(&host); err != nil {
			return nil, db.Errorf("read services: %w", storage.CleanError(err))
		}
		out[host] = true
	}
	if err := rows.Err(); err != nil {
		return nil, db.Errorf("read services: %w", storage.CleanError(err))
	}
	return out, nil
}
