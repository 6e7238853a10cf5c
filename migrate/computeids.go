package migrate

import (
	"context"
	"fmt"
	"time"
)

// InstanceComputeIDName is the row of populate_instance_compute_id in the
// summary table, named as nova-manage names it.
const InstanceComputeIDName = "populate_instance_compute_id"

// InstanceNode is an instance without a compute_id, with the host and node
// its compute node is found by (either may be NULL).
type InstanceNode struct {
	ID         int64
	UUID       string
	Host, Node *string
}

// NodeRef is the compute node an instance's host and node name: its id and
// uuid (NULL in a row no Nova since Newton has loaded).
type NodeRef struct {
	ID   int64
	UUID *string
}

// ComputeIDCell is a cell database's side of populate_instance_compute_id;
// storage/celldb implements it.
type ComputeIDCell interface {
	Name() string
	// InstancesWithoutComputeID returns up to limit instances, deleted
	// ones included, whose compute_id is NULL, in the order the database
	// gives them (Nova's session query: no deleted filter, no ORDER BY).
	InstancesWithoutComputeID(ctx context.Context, limit int) ([]InstanceNode, error)
	// ComputeNodeByHostAndNode returns the compute node
	// ComputeNode.get_by_host_and_nodename finds with read_deleted='yes':
	// the lowest id among the rows, deleted ones included, whose host and
	// hypervisor_hostname equal host and node under the database's
	// collation (a nil one matching NULL, as SQLAlchemy's == None); ok is
	// false when there is none.
	ComputeNodeByHostAndNode(ctx context.Context, host, node *string) (ref NodeRef, ok bool, err error)
	// SetInstanceComputeIDs sets compute_id (and updated_at) of the
	// instances (by id) whose compute_id is still NULL, and returns how
	// many it changed.
	SetInstanceComputeIDs(ctx context.Context, ids map[int64]int64, now time.Time) (int, error)
}

// InstanceComputeIDs is Nova 31's populate_instance_compute_id
// (nova/objects/instance.py:1361, added in 2023.2, run by nova-manage db
// online_data_migrations of 2023.2 on: NovaOnlineMigrations), run over
// every cell with one budget (nova-manage runs it on [database]
// connection's cell only). Up to count instances without a compute_id,
// deleted ones included, each get the id of the compute node their host
// and node name; found is every instance read, done those given an id.
//
// An instance whose compute node cannot be found is left as Nova leaves it
// (it logs "Unable to migrate instance" and goes on): found again at every
// batch, never done. An instance whose compute node has a NULL uuid makes
// Nova's whole batch fail (ComputeNode._from_db_object cannot load the
// node: its uuid field takes no None), so that nova-manage exits 2 until
// the node has a uuid; rpctl skips that instance as a bad row naming the
// node and migrates the others (exit 2 as well): rpctl migrate inventory
// gives such nodes their uuid, and migrate all runs it first.
type InstanceComputeIDs struct {
	Cells []ComputeIDCell
	Now   func() time.Time
}

// Name implements Migration.
func (*InstanceComputeIDs) Name() string { return InstanceComputeIDName }

// Run implements Migration.
func (m *InstanceComputeIDs) Run(ctx context.Context, count int) (found, done int, err error) {
	now := timeNow(m.Now)
	var skipped RowErrors
	for _, cell := range m.Cells {
		if count-found <= 0 {
			break
		}
		insts, err := cell.InstancesWithoutComputeID(ctx, count-found)
		if err != nil {
			return found, done, err
		}
		if len(insts) == 0 {
			continue
		}
		type key struct {
			host, node     string
			noHost, noNode bool
		}
		type lookup struct {
			ref NodeRef
			ok  bool
		}
		seen := map[key]lookup{}
		ids := map[int64]int64{}
		for _, in := range insts {
			// The pair as typed: two spellings MySQL's collation makes
			// equal are looked up twice and found the same.
			k := key{nullable(in.Host), nullable(in.Node), in.Host == nil, in.Node == nil}
			l, cached := seen[k]
			if !cached {
				ref, ok, err := cell.ComputeNodeByHostAndNode(ctx, in.Host, in.Node)
				if err != nil {
					return found, done, err
				}
				l = lookup{ref, ok}
				seen[k] = l
			}
			switch {
			case !l.ok:
				// Nova: ComputeHostNotFound, logged, the instance left.
			case l.ref.UUID == nil:
				skipped = append(skipped, &RowError{Migration: InstanceComputeIDName, Cell: cell.Name(),
					What: "instance " + in.UUID, Host: nullable(in.Host),
					Err: fmt.Errorf("its compute node id=%d has no uuid, which Nova 31's own populate_instance_compute_id fails on (the whole batch); run rpctl migrate inventory, which gives it one, then again", l.ref.ID)})
			default:
				ids[in.ID] = l.ref.ID
			}
		}
		// Rows another writer filled meanwhile count as done too, as
		// Nova counts every instance it saved.
		if len(ids) > 0 {
			if _, err := cell.SetInstanceComputeIDs(ctx, ids, now); err != nil {
				return found, done, err
			}
		}
		found += len(insts)
		done += len(ids)
	}
	if len(skipped) > 0 {
		return found, done, skipped
	}
	return found, done, nil
}

// nullable is *s, or "" for nil, for messages and map keys.
func nullable(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
