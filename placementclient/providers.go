package placementclient

import (
	"context"
	"net/http"
	"net/url"
)

// ResourceProvider is Placement's resource provider as GET shows it.
type ResourceProvider struct {
	UUID               string  `json:"uuid"`
	Name               string  `json:"name"`
	Generation         int64   `json:"generation"`
	ParentProviderUUID *string `json:"parent_provider_uuid,omitempty"`
	RootProviderUUID   string  `json:"root_provider_uuid,omitempty"`
}

// ProviderFilter is GET /resource_providers' query. Each field is sent as
// given, so Placement validates it (with its own 400 message).
type ProviderFilter struct {
	Name string
	UUID string
	// MemberOf values are "UUID", "in:U1,U2" or "!..." forms; repeated
	// (ANDed) from 1.24.
	MemberOf []string
	InTree   string
	// Resources is "VCPU:2,MEMORY_MB:512".
	Resources string
	// Required values are trait expressions ("T,!U", "in:A,B"); repeated
	// from 1.39.
	Required []string
}

func (f ProviderFilter) query(c *Client) (url.Values, error) {
	q := url.Values{}
	set := func(k, v string) {
		if v != "" {
			q.Set(k, v)
		}
	}
	set("name", f.Name)
	set("uuid", f.UUID)
	if len(f.MemberOf) > 0 {
		if err := c.need(3, "member_of"); err != nil {
			return nil, err
		}
		q["member_of"] = f.MemberOf
	}
	if f.Resources != "" {
		if err := c.need(4, "resources"); err != nil {
			return nil, err
		}
		set("resources", f.Resources)
	}
	if f.InTree != "" {
		if err := c.need(14, "in_tree"); err != nil {
			return nil, err
		}
		set("in_tree", f.InTree)
	}
	if len(f.Required) > 0 {
		if err := c.need(18, "required"); err != nil {
			return nil, err
		}
		q["required"] = f.Required
	}
	return q, nil
}

// ListProviders is GET /resource_providers.
func (c *Client) ListProviders(ctx context.Context, f ProviderFilter) ([]ResourceProvider, error) {
	q, err := f.query(c)
	if err != nil {
		return nil, err
	}
	var out struct {
		Providers []ResourceProvider `json:"resource_providers"`
	}
	err = c.do(ctx, http.MethodGet, "/resource_providers", q, nil, &out)
	return out.Providers, err
}

// GetProvider is GET /resource_providers/{uuid}.
func (c *Client) GetProvider(ctx context.Context, uuid string) (*ResourceProvider, error) {
	var rp ResourceProvider
	if err := c.do(ctx, http.MethodGet, "/resource_providers/"+escape(uuid), nil, nil, &rp); err != nil {
		return nil, err
	}
	return &rp, nil
}

// NewProvider is the body of POST /resource_providers. An empty UUID lets
// Placement choose one.
type NewProvider struct {
	Name               string `json:"name"`
	UUID               string `json:"uuid,omitempty"`
	ParentProviderUUID string `json:"parent_provider_uuid,omitempty"`
}

// CreateProvider is POST /resource_providers. From 1.20 Placement answers
// with the provider; before, it is read back from the Location header's
// uuid.
func (c *Client) CreateProvider(ctx context.Context, p NewProvider) (*ResourceProvider, error) {
	if p.ParentProviderUUID != "" {
		if err := c.need(14, "a parent provider"); err != nil {
			return nil, err
		}
	}
	if !c.mv.AtLeast(20) {
		if p.UUID == "" {
			p.UUID = newUUID()
		}
		if err := c.do(ctx, http.MethodPost, "/resource_providers", nil, p, nil); err != nil {
			return nil, err
		}
		return c.GetProvider(ctx, p.UUID)
	}
	var rp ResourceProvider
	if err := c.do(ctx, http.MethodPost, "/resource_providers", nil, p, &rp); err != nil {
		return nil, err
	}
	return &rp, nil
}

// UpdateProvider is PUT /resource_providers/{uuid}: a new name and, from
// 1.14, parent (nil keeps none; Placement refuses to change an existing
// parent before 1.37).
func (c *Client) UpdateProvider(ctx context.Context, uuid, name string, parent *string) (*ResourceProvider, error) {
	body := map[string]any{"name": name}
	if parent != nil {
		if err := c.need(14, "a parent provider"); err != nil {
			return nil, err
		}
		if *parent == "" {
			// Un-parenting (1.37): null.
			body["parent_provider_uuid"] = nil
		} else {
			body["parent_provider_uuid"] = *parent
		}
	}
	var rp ResourceProvider
	if err := c.do(ctx, http.MethodPut, "/resource_providers/"+escape(uuid), nil, body, &rp); err != nil {
		return nil, err
	}
	return &rp, nil
}

// DeleteProvider is DELETE /resource_providers/{uuid}.
func (c *Client) DeleteProvider(ctx context.Context, uuid string) error {
	return c.do(ctx, http.MethodDelete, "/resource_providers/"+escape(uuid), nil, nil, nil)
}
