// Package inventory decides what an ad hoc edit of Placement's resource
// providers means — validation with Placement's limits, amend versus
// replace, capacity versus usage, the generation-checked retry loop — once,
// for both places an edit can be carried out: the Placement database
// (storage/placementdb) and the Placement REST API (placementclient).
package inventory

import (
	"context"
	"errors"
	"fmt"
)

// Store is everything the inventory domain asks of a Placement. Each method
// is one Placement API call at microversion 1.39 (named in its comment) and
// must leave exactly what that call leaves in the Placement database: the
// same rows, the same generation increments, the same updated_at columns
// touched. A database implementation therefore reproduces placement-api's
// handler and object code; an API implementation sends the request.
//
// Contract shared by both implementations:
//   - Providers are addressed by uuid only; resolving names is the domain's
//     job (Resolve).
//   - Writes that Placement guards with resource_provider_generation take
//     the generation the caller read and return the provider's new one. A
//     stale generation is an *Error of kind ErrGeneration and changes
//     nothing; the caller decides whether to re-read and retry (never the
//     store: a write is never sent twice blindly).
//   - Failures Placement answers with 4xx are *Error values whose Kind is one
//     of ErrNotFound (404), ErrGeneration (409 placement.concurrent_update),
//     ErrInUse (409 *.inuse, and the parent-with-children case), ErrConflict
//     (409 duplicate names/classes/traits) or ErrBadRequest (400), with
//     Placement's own message. Anything else (dead server, broken schema) is
//     a plain error.
//   - Lists come back in the order Placement returns them (callers sort for
//     display); maps are keyed by resource class, consumer or trait name.
type Store interface {
	// ListProviders is GET /resource_providers with the filter's parameters.
	ListProviders(ctx context.Context, f ProviderFilter) ([]Provider, error)
	// GetProvider is GET /resource_providers/{uuid}.
	GetProvider(ctx context.Context, uuid string) (Provider, error)
	// CreateProvider is POST /resource_providers; an empty spec.UUID lets
	// Placement generate one. Duplicate name or uuid: ErrConflict; unknown
	// parent: ErrBadRequest.
	CreateProvider(ctx context.Context, spec ProviderSpec) (Provider, error)
	// DeleteProvider is DELETE /resource_providers/{uuid}: ErrInUse when it
	// has allocations or child providers.
	DeleteProvider(ctx context.Context, uuid string) error
	// UpdateProvider is PUT /resource_providers/{uuid} (1.37 semantics):
	// a new name and, when u.ParentUUID is set, a new parent ("" makes it a
	// root); the whole subtree follows to the new root. Duplicate name:
	// ErrConflict; unknown parent or a loop: ErrBadRequest.
	UpdateProvider(ctx context.Context, uuid string, u ProviderUpdate) (Provider, error)

	// Inventories is GET /resource_providers/{uuid}/inventories.
	Inventories(ctx context.Context, uuid string) (generation int64, inv map[string]Inventory, err error)
	// ListInventories is Inventories in the order of Placement's answer
	// (osc lists them so): the order its query reads the rows, which is
	// the order they were written.
	ListInventories(ctx context.Context, uuid string) (generation int64, inv []ClassInventory, err error)
	// ReplaceInventories is PUT /resource_providers/{uuid}/inventories: the
	// provider ends with exactly inv (classes not named are deleted; deleting
	// one with allocations is ErrInUse), and its generation goes up by one
	// even when nothing changed, as in Placement.
	ReplaceInventories(ctx context.Context, uuid string, generation int64, inv map[string]Inventory) (int64, error)
	// Usages is GET /resource_providers/{uuid}/usages: the sum of
	// allocations for every class the provider has inventory of (0 when
	// none).
	Usages(ctx context.Context, uuid string) (generation int64, usages map[string]int64, err error)
	// ProjectUsages is GET /usages?project_id=P[&user_id=U]: the sums of
	// the project's (and user's) allocations by class, classes with none
	// left out, in Placement's order. From microversion 1.38 (the
	// database backend's) one group per consumer type; before, one group
	// with no type.
	ProjectUsages(ctx context.Context, project, user string) ([]UsageGroup, error)
	// ProviderAllocations is GET /resource_providers/{uuid}/allocations,
	// consumers and classes in Placement's order.
	ProviderAllocations(ctx context.Context, uuid string) (generation int64, allocs []ConsumerAllocations, err error)

	// ListResourceClasses is GET /resource_classes (names).
	ListResourceClasses(ctx context.Context) ([]string, error)
	// CreateResourceClass is PUT /resource_classes/{name} (1.7+): created is
	// false when it already existed. Not CUSTOM_: ErrBadRequest.
	CreateResourceClass(ctx context.Context, name string) (created bool, err error)
	// DeleteResourceClass is DELETE /resource_classes/{name}: standard
	// class ErrBadRequest, class with inventory ErrInUse.
	DeleteResourceClass(ctx context.Context, name string) error

	// ListTraits is GET /traits with the filter's parameters (names).
	ListTraits(ctx context.Context, f TraitFilter) ([]string, error)
	// CreateTrait is PUT /traits/{name}: created is false when it existed.
	CreateTrait(ctx context.Context, name string) (created bool, err error)
	// DeleteTrait is DELETE /traits/{name}: standard trait ErrBadRequest,
	// trait on a provider ErrInUse.
	DeleteTrait(ctx context.Context, name string) error
	// ProviderTraits is GET /resource_providers/{uuid}/traits.
	ProviderTraits(ctx context.Context, uuid string) (generation int64, traits []string, err error)
	// SetProviderTraits is PUT /resource_providers/{uuid}/traits. As in
	// Placement the generation goes up only when the set changes; an
	// unknown trait is ErrBadRequest.
	SetProviderTraits(ctx context.Context, uuid string, generation int64, traits []string) (int64, error)

	// ProviderAggregates is GET /resource_providers/{uuid}/aggregates.
	ProviderAggregates(ctx context.Context, uuid string) (generation int64, aggregates []string, err error)
	// SetProviderAggregates is PUT /resource_providers/{uuid}/aggregates
	// (1.19+, with the generation, which goes up by one even when nothing
	// changed, as in Placement).
	SetProviderAggregates(ctx context.Context, uuid string, generation int64, aggregates []string) (int64, error)
}

