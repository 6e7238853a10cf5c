package celldb

import (
	"context"
	"database/sql"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/rpctl/rpctl/migrate"
	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/internal/sqlutil"
)

var _ migrate.QuotaCell = (*Cell)(nil)

// QuotaLimits implements migrate.QuotaCell with Nova's
// _get_main_per_project_limits / _get_main_per_user_limits query (no ORDER
// BY). rpctl's own schema has no quota tables: no rows.
func (c *Cell) QuotaLimits(ctx context.Context, perUser bool, limit int) ([]migrate.QuotaLimit, error) {
	table, user := "quotas", "''"
	if perUser {
		table, user = "project_user_quotas", "user_id"
	}
	if ok, err := c.DB.TableExists(ctx, table); err != nil || !ok {
		return nil, err
	}
	rows, err := c.DB.QueryContext(ctx, c.DB.Rebind(`SELECT project_id, `+user+`, resource, hard_limit FROM `+table+` WHERE deleted = 0 LIMIT ?`), limit)
	if err != nil {
		return nil, c.DB.Errorf("read %s: %w", table, storage.CleanError(err))
	}
	defer rows.Close()
	var out []migrate.QuotaLimit
	for rows.Next() {
		var l migrate.QuotaLimit
		var project sql.NullString
		var hard sql.NullInt64
		if err := rows.Scan(&project, &l.UserID, &l.Resource, &hard); err != nil {
			return nil, c.DB.Errorf("read %s: %w", table, storage.CleanError(err))
		}
		l.ProjectID, l.HardLimit = sqlutil.StrPtr(project), sqlutil.IntPtr(hard)
		out = append(out, l)
	}
	if err := rows.Err(); err != nil {
		return nil, c.DB.Errorf("read %s: %w", table, storage.CleanError(err))
	}
	return out, nil
}

// SoftDeleteQuotaLimits implements migrate.QuotaCell: Nova's
// _destroy_main_per_project_limits / _destroy_main_per_user_limits, one
// UPDATE per limit (project_id compared with =, as SQLAlchemy's filter_by
// does, so a NULL project matches nothing), in one transaction.
func (c *Cell) SoftDeleteQuotaLimits(ctx context.Context, perUser bool, limits []migrate.QuotaLimit, now time.Time) error {
	q := `UPDATE quotas SET deleted = id, deleted_at = ?, updated_at = updated_at WHERE deleted = 0 AND project_id = ? AND resource = ?`
	if perUser {
		q = `UPDATE project_user_quotas SET deleted = id, deleted_at = ?, updated_at = updated_at WHERE deleted = 0 AND project_id = ? AND user_id = ? AND resource = ?`
	}
	q = c.DB.Rebind(q)
	return c.DB.Tx(ctx, func(tx *sqlx.Tx) error {
		for _, l := range limits {
			args := []any{c.DB.TimeArg(&now), l.ProjectID}
			if perUser {
				args = append(args, l.UserID)
			}
			if _, err := tx.ExecContext(ctx, q, append(args, l.Resource)...); err != nil {
				return c.DB.Errorf("soft-delete quota limit: %w", storage.CleanError(err))
			}
		}
		return nil
	})
}

// QuotaClasses implements migrate.QuotaCell with Nova's
// _get_main_quota_classes query (no ORDER BY).
func (c *Cell) QuotaClasses(ctx context.Context, limit int) ([]migrate.QuotaClass, error) {
	if ok, err := c.DB.TableExists(ctx, "quota_classes"); err != nil || !ok {
		return nil, err
	}
	rows, err := c.DB.QueryContext(ctx, c.DB.Rebind(`SELECT id, class_name, resource, hard_limit FROM quota_classes WHERE deleted = 0 LIMIT ?`), limit)
	if err != nil {
		return nil, c.DB.Errorf("read quota_classes: %w", storage.CleanError(err))
	}
	defer rows.Close()
	var out []migrate.QuotaClass
	for rows.Next() {
		var qc migrate.QuotaClass
		var name, resource sql.NullString
		var hard sql.NullInt64
		if err := rows.Scan(&qc.ID, &name, &resource, &hard); err != nil {
			return nil, c.DB.Errorf("read quota_classes: %w", storage.CleanError(err))
		}
		qc.ClassName, qc.Resource, qc.HardLimit = sqlutil.StrPtr(name), sqlutil.StrPtr(resource), sqlutil.IntPtr(hard)
		out = append(out, qc)
	}
	if err := rows.Err(); err != nil {
		return nil, c.DB.Errorf("read quota_classes: %w", storage.CleanError(err))
	}
	return out, nil
}

// SoftDeleteQuotaClasses implements migrate.QuotaCell (Nova's
// _destroy_main_quota_classes, one transaction).
func (c *Cell) SoftDeleteQuotaClasses(ctx context.Context, ids []int64, now time.Time) error {
	return c.DB.Tx(ctx, func(tx *sqlx.Tx) error {
		for start := 0; start < len(ids); start += sqlutil.MaxInList {
			chunk := ids[start:min(start+sqlutil.MaxInList, len(ids))]
			args := []any{c.DB.TimeArg(&now)}
			for _, id := range chunk {
				args = append(args, id)
			}
			if _, err := tx.ExecContext(ctx, c.DB.Rebind(`UPDATE quota_classes SET deleted = id, deleted_at = ?, updated_at = updated_at
				WHERE deleted = 0 AND id IN (`+sqlutil.InList(len(chunk))+`)`), args...); err != nil {
				return c.DB.Errorf("soft-delete quota_classes: %w", storage.CleanError(err))
			}
		}
		return nil
	})
}
