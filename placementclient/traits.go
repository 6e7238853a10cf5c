package placementclient

import (
	"context"
	"net/http"
	"net/url"

	"github.com/google/uuid"
)

// ListTraits is GET /traits (1.6). name is Placement's filter
// ("startswith:CUSTOM_", "in:A,B") or empty; associated filters to traits
// some provider has (true), has not (false), or not at all (nil).
func (c *Client) ListTraits(ctx context.Context, name string, associated *bool) ([]string, error) {
	if err := c.need(6, "traits"); err != nil {
		return nil, err
	}
	q := url.Values{}
	if name != "" {
		q.Set("name", name)
	}
	if associated != nil {
		if *associated {
			q.Set("associated", "true")
		} else {
			q.Set("associated", "false")
		}
	}
	var out struct {
		Traits []string `json:"traits"`
	}
	err := c.do(ctx, http.MethodGet, "/traits", q, nil, &out)
	return out.Traits, err
}

// CreateTrait is PUT /traits/{name}; only CUSTOM_ names are accepted, and an
// existing trait is left as it is.
func (c *Client) CreateTrait(ctx context.Context, name string) error {
	_, err := c.EnsureTrait(ctx, name)
	return err
}

// EnsureTrait is CreateTrait that also says whether the trait was new
// (Placement's 201) or already there (204).
func (c *Client) EnsureTrait(ctx context.Context, name string) (bool, error) {
	if err := c.need(6, "traits"); err != nil {
		return false, err
	}
	status, _, err := c.doRaw(ctx, http.MethodPut, "/traits/"+escape(name), "", nil, nil)
	return status == http.StatusCreated, err
}

// DeleteTrait is DELETE /traits/{name}: 409 while a provider has it, 400
// for a standard trait.
func (c *Client) DeleteTrait(ctx context.Context, name string) error {
	if err := c.need(6, "traits"); err != nil {
		return err
	}
	return c.do(ctx, http.MethodDelete, "/traits/"+escape(name), nil, nil, nil)
}

// ProviderTraits is a provider's traits at a generation.
type ProviderTraits struct {
	Traits     []string `json:"traits"`
	Generation int64    `json:"resource_provider_generation"`
}

func traitsPath(uuid string) string { return "/resource_providers/" + escape(uuid) + "/traits" }

// GetProviderTraits is GET /resource_providers/{uuid}/traits.
func (c *Client) GetProviderTraits(ctx context.Context, uuid string) (*ProviderTraits, error) {
	if err := c.need(6, "traits"); err != nil {
		return nil, err
	}
	var out ProviderTraits
	if err := c.do(ctx, http.MethodGet, traitsPath(uuid), nil, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// SetProviderTraits is PUT /resource_providers/{uuid}/traits: exactly these
// traits, if the provider is still at generation.
func (c *Client) SetProviderTraits(ctx context.Context, uuid string, generation int64, traits []string) (*ProviderTraits, error) {
	if err := c.need(6, "traits"); err != nil {
		return nil, err
	}
	if traits == nil {
		traits = []string{}
	}
	var out ProviderTraits
	in := ProviderTraits{Traits: traits, Generation: generation}
	if err := c.do(ctx, http.MethodPut, traitsPath(uuid), nil, in, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// DeleteProviderTraits is DELETE /resource_providers/{uuid}/traits.
func (c *Client) DeleteProviderTraits(ctx context.Context, uuid string) error {
	if err := c.need(6, "traits"); err != nil {
		return err
	}
	return c.do(ctx, http.MethodDelete, traitsPath(uuid), nil, nil, nil)
}

// ListResourceClasses is GET /resource_classes: every class's name.
func (c *Client) ListResourceClasses(ctx context.Context) ([]string, error) {
	if err := c.need(2, "resource classes"); err != nil {
		return nil, err
	}
	var out struct {
		Classes []struct {
			Name string `json:"name"`
		} `json:"resource_classes"`
	}
	if err := c.do(ctx, http.MethodGet, "/resource_classes", nil, nil, &out); err != nil {
		return nil, err
	}
	names := make([]string, len(out.Classes))
	for i, rc := range out.Classes {
		names[i] = rc.Name
	}
	return names, nil
}

// GetResourceClass is GET /resource_classes/{name}: nil error if it exists.
func (c *Client) GetResourceClass(ctx context.Context, name string) error {
	if err := c.need(2, "resource classes"); err != nil {
		return err
	}
	return c.do(ctx, http.MethodGet, "/resource_classes/"+escape(name), nil, nil, nil)
}

// CreateResourceClass creates a CUSTOM_ class: PUT /resource_classes/{name}
// from 1.7 (an existing class is fine), POST before (409 if it exists).
func (c *Client) CreateResourceClass(ctx context.Context, name string) error {
	_, err := c.EnsureResourceClass(ctx, name)
	return err
}

// EnsureResourceClass is CreateResourceClass that also says whether the
// class was new (201) or already there (204, from 1.7).
func (c *Client) EnsureResourceClass(ctx context.Context, name string) (bool, error) {
	if err := c.need(2, "resource classes"); err != nil {
		return false, err
	}
	if c.mv.AtLeast(7) {
		status, _, err := c.doRaw(ctx, http.MethodPut, "/resource_classes/"+escape(name), "", nil, nil)
		return status == http.StatusCreated, err
	}
	err := c.do(ctx, http.MethodPost, "/resource_classes", nil, map[string]string{"name": name}, nil)
	return err == nil, err
}

// DeleteResourceClass is DELETE /resource_classes/{name}: 409 while an
// inventory uses it, 400 for a standard class.
func (c *Client) DeleteResourceClass(ctx context.Context, name string) error {
	if err := c.need(2, "resource classes"); err != nil {
		return err
	}
	return c.do(ctx, http.MethodDelete, "/resource_classes/"+escape(name), nil, nil, nil)
}

// ProviderAggregates is a provider's aggregate UUIDs at a generation.
type ProviderAggregates struct {
	Aggregates []string `json:"aggregates"`
	Generation int64    `json:"resource_provider_generation"`
}

func aggPath(uuid string) string { return "/resource_providers/" + escape(uuid) + "/aggregates" }

// GetProviderAggregates is GET /resource_providers/{uuid}/aggregates (from
// 1.1; Generation is 0 below 1.19, which shows none, and then no edit can
// be written: SetProviderAggregates needs 1.19).
func (c *Client) GetProviderAggregates(ctx context.Context, uuid string) (*ProviderAggregates, error) {
	if err := c.need(1, "provider aggregates"); err != nil {
		return nil, err
	}
	var out ProviderAggregates
	if err := c.do(ctx, http.MethodGet, aggPath(uuid), nil, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// SetProviderAggregates is PUT /resource_providers/{uuid}/aggregates (1.19):
// exactly these aggregates, if the provider is still at generation.
func (c *Client) SetProviderAggregates(ctx context.Context, uuid string, generation int64, aggs []string) (*ProviderAggregates, error) {
	if err := c.need(19, "provider aggregates with a generation"); err != nil {
		return nil, err
	}
	if aggs == nil {
		aggs = []string{}
	}
	var out ProviderAggregates
	in := ProviderAggregates{Aggregates: aggs, Generation: generation}
	if err := c.do(ctx, http.MethodPut, aggPath(uuid), nil, in, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

func newUUID() string { return uuid.NewString() }