// Provider is a resource provider as Placement shows it (1.14+).
type Provider struct {
	UUID       string `json:"uuid"`
	Name       string `json:"name"`
	Generation int64  `json:"generation"`
	// ParentUUID is "" for a root provider (Placement's null).
	ParentUUID string `json:"parent_provider_uuid"`
	RootUUID   string `json:"root_provider_uuid"`
}

// ProviderSpec is the body of POST /resource_providers.
type ProviderSpec struct {
	Name       string
	UUID       string // "" = Placement generates one
	ParentUUID string // "" = a root provider
}

// ProviderFilter holds the query parameters of GET /resource_providers;
// empty fields are not sent. The values are Placement's own syntax.
type ProviderFilter struct {
	Name   string
	UUID   string
	InTree string // a provider uuid
	// MemberOf: each entry one member_of parameter ("U", "in:U1,U2", "!U",
	// "!in:U1,U2"); entries are ANDed.
	MemberOf []string
	// Resources: "VCPU:2,MEMORY_MB:512".
	Resources string
	// Required: each entry one required parameter ("T1,!T2", "in:T1,T2").
	Required []string
}

// TraitFilter holds the query parameters of GET /traits.
type TraitFilter struct {
	// Name is Placement's name parameter: "in:A,B" or "startswith:CUSTOM_".
	Name string
	// Associated, when set, keeps only traits on (true) or not on (false)
	// some provider.
	Associated *bool
}

// Inventory is one inventory record of a provider, in Placement's JSON.
type Inventory struct {
	Total           int64   `json:"total"`
	Reserved        int64   `json:"reserved"`
	MinUnit         int64   `json:"min_unit"`
	MaxUnit         int64   `json:"max_unit"`
	StepSize        int64   `json:"step_size"`
	AllocationRatio float64 `json:"allocation_ratio"`
}

// ClassInventory is one class's inventory in a list.
type ClassInventory struct {
	Class string
	Inventory
}

// ClassAmount is an amount of one class.
type ClassAmount struct {
	Class  string
	Amount int64
}

// ConsumerAllocations are one consumer's allocations against a provider.
type ConsumerAllocations struct {
	Consumer string
	// Generation is the consumer's; nil where Placement does not show it
	// (before microversion 1.28).
	Generation *int64
	Resources  []ClassAmount
}

// UsageGroup is the usage of one consumer type (GET /usages from 1.38), or
// all of it (ConsumerType "" before 1.38, where Consumers is not shown).
type UsageGroup struct {
	// ConsumerType is Placement's name; "unknown" for consumers without
	// a type.
	ConsumerType string
	Consumers    int64
	Usages       []ClassAmount
}

// Capacity is what Placement lets be allocated:
// int((total - reserved) * allocation_ratio), truncated as Python's int().
func (i Inventory) Capacity() int64 {
	return int64(float64(i.Total-i.Reserved) * i.AllocationRatio)
}

// ProviderUpdate is what `provider set` changes.
type ProviderUpdate struct {
	Name string
	// ParentUUID nil keeps the parent; "" makes the provider a root.
	ParentUUID *string
}

// The kinds of *Error; test with errors.Is(err, inventory.ErrGeneration).
var (
	ErrNotFound   = errors.New("not found")
	ErrGeneration = errors.New("resource provider generation conflict")
	ErrInUse      = errors.New("in use")
	ErrConflict   = errors.New("already exists")
	ErrBadRequest = errors.New("bad request")
	// ErrForbidden: Placement's policy refuses the credentials (401, 403).
	ErrForbidden = errors.New("forbidden")
)

// Error is a failure Placement answers with a 4xx status.
type Error struct {
	Kind    error  // one of the Err* kinds above
	Status  int    // the HTTP status Placement answers with
	Code    string // Placement's error code, e.g. "placement.concurrent_update"
	Message string // Placement's message
}

func (e *Error) Error() string { return e.Message }

// Unwrap makes errors.Is(err, ErrGeneration) work.
func (e *Error) Unwrap() error { return e.Kind }

// Placement's error codes (placement/errors.py).
const (
	CodeDefault            = "placement.undefined_code"
	CodeInventoryInUse     = "placement.inventory.inuse"
	CodeConcurrentUpdate   = "placement.concurrent_update"
	CodeDuplicateName      = "placement.duplicate_name"
	CodeProviderInUse      = "placement.resource_provider.inuse"
	CodeCannotDeleteParent = "placement.resource_provider.cannot_delete_parent"
)

// Errorf builds an *Error with Placement's status and code for kind.
func Errorf(kind error, code string, format string, args ...any) *Error {
	status := 500
	switch kind {
	case ErrNotFound:
		status = 404
	case ErrGeneration, ErrInUse, ErrConflict:
		status = 409
	case ErrBadRequest:
		status = 400
	case ErrForbidden:
		status = 403
	}
	if code == "" {
		code = CodeDefault
	}
	return &Error{Kind: kind, Status: status, Code: code, Message: fmt.Sprintf(format, args...)}
}
