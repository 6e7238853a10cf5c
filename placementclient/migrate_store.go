package placementclient

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/rpctl/rpctl/inventory"
	"github.com/rpctl/rpctl/migrate"
)

// MigratePlacement is the Placement API as the compute-node inventory
// migration reads and writes it (migrate.Placement), for a controller
// whose config files give nova.conf's [placement] credentials and no
// Placement database (issue 34). It makes the calls Nova's report client
// makes for a compute node (nova/scheduler/client/report.py:
// _create_resource_provider, set_inventory_for_provider,
// set_traits_for_provider, set_aggregates_for_provider): POST
// /resource_providers, then a generation-checked PUT of the inventories,
// the traits and the aggregates, each the whole set. The generations it
// leaves are those the database path writes (migrate.bumps counts one per
// PUT). A 409 generation conflict is migrate.ErrGenerationConflict: the
// migration re-reads the node and re-plans (Nova's report client refreshes
// and retries the same way), so a concurrent nova-compute's write is never
// overwritten blindly.
//
// What the API cannot give: one transaction per node. A node whose write
// fails after this write created providers has them deleted again (no
// allocation can be on a provider created a moment ago without its
// inventory); a failure after an existing provider's PUT leaves that PUT
// applied, which the error says and a re-run completes (it re-plans from
// what Placement then holds). It cannot move allocations either (no
// migrate.AllocationReader): a layout switch of a node with allocations is
// refused for that node, naming the database path.
type MigratePlacement struct {
	C *Client
	// Workers is how many providers are read at once (0: 8).
	Workers int

	mu sync.Mutex
	// known are the custom classes and traits this store made sure exist,
	// and the aggregates it was asked for (PUT aggregates creates them).
	known migrate.PlacementIDs
}

var _ migrate.Placement = (*MigratePlacement)(nil)

// NeedsDatabase is what the API path of the inventory migration cannot do,
// for the messages that send an operator to placement.conf.
const NeedsDatabase = "give placement.conf with [placement_database] connection, or --placement-db"

func (s *MigratePlacement) workers() int {
	if s.Workers > 0 {
		return s.Workers
	}
	return 8
}

// LoadPlacementState reads every provider with its inventories, traits,
// aggregates and the classes with usage: GET /resource_providers, then
// each provider's four reads.
func (s *MigratePlacement) LoadPlacementState(ctx context.Context) (*migrate.PlacementState, error) {
	rps, err := s.C.ListProviders(ctx, ProviderFilter{})
	if err != nil {
		return nil, err
	}
	return s.state(ctx, rps)
}

// LoadProviders reads the providers with these uuids or names and every
// provider of their trees (GET /resource_providers?uuid=, ?name=, then
// ?in_tree= of each root).
func (s *MigratePlacement) LoadProviders(ctx context.Context, uuids, names []string) (*migrate.PlacementState, error) {
	roots := map[string]bool{}
	find := func(f ProviderFilter) error {
		rps, err := s.C.ListProviders(ctx, f)
		if err != nil {
			return err
		}
		for _, rp := range rps {
			roots[rootOf(&rp)] = true
		}
		return nil
	}
	for _, u := range slices.Compact(slices.Sorted(slices.Values(uuids))) {
		if err := find(ProviderFilter{UUID: u}); err != nil {
			return nil, err
		}
	}
	for _, n := range slices.Compact(slices.Sorted(slices.Values(names))) {
		if err := find(ProviderFilter{Name: n}); err != nil {
			return nil, err
		}
	}
	var rps []ResourceProvider
	seen := map[string]bool{}
	for _, root := range slices.Sorted(maps.Keys(roots)) {
		tree, err := s.C.ListProviders(ctx, ProviderFilter{InTree: root})
		if err != nil {
			return nil, err
		}
		for _, rp := range tree {
			if !seen[rp.UUID] {
				seen[rp.UUID] = true
				rps = append(rps, rp)
			}
		}
	}
	return s.state(ctx, rps)
}

func rootOf(rp *ResourceProvider) string {
	if rp.RootProviderUUID != "" {
		return rp.RootProviderUUID
	}
	return rp.UUID
}

