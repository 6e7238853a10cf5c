package inventory

import (
	"context"
	"errors"
)

// ProviderInventories is one provider's generation and inventories.
type ProviderInventories struct {
	Generation  int64
	Inventories map[string]Inventory
	// Order is the classes in Placement's order, as ListInventories
	// gives them (Result.Order: osc's output of inventory set).
	Order []string
}

// InventoryReplace is ReplaceInventories' arguments for one provider.
type InventoryReplace struct {
	UUID       string
	Generation int64
	Want       map[string]Inventory
}

// BatchStore is a Store (the database) that reads and replaces many
// providers' inventories in few round trips: one round trip per provider
// made an aggregate's edit cost about twenty per provider across the
// network (issue 35).
type BatchStore interface {
	// InventoriesOf is Inventories for each uuid, in one read; a uuid
	// without a provider is absent.
	InventoriesOf(ctx context.Context, uuids []string) (map[string]ProviderInventories, error)
	// ReplaceInventoriesBatch is ReplaceInventories for each write in
	// order, each in a transaction of its own, stopping at the first that
	// fails: done are written (each at its Generation+1), err is
	// ws[done]'s failure. ErrNoBatch, with nothing written, when the
	// database cannot batch.
	ReplaceInventoriesBatch(ctx context.Context, ws []InventoryReplace) (done int, err error)
}

// ErrNoBatch is a BatchStore's answer when it cannot batch: the caller
// writes one provider at a time.
var ErrNoBatch = errors.New("no batched writes on this database")

// PlanAll is Plan for each provider, their inventories read at once; false
// when the store is no BatchStore (the caller plans one by one).
func (e *Editor) PlanAll(ctx context.Context, ps []Provider, edit InventoryEdit) ([]Result, bool) {
	bs, ok := e.Store.(BatchStore)
	if !ok {
		return nil, false
	}
	uuids := make([]string, len(ps))
	for i, p := range ps {
		uuids[i] = p.UUID
	}
	all, err := bs.InventoriesOf(ctx, uuids)
	if err != nil {
		out := make([]Result, len(ps))
		for i, p := range ps {
			out[i] = Result{Provider: p}.fail(err)
		}
		return out, true
	}
	dry := *e
	dry.DryRun = true
	out := make([]Result, len(ps))
	for i, p := range ps {
		pi, found := all[p.UUID]
		if !found {
			// Gone since it was listed: Plan's own read gives its error.
			out[i] = e.Plan(ctx, p, edit)
			continue
		}
		r := Result{Provider: p, Attempts: 1, Order: pi.Order}
		if again := dry.decide(ctx, &r, edit, pi.Generation, pi.Inventories); again {
			// Usage moved under the read: Plan reads again.
			out[i] = e.Plan(ctx, p, edit)
			continue
		}
		if r.Err == nil && r.Outcome != Unchanged {
			r.Outcome = Changed
		}
		out[i] = r
	}
	return out, true
}

// WriteAll is Write for each plan, the changed ones sent as batches; false
// when the store cannot batch or each write must be confirmed (the caller
// writes one by one). A write the batch could not make (a conflict, a
// refusal) is made again by Write, which re-reads after a conflict as
// EditInventories does: the batch's try comes on top of its attempts.
func (e *Editor) WriteAll(ctx context.Context, plans []Result, edit InventoryEdit) ([]Result, bool) {
	bs, ok := e.Store.(BatchStore)
	if !ok || e.DryRun || e.Confirm != nil {
		return nil, false
	}
	out := make([]Result, len(plans))
	copy(out, plans)
	var idx []int
	var ws []InventoryReplace
	for i, p := range plans {
		if p.Err == nil && p.Outcome == Changed {
			idx = append(idx, i)
			ws = append(ws, InventoryReplace{UUID: p.Provider.UUID, Generation: p.Generation, Want: p.Want})
		}
	}
	for from := 0; from < len(ws); {
		done, err := bs.ReplaceInventoriesBatch(ctx, ws[from:])
		if errors.Is(err, ErrNoBatch) {
			if from == 0 {
				return nil, false
			}
			for _, i := range idx[from:] {
				out[i] = e.Write(ctx, plans[i], edit)
			}
			break
		}
		for k := from; k < from+done; k++ {
			out[idx[k]].Generation = ws[k].Generation + 1
		}
		from += done
		if err != nil {
			out[idx[from]] = e.Write(ctx, plans[idx[from]], edit)
			from++
		}
	}
	return out, true
}

// ProviderTraits is one provider's generation and traits, in Placement's
// order (ProviderTraits).
type ProviderTraits struct {
	Generation int64
	Traits     []string
}

// TraitsSet is SetProviderTraits' arguments for one provider.
type TraitsSet struct {
	UUID       string
	Generation int64
	Traits     []string
}

// TraitBatchStore is a Store (the database) that reads and sets many
// providers' traits in few round trips (issue 35: provider apply wrote a
// provider's traits in a round trip per statement).
type TraitBatchStore interface {
	// TraitsOf is ProviderTraits for each uuid, in one read; a uuid
	// without a provider is absent.
	TraitsOf(ctx context.Context, uuids []string) (map[string]ProviderTraits, error)
	// SetProviderTraitsBatch is SetProviderTraits for each write in
	// order, each in a transaction of its own, stopping at the first that
	// fails: done are written (each at its Generation+1), err is
	// ws[done]'s failure. ErrNoBatch, with nothing written, when the
	// database cannot batch.
	SetProviderTraitsBatch(ctx context.Context, ws []TraitsSet) (done int, err error)
}
