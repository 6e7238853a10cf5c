// Package claims is the operator's view of persistent resource claims: a
// claim is a Placement allocation held by a consumer (an instance, or a
// migration for the source side of a move). It reads who holds what, says
// what Nova knows of each holder, finds the orphans Nova 26's
// `nova-manage placement audit` finds, and writes claims with Placement's
// generation checks.
package claims

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sort"
	"time"
)

// AllocationRow is one (consumer, provider, class) allocation with what
// Placement knows of its consumer and provider.
type AllocationRow struct {
	Consumer     string
	ProviderID   int64
	ProviderUUID string
	ProviderName string
	// RootUUID is the provider tree's root (Nova's compute node uuid for
	// compute node trees); the provider's own uuid when root_provider_id is
	// NULL.
	RootUUID string
	Class    string
	Used     int64
	// HasConsumer is false for an allocation without a consumers row (an
	// "incomplete consumer" from before Rocky); Project, User and
	// Generation are then empty.
	HasConsumer bool
	Project     string
	User        string
	Generation  int64
	// CreatedAt is the consumer's created_at, else the allocation's.
	CreatedAt time.Time
}

// NodeRef is a live compute node with a uuid (its provider's uuid).
type NodeRef struct{ UUID, Host, Node string }

// InstanceState is what claims need of an instances row.
type InstanceState struct {
	UUID, Host, Node   string
	VMState, TaskState string
	Deleted            bool
}

// MigrationState is a live migrations row that has a uuid (the consumer of
// a move's source-side allocation).
type MigrationState struct {
	UUID, InstanceUUID        string
	SourceCompute, SourceNode string
	DestCompute, DestNode     string
	Status, Type              string
}

// CellView is a Nova cell as claims list, audit and snapshot read it.
type CellView interface {
	Name() string
	ComputeNodes(ctx context.Context) ([]NodeRef, error)
	// InstanceStates includes deleted instances.
	InstanceStates(ctx context.Context) ([]InstanceState, error)
	// MigrationStates are the non-deleted migrations with a uuid.
	MigrationStates(ctx context.Context) ([]MigrationState, error)
}

// Ledger is the Placement side of claims list, audit and snapshot.
type Ledger interface {
	// AllocationRows returns every allocation ordered by consumer,
	// provider id and class.
	AllocationRows(ctx context.Context) ([]AllocationRow, error)
	ProviderExists(ctx context.Context, uuid string) (bool, error)
	// RemoveConsumerFromProvider takes a consumer's allocations off one
	// provider as Nova's audit does through the API, atomically; false when
	// it no longer held the provider.
	RemoveConsumerFromProvider(ctx context.Context, consumer string, providerID int64) (bool, error)
}

// Removal is one RemoveConsumerFromProvider call.
type Removal struct {
	Consumer   string
	ProviderID int64
}

// BatchRemover is a Ledger (the database) that makes many removals in few
// round trips, each in a transaction of its own: one round trip per
// statement made audit --delete cost about ten per orphan across the
// network (issue 35).
type BatchRemover interface {
	// RemoveConsumersFromProviders makes rs in order and stops at the
	// first that fails: done are made, err is rs[done]'s failure.
	// ErrNoBatch, with nothing done, when the database cannot batch.
	RemoveConsumersFromProviders(ctx context.Context, rs []Removal) (done int, err error)
}

// ErrNoBatch is a BatchRemover's answer when it cannot batch: the caller
// removes one at a time.
var ErrNoBatch = errors.New("no batched writes on this database")

// Consumer types.
const (
	TypeInstance  = "instance"
	TypeMigration = "migration"
	TypeUnknown   = "unknown"
)

// What Nova says about a consumer on one provider.
const (
	NovaActive    = "active on this node"
	NovaOtherNode = "on another node"
	NovaDeleted   = "deleted"
	NovaMigrating = "migrating"
	NovaUnknown   = "unknown"
)

// hostNode is a compute node as Nova names it in instances and migrations.
type hostNode struct{ host, node string }

// ComputeNode is a live compute_nodes row that is a provider tree's root.
type ComputeNode struct {
	Cell, Host, Node string
}

// Nova is what the cells know about consumers.
type Nova struct {
	// Nodes by compute node uuid (= root provider uuid).
	Nodes      map[string]ComputeNode
	instances  map[string]InstanceState
	migrations map[string]MigrationState
	// onNode: live instance uuids per node; moving: in-progress migration
	// uuids per node (source or destination), as Nova's audit reads them.
	onNode map[hostNode]map[string]bool
	moving map[hostNode]map[string]bool
}

// finished says whether Nova's migration_get_in_progress_by_host_and_node
// treats a migration status as over.
func finished(status string) bool {
	switch status {
	case "confirmed", "reverted", "error", "failed", "completed", "cancelled", "done":
		return true
	}
	return false
}

// InProgress says whether Nova counts a migration as in progress. A NULL
// status (read as "") fails Nova's SQL NOT IN, so it is not.
func InProgress(m MigrationState) bool { return m.Status != "" && !finished(m.Status) }

