package migrate

import (
	"context"
	"slices"
	"time"
)

// The quota migrations' rows in the summary table, named as nova-manage
// names them.
const (
	QuotaLimitsName  = "migrate_quota_limits_to_api_db"
	QuotaClassesName = "migrate_quota_classes_to_api_db"
)

// perProjectQuotas are the resources whose limits Nova keeps per project
// even when a per-user row names them: a cell's project_user_quotas row of
// one of these becomes a project limit (quotas) in the API database, its
// user dropped. Nova 26.2.2 nova/db/main/api.py PER_PROJECT_QUOTAS, read by
// Quotas._create_limit_in_db.
var perProjectQuotas = [...]string{"fixed_ips", "floating_ips", "networks"}

// QuotaLimit is a live row of a cell's quotas (UserID "") or
// project_user_quotas table.
type QuotaLimit struct {
	ProjectID *string // quotas.project_id is nullable
	UserID    string
	Resource  string
	HardLimit *int64
}

// APIQuotaLimit is where Quotas._create_limit_in_db puts a limit in the API
// database: per user (project_user_quotas) when the row has a user and its
// resource is not per project, else per project (quotas).
type APIQuotaLimit struct {
	QuotaLimit
	PerUser bool
}

// apiLimit is Quotas._create_limit_in_db's choice of table (nova/objects/quotas.py):
// per_user = user_id and resource not in PER_PROJECT_QUOTAS.
func apiLimit(l QuotaLimit, fromUserTable bool) APIQuotaLimit {
	perUser := fromUserTable && l.UserID != "" && !slices.Contains(perProjectQuotas[:], l.Resource)
	if !perUser {
		l.UserID = ""
	}
	return APIQuotaLimit{QuotaLimit: l, PerUser: perUser}
}

// QuotaClass is a live row of a cell's quota_classes.
type QuotaClass struct {
	ID        int64
	ClassName *string
	Resource  *string
	HardLimit *int64
}

// QuotaCell is a cell database's side of the quota migrations;
// storage/celldb implements it.
type QuotaCell interface {
	Name() string
	// QuotaLimits returns up to limit live (deleted = 0) rows of quotas, or
	// of project_user_quotas when perUser, without ORDER BY (Nova's query).
	QuotaLimits(ctx context.Context, perUser bool, limit int) ([]QuotaLimit, error)
	// SoftDeleteQuotaLimits soft-deletes, as oslo.db's soft_delete does
	// (deleted = id, deleted_at = now, updated_at kept), the live rows of
	// each limit's project, resource (and user).
	SoftDeleteQuotaLimits(ctx context.Context, perUser bool, limits []QuotaLimit, now time.Time) error
	// QuotaClasses returns up to limit live quota_classes rows, without
	// ORDER BY.
	QuotaClasses(ctx context.Context, limit int) ([]QuotaClass, error)
	// SoftDeleteQuotaClasses soft-deletes the live quota_classes rows by id.
	SoftDeleteQuotaClasses(ctx context.Context, ids []int64, now time.Time) error
}

// QuotaAPI is the API database's side; storage/apidb implements it.
type QuotaAPI interface {
	// CreateQuotaLimits inserts each limit (created_at = now) in one
	// transaction, leaving one the API database already has (the same
	// unique key: project and resource, and user for per-user limits)
	// as it is.
	CreateQuotaLimits(ctx context.Context, limits []APIQuotaLimit, now time.Time) error
	// CreateQuotaClasses inserts each class the same way; a class already
	// there has the same class_name and resource (Nova's manual check:
	// quota_classes has no unique key).
	CreateQuotaClasses(ctx context.Context, classes []QuotaClass, now time.Time) error
}

// QuotaLimits is Nova 26's migrate_quota_limits_to_api_db
// (nova/objects/quotas.py): up to count live per-project limits of the cell
// are created in the API database and soft-deleted in the cell; when fewer
// than count were found, the per-user limits follow with the rest of the
// count. found = done = the rows moved. nova-manage runs it on [database]
// connection's cell only; rpctl on every cell (or --cell) with one budget.
//
// Where rpctl differs: a limit the API database already has (a run
// interrupted between its two transactions) is left as the API database
// holds it and the others are created; Nova's one transaction then fails
// with QuotaExists, is rolled back whole, and the cell's rows are
// soft-deleted all the same, so that the batch's other limits are lost.
type QuotaLimits struct {
	API   QuotaAPI
	Cells []QuotaCell
	Now   func() time.Time
}

// Name implements Migration.
func (*QuotaLimits) Name() string { return QuotaLimitsName }

// Run implements Migration.
func (m *QuotaLimits) Run(ctx context.Context, count int) (found, done int, err error) {
	now := timeNow(m.Now)
	for _, cell := range m.Cells {
		for _, perUser := range []bool{false, true} {
			if count-done <= 0 {
				return found, done, nil
			}
			limits, err := cell.QuotaLimits(ctx, perUser, count-done)
			if err != nil {
				return found, done, err
			}
			if len(limits) == 0 {
				continue
			}
			api := make([]APIQuotaLimit, len(limits))
			for i, l := range limits {
				api[i] = apiLimit(l, perUser)
			}
			if err := m.API.CreateQuotaLimits(ctx, api, now); err != nil {
				return found, done, err
			}
			if err := cell.SoftDeleteQuotaLimits(ctx, perUser, limits, now); err != nil {
				return found, done, err
			}
			found += len(limits)
			done += len(limits)
		}
	}
	return found, done, nil
}

// QuotaClasses is Nova 26's migrate_quota_classes_to_api_db
// (nova/objects/quotas.py): up to count live quota classes of the cell are
// created in the API database and soft-deleted in the cell; found = done =
// the rows moved. Every cell (or --cell) with one budget, as QuotaLimits;
// and as there, a class the API database already has is kept and the
// others created (Nova rolls the batch back on QuotaClassExists and
// soft-deletes it all the same).
type QuotaClasses struct {
	API   QuotaAPI
	Cells []QuotaCell
	Now   func() time.Time
}

// Name implements Migration.
func (*QuotaClasses) Name() string { return QuotaClassesName }

// Run implements Migration.
func (m *QuotaClasses) Run(ctx context.Context, count int) (found, done int, err error) {
	now := timeNow(m.Now)
	for _, cell := range m.Cells {
		if count-done <= 0 {
			break
		}
		classes, err := cell.QuotaClasses(ctx, count-done)
		if err != nil {
			return found, done, err
		}
		if len(classes) == 0 {
			continue
		}
		if err := m.API.CreateQuotaClasses(ctx, classes, now); err != nil {
			return found, done, err
		}
		ids := make([]int64, len(classes))
		for i, c := range classes {
			ids[i] = c.ID
		}
		if err := cell.SoftDeleteQuotaClasses(ctx, ids, now); err != nil {
			return found, done, err
		}
		found += len(classes)
		done += len(classes)
	}
	return found, done, nil
}
