package shared

import (
	"context"

	"github.com/rpctl/rpctl/metrics"
	"github.com/rpctl/rpctl/status"
)

// StatusFamilies are the checks' results with the drifted inventories and
// the instances without allocations they found, one by one. Each finding
// needs every database it reads: when one could not be opened or read, its
// families are left out (a 0 would read as "none found") and the errors
// returned, once each.
func StatusFamilies(ctx context.Context, env *status.Env, rep status.Report) ([]*metrics.Family, []error) {
	fams := metrics.Status(rep.Results)
	var errs []error
	seen := map[string]bool{}
	add := func(es []error) {
		for _, e := range es {
			if e != nil && !seen[e.Error()] {
				seen[e.Error()] = true
				errs = append(errs, e)
			}
		}
	}
	add(env.CellErrs)
	add([]error{env.PlacementErr})
	if drifts, derrs := env.Drifts(ctx); len(derrs) == 0 && len(env.CellErrs) == 0 && env.PlacementErr == nil {
		fams = append(fams, metrics.Drift(drifts)...)
	} else {
		add(derrs)
	}
	if missing, merrs := env.MissingAllocations(ctx); len(merrs) == 0 && len(env.CellErrs) == 0 && env.PlacementErr == nil {
		fams = append(fams, metrics.Missing(missing)...)
	} else {
		add(merrs)
	}
	return fams, errs
}
