package placementclient

import (
	"context"
	"encoding/json"
	"net/http"
)

// Inventory is one resource class's inventory record.
type Inventory struct {
	Total           int64   `json:"total"`
	Reserved        int64   `json:"reserved"`
	MinUnit         int64   `json:"min_unit"`
	MaxUnit         int64   `json:"max_unit"`
	StepSize        int64   `json:"step_size"`
	AllocationRatio float64 `json:"allocation_ratio"`
}

// Inventories is a provider's inventories with the generation they were
// read at.
type Inventories struct {
	Inventories map[string]Inventory `json:"inventories"`
	Generation  int64                `json:"resource_provider_generation"`
	// Classes are Inventories' classes in the answer's order.
	Classes []string `json:"-"`
}

// UnmarshalJSON keeps the answer's order of classes (osc lists them in
// it) beside the map: the map and the order come from one walk of the
// inventories object (objectKeys), not from decoding it twice.
func (inv *Inventories) UnmarshalJSON(b []byte) error {
	var raw struct {
		Inventories json.RawMessage `json:"inventories"`
		Generation  int64           `json:"resource_provider_generation"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*inv = Inventories{Generation: raw.Generation}
	switch {
	case len(raw.Inventories) == 0:
		return nil
	case raw.Inventories[0] != '{':
		// null, or not an object: encoding/json's own answer for the map.
		return json.Unmarshal(raw.Inventories, &inv.Inventories)
	}
	inv.Inventories = map[string]Inventory{}
	var err error
	inv.Classes, err = objectKeys(raw.Inventories, func(class string, v json.RawMessage) error {
		var one Inventory
		if err := json.Unmarshal(v, &one); err != nil {
			return err
		}
		inv.Inventories[class] = one
		return nil
	})
	return err
}

func invPath(uuid string) string { return "/resource_providers/" + escape(uuid) + "/inventories" }

// GetInventories is GET /resource_providers/{uuid}/inventories.
func (c *Client) GetInventories(ctx context.Context, uuid string) (*Inventories, error) {
	var out Inventories
	if err := c.do(ctx, http.MethodGet, invPath(uuid), nil, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// SetInventories is PUT /resource_providers/{uuid}/inventories: the classes
// given replace all others, if the provider is still at generation.
func (c *Client) SetInventories(ctx context.Context, uuid string, generation int64, inv map[string]Inventory) (*Inventories, error) {
	if inv == nil {
		inv = map[string]Inventory{}
	}
	in := Inventories{Inventories: inv, Generation: generation}
	var out Inventories
	if err := c.do(ctx, http.MethodPut, invPath(uuid), nil, in, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// DeleteInventories is DELETE /resource_providers/{uuid}/inventories (1.5):
// every class goes, unless one is in use.
func (c *Client) DeleteInventories(ctx context.Context, uuid string) error {
	if err := c.need(5, "deleting all inventories"); err != nil {
		return err
	}
	return c.do(ctx, http.MethodDelete, invPath(uuid), nil, nil, nil)
}

// InventoryAt is one class's inventory with the provider's generation.
type InventoryAt struct {
	Inventory
	Generation int64 `json:"resource_provider_generation"`
}

// GetInventory is GET /resource_providers/{uuid}/inventories/{class}.
func (c *Client) GetInventory(ctx context.Context, uuid, class string) (*InventoryAt, error) {
	var out InventoryAt
	if err := c.do(ctx, http.MethodGet, invPath(uuid)+"/"+escape(class), nil, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// SetInventory is PUT /resource_providers/{uuid}/inventories/{class}: it
// replaces one class the provider has (404 if it has none: Placement's PUT
// does not create) if the provider is still at generation.
func (c *Client) SetInventory(ctx context.Context, uuid, class string, generation int64, inv Inventory) (*InventoryAt, error) {
	in := InventoryAt{Inventory: inv, Generation: generation}
	var out InventoryAt
	if err := c.do(ctx, http.MethodPut, invPath(uuid)+"/"+escape(class), nil, in, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// CreateInventory is POST /resource_providers/{uuid}/inventories: one new
// class, checked against the generation Placement reads itself (409 if the
// class exists).
func (c *Client) CreateInventory(ctx context.Context, uuid, class string, inv Inventory) (*InventoryAt, error) {
	in := struct {
		Class string `json:"resource_class"`
		Inventory
	}{class, inv}
	var out InventoryAt
	if err := c.do(ctx, http.MethodPost, invPath(uuid), nil, in, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// DeleteInventory is DELETE /resource_providers/{uuid}/inventories/{class}.
// Placement takes no generation here; it checks its own read of it.
func (c *Client) DeleteInventory(ctx context.Context, uuid, class string) error {
	return c.do(ctx, http.MethodDelete, invPath(uuid)+"/"+escape(class), nil, nil, nil)
}
