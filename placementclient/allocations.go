package placementclient

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"time"
)

// ProviderUsages is GET /resource_providers/{uuid}/usages.
type ProviderUsages struct {
	Usages     map[string]int64 `json:"usages"`
	Generation int64            `json:"resource_provider_generation"`
}

// GetProviderUsages is GET /resource_providers/{uuid}/usages.
func (c *Client) GetProviderUsages(ctx context.Context, uuid string) (*ProviderUsages, error) {
	var out ProviderUsages
	if err := c.do(ctx, http.MethodGet, "/resource_providers/"+escape(uuid)+"/usages", nil, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ProjectUsages is GET /usages (1.9) as raw JSON: its shape changes at
// 1.38 (grouped by consumer type).
func (c *Client) ProjectUsages(ctx context.Context, projectID, userID string) (json.RawMessage, error) {
	if err := c.need(9, "GET /usages"); err != nil {
		return nil, err
	}
	q := url.Values{"project_id": {projectID}}
	if userID != "" {
		q.Set("user_id", userID)
	}
	var out struct {
		Usages json.RawMessage `json:"usages"`
	}
	err := c.do(ctx, http.MethodGet, "/usages", q, nil, &out)
	return out.Usages, err
}

// ProviderAllocations is one provider's part of a consumer's allocations.
type ProviderAllocations struct {
	Generation *int64           `json:"generation,omitempty"`
	Resources  map[string]int64 `json:"resources"`
	// Classes are Resources' classes in the answer's order.
	Classes []string `json:"-"`
}

// Allocations is a consumer's allocations: GET's answer and PUT's body.
type Allocations struct {
	Allocations map[string]ProviderAllocations `json:"allocations"`
	ProjectID   string                         `json:"project_id,omitempty"`
	UserID      string                         `json:"user_id,omitempty"`
	// ConsumerGeneration is null for a new consumer (1.28).
	ConsumerGeneration *int64 `json:"consumer_generation"`
	ConsumerType       string `json:"consumer_type,omitempty"`
	// Providers are Allocations' providers in the answer's order.
	Providers []string `json:"-"`
}

// UnmarshalJSON keeps the order of Placement's answer (osc prints the
// providers and classes of an allocation in that order) beside the maps.
func (a *Allocations) UnmarshalJSON(b []byte) error {
	type plain Allocations
	var p plain
	raw, err := decodeAllocations(b, &p)
	if err != nil {
		return err
	}
	*a = Allocations(p)
	var classes map[string][]string
	a.Providers, classes, err = allocationOrder(raw)
	for rp, cs := range classes {
		pa := a.Allocations[rp]
		pa.Classes = cs
		a.Allocations[rp] = pa
	}
	return err
}

// decodeAllocations decodes b into v (a type without UnmarshalJSON) and
// returns b's "allocations" member as it came.
func decodeAllocations(b []byte, v any) (json.RawMessage, error) {
	if err := json.Unmarshal(b, v); err != nil {
		return nil, err
	}
	var raw struct {
		Allocations json.RawMessage `json:"allocations"`
	}
	err := json.Unmarshal(b, &raw)
	return raw.Allocations, err
}

// allocationOrder reads the order of {key: {"resources": {class: n}}} (an
// allocations answer keyed by provider or by consumer): its keys, and each
// key's classes.
func allocationOrder(obj json.RawMessage) ([]string, map[string][]string, error) {
	if len(obj) == 0 || obj[0] != '{' {
		return nil, nil, nil
	}
	classes := map[string][]string{}
	keys, err := objectKeys(obj, func(k string, v json.RawMessage) error {
		var res struct {
			Resources json.RawMessage `json:"resources"`
		}
		if err := json.Unmarshal(v, &res); err != nil || len(res.Resources) == 0 || res.Resources[0] != '{' {
			return err
		}
		var err error
		classes[k], err = objectKeys(res.Resources, nil)
		return err
	})
	return keys, classes, err
}

// objectKeys are the keys of a JSON object in their order; each is
// handed to visit (when not nil) with its value.
func objectKeys(obj json.RawMessage, visit func(string, json.RawMessage) error) ([]string, error) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		k, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		keys = append(keys, k)
		if visit != nil {
			if err := visit(k, v); err != nil {
				return nil, err
			}
		}
	}
	return keys, nil
}

func allocPath(consumer string) string { return "/allocations/" + escape(consumer) }