// state reads the providers' details and builds the migration's view.
// A provider deleted between the list and its reads is left out, as if
// the list had come a moment later.
func (s *MigratePlacement) state(ctx context.Context, rps []ResourceProvider) (*migrate.PlacementState, error) {
	details := make([]providerDetail, len(rps))
	gone := make([]bool, len(rps))
	if err := parallel(ctx, s.workers(), len(rps), func(i int) error {
		d, err := s.C.providerDetail(ctx, rps[i].UUID)
		if errors.Is(err, ErrNotFound) {
			gone[i] = true
			return nil
		}
		details[i] = d
		return err
	}); err != nil {
		return nil, err
	}
	keep := rps[:0:0]
	var kept []providerDetail
	for i := range rps {
		if !gone[i] {
			// The generation the inventories were read at: a change
			// between the list and the reads makes the write conflict
			// and re-plan rather than pass with the list's stale one.
			rps[i].Generation = details[i].inv.Generation
			keep, kept = append(keep, rps[i]), append(kept, details[i])
		}
	}
	return placementState(keep, kept), nil
}

// placementState is the migration's view of providers read through the
// API: the status checks' (StatusPlacement) and the migration's.
func placementState(rps []ResourceProvider, details []providerDetail) *migrate.PlacementState {
	st := &migrate.PlacementState{Providers: map[string]*migrate.PProvider{}, ByName: map[string]string{}}
	for i, rp := range rps {
		d := details[i]
		p := &migrate.PProvider{ID: int64(i + 1), UUID: rp.UUID, Name: rp.Name, Generation: rp.Generation, RootUUID: rp.RootProviderUUID,
			Inventories: map[string]inventory.Inventory{}, Traits: map[string]bool{}, Aggregates: map[string]bool{}, Used: map[string]bool{}}
		if rp.ParentProviderUUID != nil {
			p.ParentUUID = *rp.ParentProviderUUID
		}
		for rc, inv := range d.inv.Inventories {
			p.Inventories[rc] = inventory.Inventory(inv)
		}
		for _, t := range d.traits {
			p.Traits[t] = true
		}
		for _, a := range d.aggs {
			p.Aggregates[a] = true
		}
		for rc, used := range d.usages.Usages {
			if used != 0 {
				p.Used[rc] = true
			}
		}
		st.Providers[p.UUID] = p
		if p.Name != "" {
			st.ByName[p.Name] = p.UUID
		}
	}
	return st
}

// EnsurePlacementNames creates the custom resource classes (PUT
// /resource_classes/{name}) and custom traits (PUT /traits/{name}) that
// this store has not made sure of yet. Standard classes and traits are
// Placement's own (its db sync writes them; PUT refuses them); aggregates
// come into being with the first PUT naming them. The ids are not
// Placement's (the API shows none): the migration only asks which names
// exist.
func (s *MigratePlacement) EnsurePlacementNames(ctx context.Context, classes, traits, aggregates []string) (*migrate.PlacementIDs, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.known.Classes == nil {
		s.known = migrate.PlacementIDs{Classes: map[string]int64{}, Traits: map[string]int64{}, Aggregates: map[string]int64{}}
	}
	for _, c := range classes {
		if _, ok := s.known.Classes[c]; ok {
			continue
		}
		if strings.HasPrefix(c, "CUSTOM_") {
			if _, err := s.C.EnsureResourceClass(ctx, c); err != nil {
				return nil, fmt.Errorf("create resource class %s: %w", c, err)
			}
		}
		s.known.Classes[c] = 0
	}
	for _, t := range traits {
		if _, ok := s.known.Traits[t]; ok {
			continue
		}
		if strings.HasPrefix(t, "CUSTOM_") {
			if _, err := s.C.EnsureTrait(ctx, t); err != nil {
				return nil, fmt.Errorf("create trait %s: %w", t, err)
			}
		}
		s.known.Traits[t] = 0
	}
	for _, a := range aggregates {
		s.known.Aggregates[a] = 0
	}
	return &migrate.PlacementIDs{Classes: maps.Clone(s.known.Classes), Traits: maps.Clone(s.known.Traits), Aggregates: maps.Clone(s.known.Aggregates)}, nil
}

// SingleWriter is false: placement-api takes writers side by side.
func (s *MigratePlacement) SingleWriter() bool { return false }

// WriteNodes writes each node in turn (the migration's workers call it
// side by side); errs[i] is node i's.
func (s *MigratePlacement) WriteNodes(ctx context.Context, _ *migrate.PlacementIDs, nodes []migrate.NodeWrite) []error {
	errs := make([]error, len(nodes))
	for i := range nodes {
		if ctx.Err() != nil {
			errs[i] = ctx.Err()
			continue
		}
		errs[i] = s.writeNode(ctx, &nodes[i])
	}
	return errs
}

