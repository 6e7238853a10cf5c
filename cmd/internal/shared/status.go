package shared

import (
	"context"

	"github.com/rpctl/rpctl/metrics"
	"github.com/rpctl/rpctl/status"
)

// StatusFamilies are the checks' results with the drifted inventories and
// the instances without allocations they found, one by one.
func StatusFamilies(ctx context.Context, env *status.Env, rep status.Report) []*metrics.Family {
	fams := metrics.Status(rep.Results)
	drifts, _ := env.Drifts(ctx)
	fams = append(fams, metrics.Drift(drifts)...)
	missing, _ := env.MissingAllocations(ctx)
	return append(fams, metrics.Missing(missing)...)
}
