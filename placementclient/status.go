package placementclient

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"

	"github.com/rpctl/rpctl/migrate"
	"github.com/rpctl/rpctl/status"
)

// StatusPlacement is the Placement API as the upgrade checks read it
// (status.Placement), for a controller whose config files give nova.conf's
// [placement] credentials and no Placement database. Every provider's
// inventories, usages, traits and aggregates are read once, provider by
// provider (as nova-status and nova-compute read them: the API has no bulk
// read), and shared by the checks; allocations are read per provider when
// a check needs consumers.
type StatusPlacement struct {
	C *Client
	// Workers is how many providers are read at once (0: 8).
	Workers int

	once sync.Once
	snap *statusSnapshot
	err  error

	allocOnce sync.Once
	allocs    []*ProviderAllocationsList // by snapshot index
	allocErr  error
}

var _ status.Placement = (*StatusPlacement)(nil)

// ErrAPIHidesRows is why placement-status's two checks cannot be run
// through the API: placement-api 8.0.0 lists providers with an inner join
// on their root (one without root_provider_id is not listed, and GET
// /resource_providers/{uuid} answers 404 for it) and allocations with an
// inner join on consumers (an allocation without its consumers row is in
// the provider's usages but in no allocation list). Measured on the real
// placement-api (TestStatusThroughPlacementAPI).
var ErrAPIHidesRows = errors.New("the Placement API does not show the rows this check counts")

type statusSnapshot struct {
	providers []ResourceProvider
	details   []providerDetail
}

func (s *StatusPlacement) where(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("the Placement API (%s): %w", s.C.Endpoint(), err)
}

func (s *StatusPlacement) load(ctx context.Context) (*statusSnapshot, error) {
	s.once.Do(func() {
		rps, err := s.C.ListProviders(ctx, ProviderFilter{})
		if err != nil {
			s.err = s.where(err)
			return
		}
		snap := &statusSnapshot{providers: rps, details: make([]providerDetail, len(rps))}
		workers := s.Workers
		if workers <= 0 {
			workers = 8
		}
		if err := parallel(ctx, workers, len(rps), func(i int) error {
			d, err := s.C.providerDetail(ctx, rps[i].UUID)
			snap.details[i] = d
			return err
		}); err != nil {
			s.err = s.where(err)
			return
		}
		s.snap = snap
	})
	return s.snap, s.err
}

func (s *StatusPlacement) loadAllocations(ctx context.Context) ([]*ProviderAllocationsList, error) {
	snap, err := s.load(ctx)
	if err != nil {
		return nil, err
	}
	s.allocOnce.Do(func() {
		s.allocs = make([]*ProviderAllocationsList, len(snap.providers))
		workers := s.Workers
		if workers <= 0 {
			workers = 8
		}
		s.allocErr = s.where(parallel(ctx, workers, len(snap.providers), func(i int) error {
			a, err := s.C.GetProviderAllocations(ctx, snap.providers[i].UUID)
			s.allocs[i] = a
			return err
		}))
	})
	return s.allocs, s.allocErr
}

// LoadPlacementState implements status.Placement (the Compute Node
// Inventories check): providers with their inventories, traits,
// aggregates and the classes they have usage of.
func (s *StatusPlacement) LoadPlacementState(ctx context.Context) (*migrate.PlacementState, error) {
	snap, err := s.load(ctx)
	if err != nil {
		return nil, err
	}
	return placementState(snap.providers, snap.details), nil
}

// ListProviderTotals implements status.Placement.
func (s *StatusPlacement) ListProviderTotals(ctx context.Context) ([]status.ProviderTotals, error) {
	snap, err := s.load(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]status.ProviderTotals, 0, len(snap.providers))
	for i, rp := range snap.providers {
		d := snap.details[i]
		t := status.ProviderTotals{UUID: rp.UUID, Name: rp.Name, Root: rp.ParentProviderUUID == nil, RootUUID: rp.RootProviderUUID,
			Sharing: slices.Contains(d.traits, "MISC_SHARES_VIA_AGGREGATE"), Aggregates: slices.Sorted(slices.Values(d.aggs))}
		if rp.ParentProviderUUID != nil {
			t.ParentUUID = *rp.ParentProviderUUID
		}
		total := func(rc string) *int64 {
			if inv, ok := d.inv.Inventories[rc]; ok {
				v := inv.Total
				return &v
			}
			return nil
		}
		t.VCPU, t.Memory, t.Disk = total("VCPU"), total("MEMORY_MB"), total("DISK_GB")
		out = append(out, t)
	}
	return out, nil
}

