package placementclient

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/rpctl/rpctl/inventory"
)

// Store carries out inventory edits through the Placement API: each method
// is the one request inventory.Store names, sent once.
type Store struct{ C *Client }

var _ inventory.Store = Store{}

// storeErr turns a Placement answer into the inventory domain's kinds,
// keeping Placement's status, code and message.
func storeErr(err error) error {
	var pe *Error
	if !errors.As(err, &pe) {
		return err
	}
	kind := inventory.ErrConflict
	switch {
	case pe.Status == http.StatusNotFound:
		kind = inventory.ErrNotFound
	case pe.Status == http.StatusBadRequest:
		kind = inventory.ErrBadRequest
	case errors.Is(pe, inventory.ErrForbidden):
		return &inventory.Error{Kind: inventory.ErrForbidden, Status: pe.Status, Code: pe.Code, Message: pe.Error()}
	case pe.Status != http.StatusConflict:
		return err
	case errors.Is(pe, ErrInventoryInUse):
		kind = inventory.ErrInUse
	case errors.Is(pe, ErrGenerationConflict):
		kind = inventory.ErrGeneration
	case pe.Code == inventory.CodeProviderInUse || pe.Code == inventory.CodeCannotDeleteParent ||
		strings.Contains(pe.Message, " in use"):
		kind = inventory.ErrInUse
	}
	return &inventory.Error{Kind: kind, Status: pe.Status, Code: pe.Code, Message: pe.Message}
}

func provider(rp *ResourceProvider) inventory.Provider {
	p := inventory.Provider{UUID: rp.UUID, Name: rp.Name, Generation: rp.Generation, RootUUID: rp.RootProviderUUID}
	if rp.ParentProviderUUID != nil {
		p.ParentUUID = *rp.ParentProviderUUID
	}
	return p
}

// ListProviders is GET /resource_providers.
func (s Store) ListProviders(ctx context.Context, f inventory.ProviderFilter) ([]inventory.Provider, error) {
	rps, err := s.C.ListProviders(ctx, ProviderFilter{Name: f.Name, UUID: f.UUID, InTree: f.InTree, MemberOf: f.MemberOf, Resources: f.Resources, Required: f.Required})
	if err != nil {
		return nil, storeErr(err)
	}
	out := make([]inventory.Provider, len(rps))
	for i := range rps {
		out[i] = provider(&rps[i])
	}
	return out, nil
}

// GetProvider is GET /resource_providers/{uuid}.
func (s Store) GetProvider(ctx context.Context, uuid string) (inventory.Provider, error) {
	rp, err := s.C.GetProvider(ctx, uuid)
	if err != nil {
		return inventory.Provider{}, storeErr(err)
	}
	return provider(rp), nil
}

// CreateProvider is POST /resource_providers.
func (s Store) CreateProvider(ctx context.Context, spec inventory.ProviderSpec) (inventory.Provider, error) {
	rp, err := s.C.CreateProvider(ctx, NewProvider{Name: spec.Name, UUID: spec.UUID, ParentProviderUUID: spec.ParentUUID})
	if err != nil {
		return inventory.Provider{}, storeErr(err)
	}
	return provider(rp), nil
}

// ProjectUsages is GET /usages (1.9) at the client's microversion: from
// 1.38 Placement groups the answer by consumer type.
func (s Store) ProjectUsages(ctx context.Context, project, user string) ([]inventory.UsageGroup, error) {
	raw, err := s.C.ProjectUsages(ctx, project, user)
	if err != nil {
		return nil, storeErr(err)
	}
	if len(raw) == 0 || raw[0] != '{' {
		return nil, nil
	}
	if !s.C.Microversion().AtLeast(38) {
		u, err := classAmounts(raw, nil)
		if err != nil || len(u) == 0 {
			return nil, err
		}
		return []inventory.UsageGroup{{Usages: u}}, nil
	}
	var groups []inventory.UsageGroup
	_, err = objectKeys(raw, func(ct string, v json.RawMessage) error {
		g := inventory.UsageGroup{ConsumerType: ct}
		var err error
		g.Usages, err = classAmounts(v, &g.Consumers)
		groups = append(groups, g)
		return err
	})
	return groups, err
}

// classAmounts decodes {class: amount} in its order; count, when set,
// takes the consumer_count member 1.38's groups hold among the classes.
func classAmounts(obj json.RawMessage, count *int64) ([]inventory.ClassAmount, error) {
	var out []inventory.ClassAmount
	_, err := objectKeys(obj, func(k string, v json.RawMessage) error {
		var n int64
		if err := json.Unmarshal(v, &n); err != nil {
			return err
		}
		if count != nil && k == "consumer_count" {
			*count = n
			return nil
		}
		out = append(out, inventory.ClassAmount{Class: k, Amount: n})
		return nil
	})
	return out, err
}

// UpdateProvider is PUT /resource_providers/{uuid}.
func (s Store) UpdateProvider(ctx context.Context, uuid string, u inventory.ProviderUpdate) (inventory.Provider, error) {
	rp, err := s.C.UpdateProvider(ctx, uuid, u.Name, u.ParentUUID)
	if err != nil {
		return inventory.Provider{}, storeErr(err)
	}
	return provider(rp), nil
}

// DeleteProvider is DELETE /resource_providers/{uuid}.
func (s Store) DeleteProvider(ctx context.Context, uuid string) error {
	return storeErr(s.C.DeleteProvider(ctx, uuid))
}

func toDomain(in map[string]Inventory) map[string]inventory.Inventory {
	out := make(map[string]inventory.Inventory, len(in))
	for k, v := range in {
		out[k] = inventory.Inventory(v)
	}
	return out
}