// writeNode writes one node's providers, parents first, and deletes the
// providers the node no longer has last, as the database path does.
func (s *MigratePlacement) writeNode(ctx context.Context, n *migrate.NodeWrite) error {
	if len(n.Moves) > 0 {
		// migrate plans no moves for a store that is no AllocationReader;
		// refused here too rather than dropped.
		return fmt.Errorf("%w: moving allocations for a layout switch needs Placement's database: %s", migrate.ErrLayoutSwitch, NeedsDatabase)
	}
	var created []string
	var applied []string // what was applied to existing providers, for the message
	fail := func(err error) error {
		err = migrateErr(err)
		if undo := s.undoCreated(ctx, created); undo != nil {
			return fmt.Errorf("%w (and the providers this write created could not all be deleted again: %v)", err, undo)
		}
		if len(applied) > 0 {
			return fmt.Errorf("%w (already applied through the API, not undone: %s; a re-run completes the node)", err, strings.Join(applied, ", "))
		}
		return err
	}
	for i := range n.Providers {
		p := &n.Providers[i]
		if p.Delete {
			continue
		}
		if err := s.writeProvider(ctx, p, &created, &applied); err != nil {
			return fail(err)
		}
	}
	for i := range n.Providers {
		p := &n.Providers[i]
		if !p.Delete {
			continue
		}
		if err := s.deleteProvider(ctx, p); err != nil {
			return fail(err)
		}
		applied = append(applied, "deleted provider "+p.UUID)
	}
	return nil
}

// writeProvider creates the provider when new, then PUTs its inventories,
// traits and aggregates where they change, each at the generation the
// previous step left. For an existing provider each PUT replaces the whole
// set, so the set is read first (GET, at the expected generation): the
// classes, traits and aggregates the plan does not manage are kept.
func (s *MigratePlacement) writeProvider(ctx context.Context, p *migrate.ProviderWrite, created, applied *[]string) error {
	gen := p.ExpectGeneration
	if p.Create {
		rp, err := s.C.CreateProvider(ctx, NewProvider{Name: p.Name, UUID: p.UUID, ParentProviderUUID: p.ParentUUID})
		if err != nil {
			return fmt.Errorf("create resource provider %s (%s): %w", p.UUID, p.Name, err)
		}
		*created = append(*created, p.UUID)
		gen = rp.Generation
	}
	conflict := func(what string, got int64) error {
		return fmt.Errorf("%w: provider %s %s at generation %d, not %d", migrate.ErrGenerationConflict, p.UUID, what, got, gen)
	}
	done := func(what string) {
		if !p.Create {
			*applied = append(*applied, what+" of "+p.UUID)
		}
	}
	if len(p.AddInventories)+len(p.UpdateInventories)+len(p.DeleteInventories) > 0 {
		want := map[string]Inventory{}
		if !p.Create {
			cur, err := s.C.GetInventories(ctx, p.UUID)
			if err != nil {
				return fmt.Errorf("read inventories of %s: %w", p.UUID, err)
			}
			if cur.Generation != gen {
				return conflict("inventories read", cur.Generation)
			}
			maps.Copy(want, cur.Inventories)
		}
		for rc, v := range p.AddInventories {
			want[rc] = Inventory(v)
		}
		for rc, v := range p.UpdateInventories {
			want[rc] = Inventory(v)
		}
		for _, rc := range p.DeleteInventories {
			delete(want, rc)
		}
		out, err := s.C.SetInventories(ctx, p.UUID, gen, want)
		if err != nil {
			return fmt.Errorf("set inventories of %s (%s): %w", p.UUID, p.Name, err)
		}
		gen = out.Generation
		done("inventories")
	}
	if len(p.AddTraits)+len(p.RemoveTraits) > 0 {
		var cur []string
		if !p.Create {
			t, err := s.C.GetProviderTraits(ctx, p.UUID)
			if err != nil {
				return fmt.Errorf("read traits of %s: %w", p.UUID, err)
			}
			if t.Generation != gen {
				return conflict("traits read", t.Generation)
			}
			cur = t.Traits
		}
		out, err := s.C.SetProviderTraits(ctx, p.UUID, gen, withChanges(cur, p.AddTraits, p.RemoveTraits))
		if err != nil {
			return fmt.Errorf("set traits of %s (%s): %w", p.UUID, p.Name, err)
		}
		gen = out.Generation
		done("traits")
	}
	if len(p.AddAggregates)+len(p.RemoveAggregates) > 0 {
		if err := s.C.need(19, "a generation-checked aggregate update"); err != nil {
			return err
		}
		var cur []string
		if !p.Create {
			a, err := s.C.GetProviderAggregates(ctx, p.UUID)
			if err != nil {
				return fmt.Errorf("read aggregates of %s: %w", p.UUID, err)
			}
			if a.Generation != gen {
				return conflict("aggregates read", a.Generation)
			}
			cur = a.Aggregates
		}
		out, err := s.C.SetProviderAggregates(ctx, p.UUID, gen, withChanges(cur, p.AddAggregates, p.RemoveAggregates))
		if err != nil {
			return fmt.Errorf("set aggregates of %s (%s): %w", p.UUID, p.Name, err)
		}
		gen = out.Generation
		done("aggregates")
	}
	return nil
}

