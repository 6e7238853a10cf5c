package status

import (
	"context"

	"github.com/rpctl/rpctl/claims"
	"github.com/rpctl/rpctl/migrate"
)

// NodeRef names a compute node in messages.
type NodeRef struct {
	ID   int64
	Host string // host, or "" when NULL
	Node string // hypervisor_hostname, or "" when NULL
}

// NodeCapacity is what the status checks look at: a compute node's uuid
// ("" when NULL), its legacy capacity columns and its allocation ratios
// (nil when NULL).
type NodeCapacity struct {
	NodeRef
	UUID                          string
	Deleted                       bool
	VCPUs                         int64
	MemoryMB                      int64
	LocalGB                       int64
	CPURatio, RAMRatio, DiskRatio *float64
}

// ServiceVersions summarises the live services of one binary in a cell the
// way Nova's service_get_minimum_version sees them: not deleted, not forced
// down, and (as get_minimum_version_all_cells) only positive versions.
type ServiceVersions struct {
	Binary string
	Count  int
	Min    int64
	// Below counts the services older than the threshold asked for; First
	// are the oldest of them.
	Below int
	First []ServiceRef
}

// ServiceRef names a service in messages.
type ServiceRef struct {
	Host    string `db:"host"`
	Version int64  `db:"version"`
}

// ProviderTotals is a resource provider with its VCPU, MEMORY_MB and DISK_GB
// inventory totals (nil when it has no inventory of that class).
type ProviderTotals struct {
	UUID    string
	Name    string
	Root    bool // no parent provider
	Sharing bool // has MISC_SHARES_VIA_AGGREGATE
	// ParentUUID and RootUUID place the provider in its tree ("" when not
	// known); Aggregates are its aggregate uuids.
	ParentUUID string
	RootUUID   string
	Aggregates []string
	VCPU       *int64
	Memory     *int64
	Disk       *int64
}

// Overuse is an inventory whose allocations exceed its capacity.
type Overuse struct {
	UUID            string
	Name            string
	Class           string
	Total, Reserved int64
	AllocationRatio float64
	Used            int64
	// Unclaimed is the part of Used that instances without allocations
	// use, which Placement does not count.
	Unclaimed int64
}

// Capacity is Placement's (total - reserved) * allocation_ratio.
func (o Overuse) Capacity() float64 {
	return float64(o.Total-o.Reserved) * o.AllocationRatio
}

// Cell is one Nova cell database as the checks read it.
type Cell interface {
	// Name is the cell's name ("" for an unmapped deployment's only cell).
	Name() string
	// NodeSource reads the live rows as the inventory migration plans
	// them (the Compute Node Inventories check).
	migrate.NodeSource
	// ListNodeCapacities returns every compute node, deleted ones included,
	// with its legacy capacity columns.
	ListNodeCapacities(ctx context.Context) ([]NodeCapacity, error)
	// ServiceVersionSummary counts the live services of the given binaries
	// older than threshold, naming up to limit of them.
	ServiceVersionSummary(ctx context.Context, binaries []string, threshold int64, limit int) ([]ServiceVersions, error)
	// Instances pages through the cell's live instances (claims.Cell's).
	Instances(ctx context.Context, after *claims.Page, limit int, uuid string) ([]claims.Instance, error)
}

// Placement is the Placement database as the checks read it.
type Placement interface {
	// LoadPlacementState reads every provider with its inventories,
	// traits, aggregates and allocated classes, as the inventory
	// migration does (the Compute Node Inventories check).
	LoadPlacementState(ctx context.Context) (*migrate.PlacementState, error)
	ListProviderTotals(ctx context.Context) ([]ProviderTotals, error)
	// ListOverusedInventories returns inventories whose usage exceeds
	// (total - reserved) * allocation_ratio.
	ListOverusedInventories(ctx context.Context) ([]Overuse, error)
	// MissingRootProviderIDs reports providers without a root_provider_id.
	MissingRootProviderIDs(ctx context.Context) (bool, error)
	// IncompleteConsumers counts allocations whose consumer row is missing.
	IncompleteConsumers(ctx context.Context) (int, error)
	// ConsumersWithAllocations is the set of consumers holding allocations.
	ConsumersWithAllocations(ctx context.Context) (map[string]bool, error)
	// InventoryUsages returns the inventories and usages of the providers.
	InventoryUsages(ctx context.Context, uuids []string) ([]Overuse, error)
	// ProviderConsumers lists the consumers holding class on the provider,
	// the most recently allocated first.
	ProviderConsumers(ctx context.Context, providerUUID, class string) ([]ConsumerUse, error)
}

// ConsumerUse is one consumer's allocation of one class on a provider.
type ConsumerUse struct {
	Consumer string
	Used     int64
}