// LoadNova reads compute nodes, instances and migrations of every cell.
func LoadNova(ctx context.Context, cells []CellView) (*Nova, error) {
	n := &Nova{Nodes: map[string]ComputeNode{}, instances: map[string]InstanceState{},
		migrations: map[string]MigrationState{}, onNode: map[hostNode]map[string]bool{}, moving: map[hostNode]map[string]bool{}}
	add := func(m map[hostNode]map[string]bool, k hostNode, uuid string) {
		if m[k] == nil {
			m[k] = map[string]bool{}
		}
		m[k][uuid] = true
	}
	for _, cell := range cells {
		nodes, err := cell.ComputeNodes(ctx)
		if err != nil {
			return nil, err
		}
		for _, cn := range nodes {
			if _, seen := n.Nodes[cn.UUID]; seen {
				continue // Nova's scatter-gather takes the first cell's answer
			}
			n.Nodes[cn.UUID] = ComputeNode{Cell: cell.Name(), Host: cn.Host, Node: cn.Node}
		}
		insts, err := cell.InstanceStates(ctx)
		if err != nil {
			return nil, err
		}
		for _, i := range insts {
			if old, ok := n.instances[i.UUID]; ok && !old.Deleted {
				continue
			}
			n.instances[i.UUID] = i
			if !i.Deleted {
				add(n.onNode, hostNode{i.Host, i.Node}, i.UUID)
			}
		}
		migs, err := cell.MigrationStates(ctx)
		if err != nil {
			return nil, err
		}
		for _, m := range migs {
			n.migrations[m.UUID] = m
			if InProgress(m) {
				add(n.moving, hostNode{m.SourceCompute, m.SourceNode}, m.UUID)
				add(n.moving, hostNode{m.DestCompute, m.DestNode}, m.UUID)
			}
		}
	}
	return n, nil
}

// Type says what kind of consumer uuid is.
func (n *Nova) Type(uuid string) string {
	if _, ok := n.instances[uuid]; ok {
		return TypeInstance
	}
	if _, ok := n.migrations[uuid]; ok {
		return TypeMigration
	}
	return TypeUnknown
}

// Known reports whether Nova's audit counts consumer as owned on the node
// whose compute node uuid is root: a live instance on that node or an
// in-progress migration from or to it.
func (n *Nova) Known(root, consumer string) bool {
	cn, ok := n.Nodes[root]
	if !ok {
		return false
	}
	k := hostNode{cn.Host, cn.Node}
	return n.onNode[k][consumer] || n.moving[k][consumer]
}

// Says is what Nova says about consumer on the node root.
func (n *Nova) Says(root, consumer string) string {
	cn, isNode := n.Nodes[root]
	k := hostNode{cn.Host, cn.Node}
	if i, ok := n.instances[consumer]; ok {
		switch {
		case i.Deleted:
			return NovaDeleted
		case isNode && n.moving[k] != nil && n.instanceMoving(consumer, k):
			return NovaMigrating
		case isNode && n.onNode[k][consumer]:
			return NovaActive
		}
		return NovaOtherNode
	}
	if m, ok := n.migrations[consumer]; ok && InProgress(m) {
		return NovaMigrating
	}
	return NovaUnknown
}

func (n *Nova) instanceMoving(instance string, k hostNode) bool {
	for uuid := range n.moving[k] {
		if n.migrations[uuid].InstanceUUID == instance {
			return true
		}
	}
	return false
}

// ResizeTarget says whether consumer is an instance whose in-progress
// migration goes to the node root.
func (n *Nova) ResizeTarget(root, consumer string) bool {
	cn, ok := n.Nodes[root]
	if !ok {
		return false
	}
	for uuid := range n.moving[hostNode{cn.Host, cn.Node}] {
		m := n.migrations[uuid]
		if m.InstanceUUID == consumer && m.DestCompute == cn.Host && m.DestNode == cn.Node {
			return true
		}
	}
	return false
}

// Holding is one consumer's allocation on one provider.
type Holding struct {
	Consumer     string
	ProviderID   int64
	ProviderUUID string
	ProviderName string
	RootUUID     string
	Resources    map[string]int64
	HasConsumer  bool
	Project      string
	User         string
	Generation   int64
	CreatedAt    time.Time
}

// Holdings groups allocation rows by (consumer, provider), in the rows'
// order (consumer, provider id).
func Holdings(rows []AllocationRow) []Holding {
	var out []Holding
	for _, r := range rows {
		if len(out) == 0 || out[len(out)-1].Consumer != r.Consumer || out[len(out)-1].ProviderID != r.ProviderID {
			out = append(out, Holding{Consumer: r.Consumer, ProviderID: r.ProviderID, ProviderUUID: r.ProviderUUID,
				ProviderName: r.ProviderName, RootUUID: r.RootUUID, Resources: map[string]int64{}, HasConsumer: r.HasConsumer,
				Project: r.Project, User: r.User, Generation: r.Generation, CreatedAt: r.CreatedAt})
		}
		out[len(out)-1].Resources[r.Class] += r.Used
	}
	return out
}

// byProvider orders holdings as the audit walks them: provider by provider
// (Placement's id order), consumers in uuid order.
func byProvider(hs []Holding) []Holding {
	out := append([]Holding(nil), hs...)
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].ProviderID != out[j].ProviderID {
			return out[i].ProviderID < out[j].ProviderID
		}
		return out[i].Consumer < out[j].Consumer
	})
	return out
}

// SortedClasses returns the classes of res in name order.
func SortedClasses(res map[string]int64) []string { return slices.Sorted(maps.Keys(res)) }

// load reads what list, audit and snapshot start from: the cells' view and
// every allocation grouped by consumer and provider.
func load(ctx context.Context, ledger Ledger, cells []CellView) (*Nova, []Holding, error) {
	nova, err := LoadNova(ctx, cells)
	if err != nil {
		return nil, nil, err
	}
	rows, err := ledger.AllocationRows(ctx)
	if err != nil {
		return nil, nil, err
	}
	return nova, Holdings(rows), nil
}