// usages is every inventory of the providers keep selects, with its usage,
// ordered as the database store orders them (name, uuid, class).
func (s *StatusPlacement) usages(ctx context.Context, keep func(uuid string) bool) ([]status.Overuse, error) {
	snap, err := s.load(ctx)
	if err != nil {
		return nil, err
	}
	var out []status.Overuse
	for i, rp := range snap.providers {
		if !keep(rp.UUID) {
			continue
		}
		d := snap.details[i]
		for rc, inv := range d.inv.Inventories {
			out = append(out, status.Overuse{UUID: rp.UUID, Name: rp.Name, Class: rc, Total: inv.Total, Reserved: inv.Reserved,
				AllocationRatio: inv.AllocationRatio, Used: d.usages.Usages[rc]})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		if a.UUID != b.UUID {
			return a.UUID < b.UUID
		}
		return a.Class < b.Class
	})
	return out, nil
}

// ListOverusedInventories implements status.Placement: the inventories
// whose usage exceeds (total - reserved) * allocation_ratio. A provider's
// usages count every allocation, as the database store's sum does.
func (s *StatusPlacement) ListOverusedInventories(ctx context.Context) ([]status.Overuse, error) {
	all, err := s.usages(ctx, func(string) bool { return true })
	if err != nil {
		return nil, err
	}
	var out []status.Overuse
	for _, o := range all {
		if o.Used > 0 && float64(o.Used) > o.Capacity() {
			out = append(out, o)
		}
	}
	return out, nil
}

// InventoryUsages implements status.Placement.
func (s *StatusPlacement) InventoryUsages(ctx context.Context, uuids []string) ([]status.Overuse, error) {
	want := make(map[string]bool, len(uuids))
	for _, u := range uuids {
		want[u] = true
	}
	return s.usages(ctx, func(u string) bool { return want[u] })
}

// MissingRootProviderIDs implements status.Placement: the API cannot tell
// (ErrAPIHidesRows); placement-status reads the database.
func (s *StatusPlacement) MissingRootProviderIDs(context.Context) (bool, error) {
	return false, fmt.Errorf("%w (it lists no provider without root_provider_id): this placement-status check reads Placement's database: give placement.conf with [placement_database] connection, or --placement-db", ErrAPIHidesRows)
}

// IncompleteConsumers implements status.Placement: the API cannot tell
// (ErrAPIHidesRows); placement-status reads the database.
func (s *StatusPlacement) IncompleteConsumers(context.Context) (int, error) {
	return 0, fmt.Errorf("%w (it lists no allocation without a consumers row): this placement-status check reads Placement's database: give placement.conf with [placement_database] connection, or --placement-db", ErrAPIHidesRows)
}

// ConsumersWithAllocations implements status.Placement: the consumers of
// every provider's allocations (the API lists only those with a consumers
// row, as the database store's join does).
func (s *StatusPlacement) ConsumersWithAllocations(ctx context.Context) (map[string]bool, error) {
	lists, err := s.loadAllocations(ctx)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, l := range lists {
		for c := range l.Allocations {
			out[c] = true
		}
	}
	return out, nil
}

// ProviderConsumers implements status.Placement. The API shows no
// allocation ids, so "most recent first" is approximated by the reverse of
// placement-api's list (_get_allocations_by_provider_id has no ORDER BY):
// the consumers named first in a message may differ from the database
// store's; the set and the amounts do not.
func (s *StatusPlacement) ProviderConsumers(ctx context.Context, providerUUID, class string) ([]status.ConsumerUse, error) {
	l, err := s.C.GetProviderAllocations(ctx, providerUUID)
	if err != nil {
		return nil, s.where(err)
	}
	var out []status.ConsumerUse
	for i := len(l.Consumers) - 1; i >= 0; i-- {
		c := l.Consumers[i]
		if used := l.Allocations[c].Resources[class]; used > 0 {
			out = append(out, status.ConsumerUse{Consumer: c, Used: used})
		}
	}
	return out, nil
}
