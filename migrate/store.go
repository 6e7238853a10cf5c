package migrate

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/rpctl/rpctl/internal/nova"
	"github.com/rpctl/rpctl/inventory"
)

// The records the inventory and ratio migrations read and write, and the
// errors a store reports for them; storage/placementdb and storage/celldb
// implement the stores below with them.

// PProvider is a resource provider as stored in the Placement database.
type PProvider struct {
	ID          int64                          `json:"-"`
	UUID        string                         `json:"uuid"`
	Name        string                         `json:"name"`
	Generation  int64                          `json:"generation"`
	ParentUUID  string                         `json:"parent_provider_uuid,omitempty"`
	RootUUID    string                         `json:"root_provider_uuid,omitempty"`
	Inventories map[string]inventory.Inventory `json:"inventories"`
	Traits      map[string]bool                `json:"traits"`
	Aggregates  map[string]bool                `json:"aggregates"`
	// Used are the resource classes with allocations against the provider.
	Used map[string]bool `json:"-"`
}

// PlacementState is what the inventory migration needs to know of a
// Placement database.
type PlacementState struct {
	Providers map[string]*PProvider // by uuid
	ByName    map[string]string     // name -> uuid

	treeIndex // built on first use (layout_switch.go)
}

// treeIndex finds a provider's children and a pool's sharing providers
// without a scan of every provider.
type treeIndex struct {
	once     sync.Once
	children map[string][]string
	pools    map[string][]string
}

// PlacementIDs maps resource class, trait and aggregate names to their ids.
type PlacementIDs struct {
	Classes    map[string]int64
	Traits     map[string]int64
	Aggregates map[string]int64
}

// ErrDuplicate is a unique-key violation: a provider uuid or name that
// another writer took first.
var ErrDuplicate = errors.New("duplicate entry")

// ProviderWrite is the change to one resource provider: created, or
// updated from the generation it was read at.
type ProviderWrite struct {
	UUID       string
	Name       string
	ParentUUID string // "" for a root
	Create     bool
	// ExpectGeneration is the generation the change was planned against
	// (existing providers); Generation the one it leaves.
	ExpectGeneration int64
	Generation       int64

	AddInventories    map[string]inventory.Inventory
	UpdateInventories map[string]inventory.Inventory
	DeleteInventories []string
	AddTraits         []string
	// RemoveTraits are traits the provider loses (COMPUTE_STATUS_DISABLED
	// once its service is enabled again).
	RemoveTraits  []string
	AddAggregates []string
	// RemoveAggregates are aggregates the provider leaves (a node leaving
	// a --shared-storage pool).
	RemoveAggregates []string
	// Delete removes the provider with its inventories, traits and
	// aggregates, after the rest of the node is written: a PCI device
	// provider whose device is gone (staleDevice). The store refuses it,
	// and with it the node, when the provider has allocations or
	// children, as Placement's ResourceProvider.destroy does.
	Delete bool
}

// NodeWrite is everything one compute node needs written; it is applied
// atomically: all of it or nothing.
type NodeWrite struct {
	// Providers are in creation order: parents before children.
	Providers []ProviderWrite
	// Moves carry allocations to where a layout switch puts their class,
	// before the inventories they leave are deleted (layout_switch.go).
	Moves []AllocationMove

	switching
}

// AllocationMove moves one consumer's allocation of one class from one
// provider to another. The store applies it only if the allocation is
// still exactly Used (else ErrGenerationConflict: re-read, re-plan), bumps
// the consumer's generation and both providers', as a PUT would.
type AllocationMove struct {
	Consumer string
	Class    string
	From, To string
	Used     int64
	// Limit bounds the class's summed usage on To once the node's moves
	// are made: nodes planned side by side may aim at the same provider
	// (a pool), and only the transaction sees all of them. Above it the
	// store answers ErrGenerationConflict, and the node is re-planned.
	Limit int64
}

// AllocationRow is one allocation: a consumer's amount of a class on a
// provider.
type AllocationRow struct {
	Consumer string
	Provider string
	Class    string
	Used     int64
}

// AllocationReader is the part of the Placement store a layout switch
// reads: the allocations of every consumer holding anything on the tree
// providers, and the usage and inventories of the target providers, keyed
// by (provider uuid, class).
type AllocationReader interface {
	SwitchAllocations(ctx context.Context, tree, targets []string) (rows []AllocationRow, usage map[[2]string]int64, invs map[[2]string]inventory.Inventory, err error)
}

