package providerconfig

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"

	"github.com/rpctl/rpctl/inventory"
)

// Record is the inventory the entry asks for, with Placement's defaults for
// the fields it leaves out (a PUT replaces the whole record, as Nova's
// resource tracker sends it).
func (inv Inventory) Record() inventory.Inventory {
	r := inventory.Defaults
	r.Total = inv.Total
	if inv.Reserved != nil {
		r.Reserved = *inv.Reserved
	}
	if inv.MinUnit != nil {
		r.MinUnit = *inv.MinUnit
	}
	if inv.MaxUnit != nil {
		r.MaxUnit = *inv.MaxUnit
	}
	if inv.StepSize != nil {
		r.StepSize = *inv.StepSize
	}
	if inv.AllocationRatio != nil {
		r.AllocationRatio = *inv.AllocationRatio
	}
	return r
}

// Change is one class or trait of one provider.
type Change struct {
	Provider inventory.Provider
	Entry    string // the config entry it comes from
	Kind     string // "inventory" or "trait"
	Name     string
	Before   *inventory.Inventory // nil: absent (inventory changes)
	After    *inventory.Inventory
	// Action is "add", "update" or "unchanged".
	Action string
}

// Target is one provider a config entry applies to, with what it adds.
type Target struct {
	Provider inventory.Provider
	Entry    *Provider
}

// Plan is what Apply would do.
type Plan struct {
	NewClasses []string // custom classes to create
	NewTraits  []string // custom traits to create
	Targets    []Target
	Changes    []Change
	// Skipped are entries naming providers Placement does not have (Nova
	// logs them and goes on).
	Skipped []string
}

// Resolve finds the providers each entry applies to, as the resource
// tracker's _get_providers_to_update does: a uuid or a name names one
// provider (absent: skipped); $COMPUTE_NODE names every root provider with
// the COMPUTE_NODE trait that no other entry names. One provider named by
// two entries (its name and its uuid) is an error, as in Nova.
func Resolve(ctx context.Context, st inventory.Store, cfg *Config) ([]Target, []string, error) {
	var targets []Target
	var skipped []string
	explicit := map[string]bool{}
	for _, p := range cfg.Providers {
		if p.ID != ComputeNode {
			explicit[p.ID] = true
		}
	}
	byUUID := map[string]*Provider{}
	var errs Errors
	add := func(pr inventory.Provider, e *Provider) {
		if prev, dup := byUUID[pr.UUID]; dup {
			errs = append(errs, fmt.Sprintf("%s: identification: provider %s (%s) is also configured by %s: Nova refuses a provider named by both its name and its uuid",
				e.Label(), pr.Name, pr.UUID, prev.Label()))
			return
		}
		byUUID[pr.UUID] = e
		targets = append(targets, Target{Provider: pr, Entry: e})
	}
	for _, p := range cfg.Providers {
		switch {
		case p.ID == ComputeNode:
			list, err := st.ListProviders(ctx, inventory.ProviderFilter{Required: []string{"COMPUTE_NODE"}})
			if err != nil {
				return nil, nil, err
			}
			sort.Slice(list, func(i, j int) bool { return list[i].Name < list[j].Name })
			for _, pr := range list {
				if pr.ParentUUID == "" && !explicit[pr.UUID] && !explicit[pr.Name] {
					add(pr, p)
				}
			}
		case p.ByName:
			list, err := st.ListProviders(ctx, inventory.ProviderFilter{Name: p.ID})
			if err != nil {
				return nil, nil, err
			}
			if len(list) == 0 {
				skipped = append(skipped, fmt.Sprintf("%s: Placement has no provider of that name; entry ignored", p.Label()))
				continue
			}
			add(list[0], p)
		default:
			pr, err := st.GetProvider(ctx, p.ID)
			if errors.Is(err, inventory.ErrNotFound) {
				skipped = append(skipped, fmt.Sprintf("%s: Placement has no provider with that uuid; entry ignored", p.Label()))
				continue
			}
			if err != nil {
				return nil, nil, err
			}
			add(pr, p)
		}
	}
	if len(errs) > 0 {
		return nil, nil, errs
	}
	return targets, skipped, nil
}