// withChanges is cur with add and without remove, sorted.
func withChanges(cur, add, remove []string) []string {
	set := map[string]bool{}
	for _, v := range cur {
		set[v] = true
	}
	for _, v := range add {
		set[v] = true
	}
	for _, v := range remove {
		delete(set, v)
	}
	return slices.Sorted(maps.Keys(set))
}

// deleteProvider removes a provider the node no longer has (a PCI device
// gone). DELETE carries no generation, so the provider is read first and
// must still be at the planned one; Placement itself refuses while it has
// allocations or children (409).
func (s *MigratePlacement) deleteProvider(ctx context.Context, p *migrate.ProviderWrite) error {
	rp, err := s.C.GetProvider(ctx, p.UUID)
	if errors.Is(err, ErrNotFound) {
		return nil // gone already: what the plan wanted
	}
	if err != nil {
		return fmt.Errorf("read resource provider %s: %w", p.UUID, err)
	}
	if rp.Generation != p.ExpectGeneration {
		return fmt.Errorf("%w: provider %s is no longer at generation %d", migrate.ErrGenerationConflict, p.UUID, p.ExpectGeneration)
	}
	if err := s.C.DeleteProvider(ctx, p.UUID); err != nil {
		var pe *Error
		if errors.As(err, &pe) && pe.Status == http.StatusConflict {
			return fmt.Errorf("%w: cannot delete provider %s: %v", migrate.ErrInventoryInUse, p.UUID, err)
		}
		return fmt.Errorf("delete resource provider %s: %w", p.UUID, err)
	}
	return nil
}

// undoCreated deletes the providers a failed node write created, children
// first.
func (s *MigratePlacement) undoCreated(ctx context.Context, created []string) error {
	var errs []error
	for i := len(created) - 1; i >= 0; i-- {
		if err := s.C.DeleteProvider(context.WithoutCancel(ctx), created[i]); err != nil && !errors.Is(err, ErrNotFound) {
			errs = append(errs, fmt.Errorf("%s: %w", created[i], err))
		}
	}
	return errors.Join(errs...)
}

// migrateErr gives a Placement answer the migration's meaning: what only
// concerns the node (a conflict to re-plan, a name or uuid taken, a value
// refused) is row-level, the rest (the API unreachable, a server error)
// stops the run.
func migrateErr(err error) error {
	var pe *Error
	if !errors.As(err, &pe) {
		return err
	}
	switch {
	case errors.Is(err, migrate.ErrGenerationConflict), errors.Is(err, migrate.ErrDuplicate),
		errors.Is(err, migrate.ErrBadValue), errors.Is(err, migrate.ErrInventoryInUse):
		return err
	case errors.Is(pe, ErrInventoryInUse):
		return fmt.Errorf("%w: %v", migrate.ErrInventoryInUse, err)
	case errors.Is(pe, ErrGenerationConflict):
		return fmt.Errorf("%w: %v", migrate.ErrGenerationConflict, err)
	case pe.Status == http.StatusNotFound:
		// A provider the plan read is gone (or a parent): re-read.
		return fmt.Errorf("%w: %v", migrate.ErrGenerationConflict, err)
	case pe.Status == http.StatusConflict:
		// POST /resource_providers: the name or uuid is taken
		// (placement.duplicate_name, or a uuid another writer created).
		return fmt.Errorf("%w: %v", migrate.ErrDuplicate, err)
	case pe.Status == http.StatusBadRequest:
		return fmt.Errorf("%w: %v", migrate.ErrBadValue, err)
	}
	return err
}
