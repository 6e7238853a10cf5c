package status

import (
	"context"
	"sort"
)

// Drift is one inventory total that disagrees with its compute node's
// legacy column: what the Inventory Drift check counts, one by one, for
// metrics.
type Drift struct {
	Cell, Host   string
	ProviderUUID string
	Provider     string
	Class        string
	Legacy       int64
	Placement    int64
}

// Drifts lists every drifted inventory, cells in order; the errors are the
// cells (or Placement) that could not be read.
func (e *Env) Drifts(ctx context.Context) ([]Drift, []error) {
	nodes, errs := e.loadNodes(ctx)
	provs, perr := e.loadProviders(ctx)
	if perr != nil {
		return nil, append([]error{perr}, errs...)
	}
	byUUID := e.providersByUUID(provs)
	var out []Drift
	for _, cell := range e.cellOrder() {
		for _, n := range nodes[cell] {
			out = append(out, driftOf(cell, n, byUUID[n.UUID])...)
		}
	}
	return out, errs
}

// driftOf compares a live node's legacy columns with its provider's
// inventory totals (nil p: no provider, the Resource Providers check's
// business).
func driftOf(cell string, n NodeCapacity, p *ProviderTotals) []Drift {
	if n.Deleted || n.UUID == "" || p == nil {
		return nil
	}
	var out []Drift
	tot := placementTotals(*p)
	for i, v := range legacy(n) {
		if tot[i] != nil && *tot[i] != v {
			out = append(out, Drift{Cell: cell, Host: hostOf(n.NodeRef), ProviderUUID: p.UUID, Provider: p.Name,
				Class: legacyClasses[i], Legacy: v, Placement: *tot[i]})
		}
	}
	return out
}

// Missing is what the instances without allocations on one provider use of
// one class: heal_allocations' work, per provider and class.
type Missing struct {
	ProviderUUID string // "" when the instance's node is unknown
	Provider     string // its name, when Placement has it
	Class        string // "" when the instance's flavor cannot be read
	Instances    int
	Amount       int64
}

// MissingAllocations sums the instances without allocations per provider
// and class (an instance counts once per class its flavor asks for).
func (e *Env) MissingAllocations(ctx context.Context) ([]Missing, []error) {
	byCell, errs := e.loadMissing(ctx)
	sum := map[[2]string]*Missing{}
	for _, list := range byCell {
		for _, mi := range list {
			if mi.usage == nil {
				k := [2]string{mi.provider, ""}
				if sum[k] == nil {
					sum[k] = &Missing{ProviderUUID: mi.provider}
				}
				sum[k].Instances++
				continue
			}
			for rc, n := range mi.usage {
				k := [2]string{mi.provider, rc}
				if sum[k] == nil {
					sum[k] = &Missing{ProviderUUID: mi.provider, Class: rc}
				}
				sum[k].Instances++
				sum[k].Amount += n
			}
		}
	}
	var byUUID map[string]*ProviderTotals
	if provs, err := e.loadProviders(ctx); err == nil {
		byUUID = e.providersByUUID(provs)
	}
	out := make([]Missing, 0, len(sum))
	for _, m := range sum {
		if p := byUUID[m.ProviderUUID]; p != nil {
			m.Provider = p.Name
		}
		out = append(out, *m)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].ProviderUUID != out[j].ProviderUUID {
			return out[i].ProviderUUID < out[j].ProviderUUID
		}
		return out[i].Class < out[j].Class
	})
	return out, errs
}
