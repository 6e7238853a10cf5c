// Package claims holds rpctl's rules for Placement allocations ("claims"):
// an instance's claim is the allocation its consumer uuid holds, a move's
// source-side claim is held by the migration's uuid. This file has the values
// and the interfaces the healing side needs; storage implements them on the
// databases (and placementclient may implement the Placement side over HTTP).
package claims

import (
	"context"
	"errors"
	"time"
)

// Instance is what healing needs of one instance row (and its
// instance_extra.flavor).
type Instance struct {
	ID        int64
	UUID      string
	CreatedAt *time.Time
	ProjectID string
	UserID    string
	ImageRef  string
	Host      *string
	Node      *string
	TaskState *string
	// FlavorJSON is instance_extra.flavor as stored; Flavor parses it.
	FlavorJSON *string
	// RootIsVolume is the root block device mapping's verdict (nil when the
	// instance has none, or the cell has no block_device_mapping table).
	RootIsVolume *bool
}

// Page is the position after the last instance read, in Nova's
// heal_allocations order (created_at, id ascending).
type Page struct {
	CreatedAt *time.Time
	ID        int64
}

// Cell is the Nova cell database side of healing.
type Cell interface {
	// Name names the cell in messages.
	Name() string
	// Instances returns up to limit non-deleted, not soft-deleted instances
	// (only uuid when it is not empty) after the marker (nil: from the
	// start), ordered by created_at then id, with their root disk verdicts.
	Instances(ctx context.Context, after *Page, limit int, uuid string) ([]Instance, error)
	// ComputeNodeUUID returns the uuid of the live compute node (host,
	// node); ErrComputeHostNotFound when there is none. A NULL uuid is "".
	ComputeNodeUUID(ctx context.Context, host, node string) (string, error)
}

// HostNode is a compute node's (host, hypervisor_hostname).
type HostNode struct{ Host, Node string }

// NodeBatcher is a Cell that looks up many compute nodes in one read (the
// database, across the network: one round trip per lookup made heal cost
// about half a round trip per instance, issue 35).
type NodeBatcher interface {
	// ComputeNodeUUIDs is ComputeNodeUUID for each key; a key without a
	// live compute node is absent from the map.
	ComputeNodeUUIDs(ctx context.Context, keys []HostNode) (map[HostNode]string, error)
}

// InstanceCounter is a Cell that counts the instances Instances walks
// (with no uuid): the total of a heal's progress report (issue 35: heal
// printed "1000 rows matched" lines for minutes with no ETA).
type InstanceCounter interface {
	CountInstances(ctx context.Context) (int, error)
}

// countInstances is the instances a walk of every cell reads, or -1 when a
// cell cannot count them (the report then has no total).
func countInstances(ctx context.Context, cells []Cell) (int, error) {
	total := 0
	for _, c := range cells {
		ic, ok := c.(InstanceCounter)
		if !ok {
			return -1, nil
		}
		n, err := ic.CountInstances(ctx)
		if err != nil {
			return 0, err
		}
		total += n
	}
	return total, nil
}

// ErrComputeHostNotFound is Nova's ComputeHostNotFound.
var ErrComputeHostNotFound = errors.New("compute host not found")

// ProviderAllocation is one provider's part of a consumer's allocation.
type ProviderAllocation struct {
	Generation int64            `json:"generation,omitempty"`
	Resources  map[string]int64 `json:"resources"`
	// Classes, when read from Placement, are Resources' classes in the
	// order Placement answered them (osc prints that order).
	Classes []string `json:"-"`
}

// Allocations is a consumer's allocation as GET /allocations/{consumer}
// shows it at microversion 1.28 and PUT takes it.
type Allocations struct {
	Allocations map[string]ProviderAllocation `json:"allocations"`
	ProjectID   string                        `json:"project_id"`
	UserID      string                        `json:"user_id"`
	// ConsumerGeneration is nil for a consumer Placement does not know.
	ConsumerGeneration *int64 `json:"consumer_generation"`
	// ConsumerType is Placement's consumer type (1.38: INSTANCE,
	// MIGRATION, any upper-case name, or UnknownConsumerType for a consumer
	// written without one). Empty when read below 1.38; a write without
	// one leaves the backend's default. Not in the JSON form, which is
	// the 1.28 body (heal's dry run prints it as Nova does).
	ConsumerType string `json:"-"`
	// Providers, when read from Placement, are Allocations' providers in
	// the order Placement answered them.
	Providers []string `json:"-"`
}

// UnknownConsumerType is how Placement shows a consumer that has no type
// (placement/objects/consumer_type.py, NULL_CONSUMER_TYPE_ALIAS). It is
// never written: Placement refuses it as a type.
const UnknownConsumerType = "unknown"

// Write is one consumer's PUT /allocations/{consumer}.
type Write struct {
	Consumer string
	Alloc    Allocations
}

// Placement is the Placement side of healing.
type Placement interface {
	// ConsumerAllocations returns what GET /allocations/{consumer} returns
	// for each uuid (a consumer with none is absent from the map).
	ConsumerAllocations(ctx context.Context, consumers []string) (map[string]*Allocations, error)
	// PutAllocations replaces the allocations of each consumer, in order,
	// exactly as PUT /allocations/{consumer} at microversion 1.28 would,
	// each consumer atomically. It returns how many leading writes took
	// effect and, when that is fewer than len(ws), why the next one failed
	// (a *WriteError, or another error when Placement could not be reached).
	PutAllocations(ctx context.Context, ws []Write) (int, error)
}

// WriteError is a refused PUT: Placement's 400 or 409.
type WriteError struct {
	Consumer string
	// Conflict is a consumer generation conflict (placement.concurrent_update).
	Conflict bool
	// Invalid is a write Placement refused as a bad request (400): the
	// request itself is wrong, and no other candidate or retry changes
	// that.
	Invalid bool
	Detail  string
}

func (e *WriteError) Error() string { return e.Detail }
