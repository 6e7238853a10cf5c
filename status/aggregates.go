package status

import (
	"context"
	"fmt"

	"github.com/rpctl/rpctl/migrate"
)

// CheckAggregatesInSync compares Nova's host aggregates with Placement's
// provider aggregates.
const CheckAggregatesInSync = "Aggregates in Sync"

// AggregateDiffer is what the check asks: where Nova and Placement
// disagree (migrate.AggregateSync answers it).
type AggregateDiffer interface {
	Diff(ctx context.Context) (*migrate.AggregateDiff, error)
}

func (e *Env) checkAggregates(ctx context.Context) (Code, string, error) {
	// Every cell counts: a host of a dead cell would look unplaceable.
	errs := append([]error(nil), e.CellErrs...)
	if e.Placement == nil {
		errs = append(errs, e.placementErr())
	}
	if e.AggregatesErr != nil {
		errs = append(errs, e.AggregatesErr)
	}
	for _, err := range errs {
		if err != nil {
			return unavailable(errs...)
		}
	}
	if e.Aggregates == nil {
		// No API database configured at all: there are no Nova aggregates
		// to compare (a cell-and-Placement-only setup).
		return Success, "No Nova API database configured: host aggregates not compared.", nil
	}
	d, err := e.Aggregates.Diff(ctx)
	if err != nil {
		return unavailable(err)
	}
	if len(d.Missing)+len(d.Unresolved)+len(d.Stray) == 0 {
		return Success, "", nil
	}
	var parts []string
	if n := len(d.Missing); n > 0 {
		parts = append(parts, fmt.Sprintf("%s of Nova's aggregates %s missing from Placement (hosts: %s); run rpctl migrate aggregates.",
			plural(n, "host membership", "host memberships"), map[bool]string{true: "is", false: "are"}[n == 1], e.firstHosts(d.Missing)))
	}
	if n := len(d.Unresolved); n > 0 {
		parts = append(parts, fmt.Sprintf("%s of Nova's aggregates cannot be mirrored: no host mapping, no or several compute nodes, or no resource provider (hosts: %s); see rpctl migrate aggregates --dry-run.",
			plural(n, "host membership", "host memberships"), e.firstHosts(d.Unresolved)))
	}
	if n := len(d.Stray); n > 0 {
		parts = append(parts, fmt.Sprintf("%s in Placement no Nova aggregate explains (hosts: %s); rpctl migrate aggregates --prune --dry-run lists them.",
			plural(n, "provider membership", "provider memberships"), e.firstHosts(d.Stray)))
	}
	details := parts[0]
	for _, p := range parts[1:] {
		details += " " + p
	}
	return Warning, details, nil
}

// firstHosts names the first distinct hosts of ms, and how many more.
func (e *Env) firstHosts(ms []migrate.Membership) string {
	seen := map[string]bool{}
	var names []string
	for _, m := range ms {
		if !seen[m.Host] {
			seen[m.Host] = true
			if len(names) < e.sample() {
				names = append(names, m.Host)
			}
		}
	}
	return listSome(names, len(seen))
}