// Inventories is GET /resource_providers/{uuid}/inventories.
func (s Store) Inventories(ctx context.Context, uuid string) (int64, map[string]inventory.Inventory, error) {
	inv, err := s.C.GetInventories(ctx, uuid)
	if err != nil {
		return 0, nil, storeErr(err)
	}
	return inv.Generation, toDomain(inv.Inventories), nil
}

// ListInventories is GET /resource_providers/{uuid}/inventories in the
// answer's order.
func (s Store) ListInventories(ctx context.Context, uuid string) (int64, []inventory.ClassInventory, error) {
	inv, err := s.C.GetInventories(ctx, uuid)
	if err != nil {
		return 0, nil, storeErr(err)
	}
	out := make([]inventory.ClassInventory, len(inv.Classes))
	for i, rc := range inv.Classes {
		out[i] = inventory.ClassInventory{Class: rc, Inventory: inventory.Inventory(inv.Inventories[rc])}
	}
	return inv.Generation, out, nil
}

// ReplaceInventories is PUT /resource_providers/{uuid}/inventories.
func (s Store) ReplaceInventories(ctx context.Context, uuid string, generation int64, inv map[string]inventory.Inventory) (int64, error) {
	in := make(map[string]Inventory, len(inv))
	for k, v := range inv {
		in[k] = Inventory(v)
	}
	out, err := s.C.SetInventories(ctx, uuid, generation, in)
	if err != nil {
		return 0, storeErr(err)
	}
	return out.Generation, nil
}

// Usages is GET /resource_providers/{uuid}/usages.
func (s Store) Usages(ctx context.Context, uuid string) (int64, map[string]int64, error) {
	u, err := s.C.GetProviderUsages(ctx, uuid)
	if err != nil {
		return 0, nil, storeErr(err)
	}
	return u.Generation, u.Usages, nil
}

// ProviderAllocations is GET /resource_providers/{uuid}/allocations, in
// the answer's order.
func (s Store) ProviderAllocations(ctx context.Context, uuid string) (int64, []inventory.ConsumerAllocations, error) {
	a, err := s.C.GetProviderAllocations(ctx, uuid)
	if err != nil {
		return 0, nil, storeErr(err)
	}
	out := make([]inventory.ConsumerAllocations, len(a.Consumers))
	for i, c := range a.Consumers {
		ca := a.Allocations[c]
		out[i] = inventory.ConsumerAllocations{Consumer: c, Generation: ca.ConsumerGeneration}
		for _, rc := range ca.Classes {
			out[i].Resources = append(out[i].Resources, inventory.ClassAmount{Class: rc, Amount: ca.Resources[rc]})
		}
	}
	return a.Generation, out, nil
}

// ListResourceClasses is GET /resource_classes.
func (s Store) ListResourceClasses(ctx context.Context) ([]string, error) {
	names, err := s.C.ListResourceClasses(ctx)
	return names, storeErr(err)
}

// CreateResourceClass is PUT /resource_classes/{name}.
func (s Store) CreateResourceClass(ctx context.Context, name string) (bool, error) {
	created, err := s.C.EnsureResourceClass(ctx, name)
	return created, storeErr(err)
}

// DeleteResourceClass is DELETE /resource_classes/{name}.
func (s Store) DeleteResourceClass(ctx context.Context, name string) error {
	return storeErr(s.C.DeleteResourceClass(ctx, name))
}

// ListTraits is GET /traits.
func (s Store) ListTraits(ctx context.Context, f inventory.TraitFilter) ([]string, error) {
	names, err := s.C.ListTraits(ctx, f.Name, f.Associated)
	return names, storeErr(err)
}

// CreateTrait is PUT /traits/{name}.
func (s Store) CreateTrait(ctx context.Context, name string) (bool, error) {
	created, err := s.C.EnsureTrait(ctx, name)
	return created, storeErr(err)
}

// DeleteTrait is DELETE /traits/{name}.
func (s Store) DeleteTrait(ctx context.Context, name string) error {
	return storeErr(s.C.DeleteTrait(ctx, name))
}

// ProviderTraits is GET /resource_providers/{uuid}/traits.
func (s Store) ProviderTraits(ctx context.Context, uuid string) (int64, []string, error) {
	t, err := s.C.GetProviderTraits(ctx, uuid)
	if err != nil {
		return 0, nil, storeErr(err)
	}
	return t.Generation, t.Traits, nil
}

// SetProviderTraits is PUT /resource_providers/{uuid}/traits.
func (s Store) SetProviderTraits(ctx context.Context, uuid string, generation int64, traits []string) (int64, error) {
	t, err := s.C.SetProviderTraits(ctx, uuid, generation, traits)
	if err != nil {
		return 0, storeErr(err)
	}
	return t.Generation, nil
}

// ProviderAggregates is GET /resource_providers/{uuid}/aggregates.
func (s Store) ProviderAggregates(ctx context.Context, uuid string) (int64, []string, error) {
	a, err := s.C.GetProviderAggregates(ctx, uuid)
	if err != nil {
		return 0, nil, storeErr(err)
	}
	return a.Generation, a.Aggregates, nil
}

// SetProviderAggregates is PUT /resource_providers/{uuid}/aggregates.
func (s Store) SetProviderAggregates(ctx context.Context, uuid string, generation int64, aggregates []string) (int64, error) {
	a, err := s.C.SetProviderAggregates(ctx, uuid, generation, aggregates)
	if err != nil {
		return 0, storeErr(err)
	}
	return a.Generation, nil
}