// MakePlan resolves the entries and compares them with what Placement
// holds now.
func MakePlan(ctx context.Context, st inventory.Store, cfg *Config) (*Plan, error) {
	targets, skipped, err := Resolve(ctx, st, cfg)
	if err != nil {
		return nil, err
	}
	pl := &Plan{Targets: targets, Skipped: skipped}
	var errs Errors
	for _, p := range cfg.Providers {
		for _, rc := range p.Classes {
			if err := inventory.Validate(rc, p.Inventories[rc].Record()); err != nil {
				errs = append(errs, fmt.Sprintf("%s: inventories: %v", p.Label(), err))
			}
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	classes, err := st.ListResourceClasses(ctx)
	if err != nil {
		return nil, err
	}
	traits, err := st.ListTraits(ctx, inventory.TraitFilter{})
	if err != nil {
		return nil, err
	}
	haveClass, haveTrait := setOf(classes), setOf(traits)
	wantClass, wantTrait := map[string]bool{}, map[string]bool{}
	invs, trs := readAll(ctx, st, targets)
	for _, t := range targets {
		for _, rc := range t.Entry.Classes {
			wantClass[rc] = true
		}
		for _, tr := range t.Entry.Traits {
			wantTrait[tr] = true
		}
		inv, read := invs[t.Provider.UUID]
		if !read {
			if _, inv.Inventories, err = st.Inventories(ctx, t.Provider.UUID); err != nil {
				return nil, err
			}
		}
		have, read := trs[t.Provider.UUID]
		if !read {
			if _, have.Traits, err = st.ProviderTraits(ctx, t.Provider.UUID); err != nil {
				return nil, err
			}
		}
		pl.Changes = append(pl.Changes, diff(t, inv.Inventories, have.Traits)...)
	}
	for rc := range wantClass {
		if !haveClass[rc] {
			pl.NewClasses = append(pl.NewClasses, rc)
		}
	}
	for tr := range wantTrait {
		if !haveTrait[tr] {
			pl.NewTraits = append(pl.NewTraits, tr)
		}
	}
	sort.Strings(pl.NewClasses)
	sort.Strings(pl.NewTraits)
	return pl, nil
}

// readAll reads every target's inventories and traits at once when the
// store can (inventory.BatchStore, inventory.TraitBatchStore: the
// database), so that planning 2,000 providers is not 2,000 reads of each
// (issue 35); a target it does not return (or a store that cannot) is read
// alone, which gives its own answer.
func readAll(ctx context.Context, st inventory.Store, targets []Target) (map[string]inventory.ProviderInventories, map[string]inventory.ProviderTraits) {
	bs, ok := st.(inventory.BatchStore)
	ts, ok2 := st.(inventory.TraitBatchStore)
	if !ok || !ok2 || len(targets) == 0 {
		return nil, nil
	}
	invs, err := bs.InventoriesOf(ctx, uuidsOf(targets))
	if err != nil {
		return nil, nil
	}
	trs, err := ts.TraitsOf(ctx, uuidsOf(targets))
	if err != nil {
		return nil, nil
	}
	return invs, trs
}

func uuidsOf(targets []Target) []string {
	out := make([]string, len(targets))
	for i, t := range targets {
		out[i] = t.Provider.UUID
	}
	return out
}

func setOf(names []string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// diff is one target's changes against its current inventories and traits.
func diff(t Target, inv map[string]inventory.Inventory, traits []string) []Change {
	var out []Change
	for _, rc := range t.Entry.Classes {
		want := t.Entry.Inventories[rc].Record()
		c := Change{Provider: t.Provider, Entry: t.Entry.Label(), Kind: "inventory", Name: rc, After: &want, Action: "add"}
		if cur, ok := inv[rc]; ok {
			c.Before = &cur
			c.Action = "update"
			if sameRecord(cur, want) {
				c.Action = "unchanged"
			}
		}
		out = append(out, c)
	}
	for _, tr := range t.Entry.Traits {
		c := Change{Provider: t.Provider, Entry: t.Entry.Label(), Kind: "trait", Name: tr, Action: "add"}
		if slices.Contains(traits, tr) {
			c.Action = "unchanged"
		}
		out = append(out, c)
	}
	return out
}

// Result is what Apply did.
type Result struct {
	ClassesCreated []string
	TraitsCreated  []string
	// Written counts providers written; Unchanged those that needed
	// nothing; Failed names the providers whose write failed, with why.
	Written   int
	Unchanged int
	Failed    []string
}

// maxAttempts bounds the re-read-and-retry loop on generation conflicts
// (a nova-compute writing the same provider meanwhile), as Nova's resource
// tracker retries its update.
const maxAttempts = 4

// Apply creates the missing classes and traits, then writes each target:
// all its inventories in one generation-checked PUT (the named classes
// added or replaced, the others kept), then its traits in one
// generation-checked PUT (the named traits added, the others kept). A
// generation conflict re-reads the provider and re-applies the entry; a
// provider that still fails is reported and the others go on.
func Apply(ctx context.Context, st inventory.Store, pl *Plan) (*Result, error) {
	res := &Result{}
	for _, rc := range pl.NewClasses {
		created, err := st.CreateResourceClass(ctx, rc)
		if err != nil {
			return res, fmt.Errorf("create resource class %s: %w", rc, err)
		}
		if created {
			res.ClassesCreated = append(res.ClassesCreated, rc)
		}
	}
	for _, tr := range pl.NewTraits {
		created, err := st.CreateTrait(ctx, tr)
		if err != nil {
			return res, fmt.Errorf("create trait %s: %w", tr, err)
		}
		if created {
			res.TraitsCreated = append(res.TraitsCreated, tr)
		}
	}
	wrote := make([]bool, len(pl.Targets))
	errs := make([]error, len(pl.Targets))
	if !applyBatched(ctx, st, pl.Targets, wrote, errs) {
		for i, t := range pl.Targets {
			if wrote[i], errs[i] = applyInventories(ctx, st, t); errs[i] == nil {
				var w bool
				w, errs[i] = applyTraits(ctx, st, t)
				wrote[i] = wrote[i] || w
			}
		}
	}
	for i, t := range pl.Targets {
		switch {
		case errs[i] != nil:
			res.Failed = append(res.Failed, fmt.Sprintf("%s: provider %s (%s): %v", t.Entry.Label(), t.Provider.Name, t.Provider.UUID, errs[i]))
		case wrote[i]:
			res.Written++
		default:
			res.Unchanged++
		}
	}
	return res, nil
}

// applyBatched writes the targets' inventories, then their traits, as
// batches (inventory.BatchStore, inventory.TraitBatchStore: many
// providers' transactions per round trip, issue 35), each provider's
// write the one applyInventories and applyTraits would make from the same
// read (the same generation-checked change, the same generation after).
// A write the batch could not make (a conflict, a refusal, one it leaves
// to the single write) is made again by applyInventories or applyTraits,
// which re-read and retry as they do alone: the batch's try comes on top
// of their attempts. False, with nothing written, when the store cannot
// batch.
func applyBatched(ctx context.Context, st inventory.Store, targets []Target, wrote []bool, errs []error) bool {
	bs, ok := st.(inventory.BatchStore)
	ts, ok2 := st.(inventory.TraitBatchStore)
	if !ok || !ok2 || len(targets) == 0 {
		return false
	}
	invs, err := bs.InventoriesOf(ctx, uuidsOf(targets))
	if err != nil {
		return false
	}
	var idx []int
	var ws []inventory.InventoryReplace
	alone := map[int]bool{}
	for i, t := range targets {
		cur, read := invs[t.Provider.UUID]
		if !read {
			alone[i] = true
			continue
		}
		if next, changed := wantInventories(cur.Inventories, t); changed {
			idx = append(idx, i)
			ws = append(ws, inventory.InventoryReplace{UUID: t.Provider.UUID, Generation: cur.Generation, Want: next})
		}
	}
	for from := 0; from < len(ws); {
		done, err := bs.ReplaceInventoriesBatch(ctx, ws[from:])
		if errors.Is(err, inventory.ErrNoBatch) {
			if from == 0 {
				return false // nothing written: the caller writes one by one
			}
			for _, i := range idx[from:] {
				alone[i] = true
			}
			break
		}
		for k := from; k < from+done; k++ {
			wrote[idx[k]] = true
		}
		from += done
		if err != nil {
			alone[idx[from]] = true
			from++
		}
	}
	for _, i := range slices.Sorted(maps.Keys(alone)) {
		wrote[i], errs[i] = applyInventories(ctx, st, targets[i])
	}
	return applyTraitsBatched(ctx, st, ts, targets, wrote, errs)
}

// applyTraitsBatched is applyBatched's second half: the traits, read after
// the inventories were written.
func applyTraitsBatched(ctx context.Context, st inventory.Store, ts inventory.TraitBatchStore, targets []Target, wrote []bool, errs []error) bool {
	alone := map[int]bool{}
	var live []Target
	var liveIdx []int
	for i, t := range targets {
		if errs[i] == nil {
			live, liveIdx = append(live, t), append(liveIdx, i)
		}
	}
	trs, err := ts.TraitsOf(ctx, uuidsOf(live))
	if err != nil {
		trs = nil // each is read alone, which gives its own answer
	}
	var idx []int
	var ws []inventory.TraitsSet
	for k, t := range live {
		i := liveIdx[k]
		cur, read := trs[t.Provider.UUID]
		if !read {
			alone[i] = true
			continue
		}
		if next, changed := wantTraits(cur.Traits, t); changed {
			idx = append(idx, i)
			ws = append(ws, inventory.TraitsSet{UUID: t.Provider.UUID, Generation: cur.Generation, Traits: next})
		}
	}
	for from := 0; from < len(ws); {
		done, err := ts.SetProviderTraitsBatch(ctx, ws[from:])
		if errors.Is(err, inventory.ErrNoBatch) {
			for _, i := range idx[from:] {
				alone[i] = true
			}
			break
		}
		for k := from; k < from+done; k++ {
			wrote[idx[k]] = true
		}
		from += done
		if err != nil {
			alone[idx[from]] = true
			from++
		}
	}
	for _, i := range slices.Sorted(maps.Keys(alone)) {
		w, err := applyTraits(ctx, st, targets[i])
		wrote[i], errs[i] = wrote[i] || w, err
	}
	return true
}

// wantInventories is inv with the entry's classes added or replaced, and
// whether that changes anything.
func wantInventories(inv map[string]inventory.Inventory, t Target) (map[string]inventory.Inventory, bool) {
	next := make(map[string]inventory.Inventory, len(inv)+len(t.Entry.Classes))
	for k, v := range inv {
		next[k] = v
	}
	changed := false
	for _, rc := range t.Entry.Classes {
		want := t.Entry.Inventories[rc].Record()
		if cur, ok := inv[rc]; !ok || !sameRecord(cur, want) {
			next[rc] = want
			changed = true
		}
	}
	return next, changed
}

// wantTraits is have with the entry's traits added, sorted, and whether
// that adds any.
func wantTraits(have []string, t Target) ([]string, bool) {
	next := slices.Clone(have)
	for _, tr := range t.Entry.Traits {
		if !slices.Contains(next, tr) {
			next = append(next, tr)
		}
	}
	if len(next) == len(have) {
		return nil, false
	}
	sort.Strings(next)
	return next, true
}

// applyInventories writes the entry's inventories to its provider in one
// generation-checked PUT, re-reading and retrying after a conflict.
func applyInventories(ctx context.Context, st inventory.Store, t Target) (bool, error) {
	for attempt := 1; ; attempt++ {
		gen, inv, err := st.Inventories(ctx, t.Provider.UUID)
		if err != nil {
			return false, err
		}
		next, changed := wantInventories(inv, t)
		if !changed {
			return false, nil
		}
		_, err = st.ReplaceInventories(ctx, t.Provider.UUID, gen, next)
		if errors.Is(err, inventory.ErrGeneration) && attempt < maxAttempts {
			continue
		}
		if err != nil {
			return false, fmt.Errorf("inventories: %w", err)
		}
		return true, nil
	}
}

// applyTraits adds the entry's traits to its provider in one
// generation-checked PUT, re-reading and retrying after a conflict.
func applyTraits(ctx context.Context, st inventory.Store, t Target) (bool, error) {
	for attempt := 1; ; attempt++ {
		gen, have, err := st.ProviderTraits(ctx, t.Provider.UUID)
		if err != nil {
			return false, err
		}
		next, changed := wantTraits(have, t)
		if !changed {
			return false, nil
		}
		_, err = st.SetProviderTraits(ctx, t.Provider.UUID, gen, next)
		if errors.Is(err, inventory.ErrGeneration) && attempt < maxAttempts {
			continue
		}
		if err != nil {
			return false, fmt.Errorf("traits: %w", err)
		}
		return true, nil
	}
}

// sameRecord compares records as Placement stores them: allocation_ratio is
// a single-precision FLOAT column, so 1.1 reads back as 1.100000023841858
// and must still count as unchanged.
func sameRecord(a, b inventory.Inventory) bool {
	ra, rb := float32(a.AllocationRatio), float32(b.AllocationRatio)
	a.AllocationRatio, b.AllocationRatio = 0, 0
	return a == b && ra == rb
}
