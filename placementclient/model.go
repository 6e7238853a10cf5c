package placementclient

import (
	"context"
	"slices"

	"github.com/rpctl/rpctl/candidates"
)

// LoadModelInput reads what the built-in Placement core needs (providers,
// inventories, usages, traits, aggregates) through the API, for when only
// the API is reachable. Placement's internal ids are not exposed, so ids are
// given in the order GET /resource_providers lists providers (the database's
// id order) and GET /resource_classes lists classes.
func (c *Client) LoadModelInput(ctx context.Context, workers int) (*candidates.ModelInput, error) {
	rps, err := c.ListProviders(ctx, ProviderFilter{})
	if err != nil {
		return nil, err
	}
	classes, err := c.ListResourceClasses(ctx)
	if err != nil {
		return nil, err
	}
	in := &candidates.ModelInput{}
	classID := map[string]int64{}
	for i, name := range candidates.StandardResourceClasses() {
		classID[name] = int64(i)
	}
	for _, name := range classes {
		if _, std := classID[name]; !std {
			classID[name] = int64(10000 + len(in.ResourceClasses))
			in.ResourceClasses = append(in.ResourceClasses, candidates.NamedRow{ID: classID[name], Name: name})
		}
	}
	ids := make(map[string]int64, len(rps))
	for i, rp := range rps {
		ids[rp.UUID] = int64(i + 1)
	}
	details := make([]providerDetail, len(rps))
	if err := parallel(ctx, workers, len(rps), func(i int) error {
		d, err := c.providerDetail(ctx, rps[i].UUID)
		details[i] = d
		return err
	}); err != nil {
		return nil, err
	}
	traitID, aggID := map[string]int64{}, map[string]int64{}
	named := func(m map[string]int64, rows *[]candidates.NamedRow, name string) int64 {
		id, ok := m[name]
		if !ok {
			id = int64(len(m) + 1)
			m[name] = id
			*rows = append(*rows, candidates.NamedRow{ID: id, Name: name})
		}
		return id
	}
	// Every trait Placement knows, as the database path reads its traits
	// table: a request naming a trait no provider has (Nova's forbidden
	// COMPUTE_STATUS_DISABLED) is then valid, not Placement's 400 "No such
	// trait(s)" that made every flavor fit nowhere.
	allTraits, err := c.ListTraits(ctx, "", nil)
	if err != nil {
		return nil, err
	}
	for _, t := range allTraits {
		named(traitID, &in.Traits, t)
	}
	for i, rp := range rps {
		row := candidates.ProviderRow{ID: ids[rp.UUID], UUID: rp.UUID, Name: rp.Name, Generation: rp.Generation}
		if rp.ParentProviderUUID != nil {
			row.ParentID = ids[*rp.ParentProviderUUID]
		}
		in.Providers = append(in.Providers, row)
		d := details[i]
		for _, class := range sortedKeys(d.inv.Inventories) {
			v := d.inv.Inventories[class]
			in.Inventories = append(in.Inventories, candidates.InventoryRow{ProviderID: row.ID, ResourceClassID: classID[class],
				Total: v.Total, Reserved: v.Reserved, MinUnit: v.MinUnit, MaxUnit: v.MaxUnit, StepSize: v.StepSize, AllocationRatio: v.AllocationRatio})
		}
		for _, class := range sortedKeys(d.usages.Usages) {
			if used := d.usages.Usages[class]; used != 0 {
				in.Usages = append(in.Usages, candidates.UsageRow{ProviderID: row.ID, ResourceClassID: classID[class], Used: used})
			}
		}
		for _, t := range d.traits {
			in.ProviderTraits = append(in.ProviderTraits, candidates.LinkRow{ProviderID: row.ID, OtherID: named(traitID, &in.Traits, t)})
		}
		for _, a := range d.aggs {
			in.ProviderAggregates = append(in.ProviderAggregates, candidates.LinkRow{ProviderID: row.ID, OtherID: named(aggID, &in.Aggregates, a)})
		}
	}
	return in, nil
}

type providerDetail struct {
	inv    *Inventories
	usages *ProviderUsages
	traits []string
	aggs   []string
}

func (c *Client) providerDetail(ctx context.Context, uuid string) (providerDetail, error) {
	var d providerDetail
	var err error
	if d.inv, err = c.GetInventories(ctx, uuid); err != nil {
		return d, err
	}
	if d.usages, err = c.GetProviderUsages(ctx, uuid); err != nil {
		return d, err
	}
	t, err := c.GetProviderTraits(ctx, uuid)
	if err != nil {
		return d, err
	}
	a, err := c.GetProviderAggregates(ctx, uuid)
	if err != nil {
		return d, err
	}
	d.traits, d.aggs = t.Traits, a.Aggregates
	return d, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