// GetAllocations is GET /allocations/{consumer}.
func (c *Client) GetAllocations(ctx context.Context, consumer string) (*Allocations, error) {
	var out Allocations
	if err := c.do(ctx, http.MethodGet, allocPath(consumer), nil, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// GetAllocationsAt is GET /allocations/{consumer} at microversion mv
// rather than the client's (Nova's report client reads at 1.28, say).
func (c *Client) GetAllocationsAt(ctx context.Context, mv Version, consumer string) (*Allocations, error) {
	if err := c.supports(mv); err != nil {
		return nil, err
	}
	var out Allocations
	if err := c.do(ctx, http.MethodGet, allocPath(consumer), nil, nil, &out, &mv); err != nil {
		return nil, err
	}
	return &out, nil
}

// GetAllocationsWritten is GetAllocationsAt (mv at least 1.15) with the
// answer's Last-Modified: when the consumer's allocations were last
// written (Placement inserts a consumer's allocations anew on every write).
func (c *Client) GetAllocationsWritten(ctx context.Context, mv Version, consumer string) (*Allocations, time.Time, error) {
	if err := c.supports(mv); err != nil {
		return nil, time.Time{}, err
	}
	if !mv.AtLeast(15) {
		return nil, time.Time{}, fmt.Errorf("the Last-Modified header needs Placement microversion 1.15 or later; asked for %s", mv)
	}
	var out Allocations
	_, _, h, err := c.exchange(ctx, http.MethodGet, allocPath(consumer), "", nil, &out, &mv)
	if err != nil {
		return nil, time.Time{}, err
	}
	written, err := http.ParseTime(h.Get("Last-Modified"))
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("GET %s: Last-Modified %q: %v", allocPath(consumer), h.Get("Last-Modified"), err)
	}
	return &out, written.UTC(), nil
}

// SetAllocationsAt is SetAllocations at microversion mv rather than the
// client's.
func (c *Client) SetAllocationsAt(ctx context.Context, mv Version, consumer string, a Allocations) error {
	if err := c.supports(mv); err != nil {
		return err
	}
	if !mv.AtLeast(12) {
		return fmt.Errorf("PUT /allocations in the dict format needs Placement microversion 1.12 or later; asked for %s", mv)
	}
	return c.do(ctx, http.MethodPut, allocPath(consumer), nil, allocBody(mv, a), nil, &mv)
}

// allocBody drops what microversion mv does not accept.
func allocBody(mv Version, a Allocations) any {
	allocs := make(map[string]ProviderAllocations, len(a.Allocations))
	for rp, pa := range a.Allocations {
		allocs[rp] = ProviderAllocations{Resources: pa.Resources}
	}
	m := map[string]any{"allocations": allocs}
	if mv.AtLeast(8) {
		m["project_id"], m["user_id"] = a.ProjectID, a.UserID
	}
	if mv.AtLeast(28) {
		m["consumer_generation"] = a.ConsumerGeneration
	}
	if mv.AtLeast(38) && a.ConsumerType != "" {
		m["consumer_type"] = a.ConsumerType
	}
	return m
}

// SetAllocations is PUT /allocations/{consumer} (from 1.12 with the
// allocations keyed by provider UUID): the consumer's allocations become
// exactly these, if its generation is still a.ConsumerGeneration (1.28).
func (c *Client) SetAllocations(ctx context.Context, consumer string, a Allocations) error {
	if err := c.need(12, "PUT /allocations in the dict format"); err != nil {
		return err
	}
	return c.do(ctx, http.MethodPut, allocPath(consumer), nil, allocBody(c.mv, a), nil)
}

// DeleteAllocations is DELETE /allocations/{consumer}.
func (c *Client) DeleteAllocations(ctx context.Context, consumer string) error {
	return c.do(ctx, http.MethodDelete, allocPath(consumer), nil, nil, nil)
}

// PostAllocations is POST /allocations (1.13): several consumers' allocations
// in one transaction.
func (c *Client) PostAllocations(ctx context.Context, byConsumer map[string]Allocations) error {
	if err := c.need(13, "POST /allocations"); err != nil {
		return err
	}
	body := make(map[string]any, len(byConsumer))
	for k, a := range byConsumer {
		body[k] = allocBody(c.mv, a)
	}
	return c.do(ctx, http.MethodPost, "/allocations", nil, body, nil)
}

// ConsumerAllocations is one consumer's resources on a provider.
type ConsumerAllocations struct {
	Resources map[string]int64 `json:"resources"`
	// ConsumerGeneration is shown from 1.28.
	ConsumerGeneration *int64 `json:"consumer_generation,omitempty"`
	// Classes are Resources' classes in the answer's order.
	Classes []string `json:"-"`
}

// ProviderAllocationsList is GET /resource_providers/{uuid}/allocations.
type ProviderAllocationsList struct {
	Allocations map[string]ConsumerAllocations `json:"allocations"`
	Generation  int64                          `json:"resource_provider_generation"`
	// Consumers are Allocations' consumers in the answer's order.
	Consumers []string `json:"-"`
}

// UnmarshalJSON keeps the answer's order of consumers and classes (osc
// prints them in it) beside the maps.
func (l *ProviderAllocationsList) UnmarshalJSON(b []byte) error {
	type plain ProviderAllocationsList
	var p plain
	raw, err := decodeAllocations(b, &p)
	if err != nil {
		return err
	}
	*l = ProviderAllocationsList(p)
	var classes map[string][]string
	l.Consumers, classes, err = allocationOrder(raw)
	for c, cs := range classes {
		ca := l.Allocations[c]
		ca.Classes = cs
		l.Allocations[c] = ca
	}
	return err
}

// GetProviderAllocations is GET /resource_providers/{uuid}/allocations.
func (c *Client) GetProviderAllocations(ctx context.Context, uuid string) (*ProviderAllocationsList, error) {
	var out ProviderAllocationsList
	if err := c.do(ctx, http.MethodGet, "/resource_providers/"+escape(uuid)+"/allocations", nil, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// AllocationCandidates is GET /allocation_candidates?rawQuery (1.10): the
// body exactly as Placement sent it. rawQuery is passed through untouched,
// so Placement sees what the caller wrote.
func (c *Client) AllocationCandidates(ctx context.Context, rawQuery string) (json.RawMessage, error) {
	if err := c.need(10, "GET /allocation_candidates"); err != nil {
		return nil, err
	}
	_, body, err := c.doRaw(ctx, http.MethodGet, "/allocation_candidates", rawQuery, nil, nil)
	return body, err
}

// AllocationCandidatesAt asks at microversion mv (which may differ from the
// client's) and returns Placement's status and body also when it refuses
// the query: a 4xx is then both the body and an *Error.
func (c *Client) AllocationCandidatesAt(ctx context.Context, mv Version, rawQuery string) (int, []byte, error) {
	if err := c.supports(mv); err != nil {
		return 0, nil, err
	}
	return c.doRaw(ctx, http.MethodGet, "/allocation_candidates", rawQuery, nil, nil, &mv)
}