// ErrGenerationConflict means a provider changed after it was read (a live
// nova-compute or an operator wrote it); re-read and re-plan.
var ErrGenerationConflict = errors.New("resource provider changed concurrently")

// ErrInventoryInUse is Placement's placement.inventory.inuse: an inventory
// with allocations cannot be removed.
var ErrInventoryInUse = errors.New("inventory in use")

// ErrBadValue is a value the server refused for its column (out of range,
// too long, not in the column's character set): the node's own data, not
// the database, is at fault.
var ErrBadValue = errors.New("value refused by the database")

// NodeRow is a compute node row with what Nova's compute reports beside
// it, read from the same cell database.
type NodeRow struct {
	Node nova.ComputeNode
	// ServiceDisabled: the live nova-compute service of the row's host is
	// disabled (services.disabled).
	ServiceDisabled bool
	// PCIDevices are the node's live pci_devices rows, in id order (read
	// only when [pci] report_in_placement is on).
	PCIDevices []nova.PCIDevice
}

// NodeRatios is a compute node's allocation ratios as stored (nil = NULL),
// with what an operator needs to recognise the row.
type NodeRatios struct {
	ID                 int64
	Host               string
	HypervisorHostname string
	CPU, RAM, Disk     *float64
}

// RatioFill is the value to write into each empty ratio column; nil leaves
// the column alone.
type RatioFill struct {
	CPU, RAM, Disk *float64
}

// NodeSource is what planning a compute node's inventories reads of a
// cell (ScanNodeRows): its live rows and what the cell says beside them.
type NodeSource interface {
	// Name is the cell's name in messages ("" for the only cell of an
	// unmapped deployment).
	Name() string
	// ScanNodesForInventory calls fn for every live compute node, in id
	// order, while the rows arrive.
	ScanNodesForInventory(ctx context.Context, fn func(nova.ComputeNode)) error
	// DisabledComputeHosts returns the hosts whose live nova-compute
	// service is disabled.
	DisabledComputeHosts(ctx context.Context) (map[string]bool, error)
	// PCIDevices returns the live pci_devices rows of the live compute
	// nodes, by compute node id, in id order.
	PCIDevices(ctx context.Context) (map[int64][]nova.PCIDevice, error)
}

// Cell is one Nova cell database as the migrations read and write it.
type Cell interface {
	NodeSource
	// SetComputeNodeUUIDs stores generated uuids in rows whose uuid is still
	// NULL and returns the uuid every row holds afterwards.
	SetComputeNodeUUIDs(ctx context.Context, want map[int64]string) (map[int64]string, error)
	// ListEmptyRatioNodes pages through live nodes with a NULL or 0.0 ratio
	// after afterID, in id order.
	ListEmptyRatioNodes(ctx context.Context, afterID int64, limit int) ([]NodeRatios, error)
	// FillEmptyRatios sets the NULL or 0.0 ratios of the given nodes.
	FillEmptyRatios(ctx context.Context, ids []int64, fill RatioFill, now time.Time) (int, error)
}

// Settler is implemented by a Placement store whose failed writes can
// still be in progress on the server (a killed session goes on until its
// commit or rollback is over): Settle waits until the writes that returned
// these errors (WriteNodes') are over, so that a read-back shows what they
// left.
type Settler interface {
	Settle(ctx context.Context, failures []error) error
}

// Placement is the Placement database as the inventory migration reads and
// writes it.
type Placement interface {
	// LoadPlacementState reads every provider with its inventories,
	// traits, aggregates and allocated classes.
	LoadPlacementState(ctx context.Context) (*PlacementState, error)
	// LoadProviders reads the providers with these uuids or names and every
	// provider of their trees.
	LoadProviders(ctx context.Context, uuids, names []string) (*PlacementState, error)
	// EnsurePlacementNames creates the classes, traits and aggregates that
	// are missing and returns every id.
	EnsurePlacementNames(ctx context.Context, classes, traits, aggregates []string) (*PlacementIDs, error)
	// WriteNodes writes each node's providers in one transaction per node;
	// errs[i] is node i's.
	WriteNodes(ctx context.Context, ids *PlacementIDs, nodes []NodeWrite) []error
	// SingleWriter is true for a database that takes one writer at a time
	// (SQLite), where parallel workers only wait for each other.
	SingleWriter() bool
}
