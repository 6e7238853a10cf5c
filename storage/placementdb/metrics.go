package placementdb

import (
	"context"

	"github.com/rpctl/rpctl/storage"
)

// ProjectUsage is what one project's consumers hold of one class, as GET
// /usages?project_id= sums it.
type ProjectUsage struct {
	Project string
	Class   string
	Used    int64
}

// ProjectUsages sums the allocations per project and class.
func ProjectUsages(ctx context.Context, p *storage.DB) ([]ProjectUsage, error) {
	rows, err := p.QueryContext(ctx, `SELECT pr.external_id, COALESCE(rc.name, ''), SUM(a.used)
FROM allocations a JOIN consumers c ON c.uuid = a.consumer_id JOIN projects pr ON pr.id = c.project_id
LEFT JOIN resource_classes rc ON rc.id = a.resource_class_id
GROUP BY pr.external_id, rc.name ORDER BY pr.external_id, rc.name`)
	if err != nil {
		return nil, p.Errorf("read usages per project: %w", storage.CleanError(err))
	}
	defer rows.Close()
	var out []ProjectUsage
	for rows.Next() {
		var u ProjectUsage
		if err := rows.Scan(&u.Project, &u.Class, &u.Used); err != nil {
			return nil, p.Errorf("read usages per project: %w", storage.CleanError(err))
		}
		out = append(out, u)
	}
	if err := rows.Err(); err != nil {
		return nil, p.Errorf("read usages per project: %w", storage.CleanError(err))
	}
	return out, nil
}
