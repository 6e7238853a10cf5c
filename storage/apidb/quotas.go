package apidb

import (
	"context"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/rpctl/rpctl/migrate"
	"github.com/rpctl/rpctl/storage"
)

var _ migrate.QuotaAPI = (*API)(nil)

// CreateQuotaLimits implements migrate.QuotaAPI: the rows
// Quotas._create_limit_in_db inserts (created_at stamped, updated_at NULL),
// in one transaction; a limit whose unique key (quotas: project_id,
// resource; project_user_quotas: user_id, project_id, resource) the table
// already holds is left, compared with the database's = (its collation, as
// the unique key compares; a NULL project never equals one). A concurrent
// run that created one first makes the transaction run again (EnsureTx).
func (a *API) CreateQuotaLimits(ctx context.Context, limits []migrate.APIQuotaLimit, now time.Time) error {
	db := a.DB
	return db.EnsureTx(ctx, func(tx *sqlx.Tx) error {
		for _, l := range limits {
			exists := `SELECT COUNT(*) FROM quotas WHERE project_id = ? AND resource = ?`
			insert := `INSERT INTO quotas (created_at, project_id, resource, hard_limit) VALUES (?, ?, ?, ?)`
			keys := []any{l.ProjectID, l.Resource}
			if l.PerUser {
				exists = `SELECT COUNT(*) FROM project_user_quotas WHERE user_id = ? AND project_id = ? AND resource = ?`
				insert = `INSERT INTO project_user_quotas (created_at, user_id, project_id, resource, hard_limit) VALUES (?, ?, ?, ?, ?)`
				keys = []any{l.UserID, l.ProjectID, l.Resource}
			}
			var n int
			if err := tx.GetContext(ctx, &n, db.Rebind(exists), keys...); err != nil {
				return db.Errorf("read quota limits: %w", storage.CleanError(err))
			}
			if n > 0 {
				continue
			}
			args := append(append([]any{db.TimeArg(&now)}, keys...), l.HardLimit)
			if _, err := tx.ExecContext(ctx, db.Rebind(insert), args...); err != nil {
				return db.Errorf("create quota limit: %w", storage.CleanError(err))
			}
		}
		return nil
	})
}

// CreateQuotaClasses implements migrate.QuotaAPI: the rows
// Quotas._create_class_in_db inserts, in one transaction; a class whose
// class_name and resource are already there (Nova's _get_class_from_db
// check, NULL matching NULL as SQLAlchemy's filter_by(x=None) does) is
// left.
func (a *API) CreateQuotaClasses(ctx context.Context, classes []migrate.QuotaClass, now time.Time) error {
	db := a.DB
	eq := "IS"
	if db.IsMySQL() {
		eq = "<=>"
	}
	return db.EnsureTx(ctx, func(tx *sqlx.Tx) error {
		for _, c := range classes {
			var n int
			if err := tx.GetContext(ctx, &n, db.Rebind(`SELECT COUNT(*) FROM quota_classes WHERE class_name `+eq+` ? AND resource `+eq+` ?`), c.ClassName, c.Resource); err != nil {
				return db.Errorf("read quota_classes: %w", storage.CleanError(err))
			}
			if n > 0 {
				continue
			}
			if _, err := tx.ExecContext(ctx, db.Rebind(`INSERT INTO quota_classes (created_at, class_name, resource, hard_limit) VALUES (?, ?, ?, ?)`),
				db.TimeArg(&now), c.ClassName, c.Resource, c.HardLimit); err != nil {
				return db.Errorf("create quota class: %w", storage.CleanError(err))
			}
		}
		return nil
	})
}
