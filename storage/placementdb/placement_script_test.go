package placementdb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/jmoiron/sqlx"
	"github.com/rpctl/rpctl/candidates"
	"github.com/rpctl/rpctl/internal/placementtest"
	"github.com/rpctl/rpctl/inventory"
	"github.com/rpctl/rpctl/migrate"
	"github.com/rpctl/rpctl/storage"
)

func scriptUUID(i int) string { return candidates.SyntheticUUID(0, i) }

// scriptNode is a compute node as the migration writes it: a root with
// inventories and the COMPUTE_NODE trait, children (NUMA cells) with their
// own, and an aggregate.
func scriptNode(i int, name string, children int, agg string) migrate.NodeWrite {
	inv := func(total int64, ratio float64) map[string]inventory.Inventory {
		return map[string]inventory.Inventory{
			"VCPU":      {Total: total, Reserved: 1, MinUnit: 1, MaxUnit: total, StepSize: 1, AllocationRatio: ratio},
			"MEMORY_MB": {Total: total * 1024, Reserved: 512, MinUnit: 1, MaxUnit: total * 1024, StepSize: 1, AllocationRatio: 1.5},
		}
	}
	root := migrate.ProviderWrite{UUID: scriptUUID(i * 10), Name: name, Create: true, Generation: 1,
		AddInventories: inv(16, 16), AddTraits: []string{migrate.TraitComputeNode}}
	if agg != "" {
		root.AddAggregates = []string{agg}
	}
	w := migrate.NodeWrite{Providers: []migrate.ProviderWrite{root}}
	for c := 1; c <= children; c++ {
		w.Providers = append(w.Providers, migrate.ProviderWrite{UUID: scriptUUID(i*10 + c), Name: fmt.Sprintf("%s_NUMA%d", name, c-1),
			ParentUUID: root.UUID, Create: true, Generation: 1, AddInventories: inv(8, 4)})
	}
	return w
}

// placementRows is every row the writes leave, ids replaced by uuids and
// timestamps left out.
func placementRows(t *testing.T, db *storage.DB) []string {
	t.Helper()
	var out []string
	for _, q := range []string{
		`SELECT CONCAT_WS(' ', 'rp', p.uuid, p.name, p.generation, COALESCE(pp.uuid, '-'), r.uuid) FROM resource_providers p
			LEFT JOIN resource_providers pp ON pp.id = p.parent_provider_id JOIN resource_providers r ON r.id = p.root_provider_id`,
		`SELECT CONCAT_WS(' ', 'inv', p.uuid, c.name, i.total, i.reserved, i.min_unit, i.max_unit, i.step_size, i.allocation_ratio) FROM inventories i
			JOIN resource_providers p ON p.id = i.resource_provider_id JOIN resource_classes c ON c.id = i.resource_class_id`,
		`SELECT CONCAT_WS(' ', 'trait', p.uuid, t.name) FROM resource_provider_traits x
			JOIN resource_providers p ON p.id = x.resource_provider_id JOIN traits t ON t.id = x.trait_id`,
		`SELECT CONCAT_WS(' ', 'agg', p.uuid, a.uuid) FROM resource_provider_aggregates x
			JOIN resource_providers p ON p.id = x.resource_provider_id JOIN placement_aggregates a ON a.id = x.aggregate_id`,
		`SELECT CONCAT_WS(' ', 'null', uuid) FROM resource_providers WHERE created_at IS NULL OR root_provider_id IS NULL`,
	} {
		var rows []string
		if err := db.SelectContext(context.Background(), &rows, q); err != nil {
			t.Fatal(err)
		}
		out = append(out, rows...)
	}
	slices.Sort(out)
	return out
}

// TestWriteNodesScriptsLeaveTheRowsOfOneByOne: the nodes written as scripts
// (many transactions per round trip) leave exactly the rows the same nodes
// leave written one transaction at a time through writeGroup, for flat
// and nested nodes, odd names and aggregates; a name that has no literal
// form in every sql_mode goes the other way.
func TestWriteNodesScriptsLeaveTheRowsOfOneByOne(t *testing.T) {
	ctx := context.Background()
	const agg = "5f2cd1a2-6a7e-4a8b-9c0d-000000000001"
	var nodes []migrate.NodeWrite
	for i := 1; i <= 40; i++ {
		nodes = append(nodes, scriptNode(i, fmt.Sprintf("host%d", i), i%3, map[bool]string{true: agg}[i%4 == 0]))
	}
	nodes = append(nodes, scriptNode(41, "o'hara; DROP TABLE inventories; --", 2, agg), scriptNode(42, `back\slash`, 1, ""))
	var dumps [2][]string
	for k, script := range []bool{true, false} {
		db, ids := scriptPlacement(t, agg)
		var errs []error
		if script {
			for i := range nodes {
				if _, got := nodeScript(&nodes[i], ids, db.Now(), i, false); got != (i != 41) {
					want := i != 41
					t.Errorf("node %d scriptable = %v, want %v", i, got, want)
				}
			}
			errs = WriteNodes(ctx, db, ids, nodes)
		} else {
			for i := range nodes {
				errs = append(errs, db.SessionTx(ctx, func(tx *sqlx.Tx) error { return writeGroup(ctx, db, tx, ids, nodes[i:i+1]) }))
			}
		}
		for i, err := range errs {
			if err != nil {
				t.Fatalf("script=%v: node %d: %v", script, i, err)
			}
		}
		dumps[k] = placementRows(t, db)
	}
	if len(dumps[0]) < 300 || !slices.Equal(dumps[0], dumps[1]) {
		t.Errorf("scripts wrote %d rows, one by one %d; first difference:\n%s", len(dumps[0]), len(dumps[1]), firstDiff(dumps[0], dumps[1]))
	}
}

// scriptPlacement is an empty Placement database on MariaDB with the
// classes, trait and aggregates the script tests' nodes use.
func scriptPlacement(t *testing.T, aggregates ...string) (*storage.DB, *migrate.PlacementIDs) {
	t.Helper()
	db := placementtest.MySQL(t)
	ids, err := EnsurePlacementNames(context.Background(), db, []string{"VCPU", "MEMORY_MB"}, []string{migrate.TraitComputeNode}, aggregates)
	if err != nil {
		t.Fatal(err)
	}
	return db, ids
}

func firstDiff(a, b []string) string {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return a[i] + "\n" + b[i]
		}
	}
	return fmt.Sprintf("lengths %d and %d", len(a), len(b))
}

// TestWriteScriptsStopAtTheFailedNode: a node whose statement fails in the
// middle of a script gets its own error, nothing of it stays (its open
// transaction is rolled back before the script goes on: a START
// TRANSACTION would commit it), and the nodes before and after it are
// written.
func TestWriteScriptsStopAtTheFailedNode(t *testing.T) {
	ctx := context.Background()
	db, ids := scriptPlacement(t)
	taken := scriptNode(99, "taken", 0, "")
	if errs := WriteNodes(ctx, db, ids, []migrate.NodeWrite{taken}); errs[0] != nil {
		t.Fatal(errs[0])
	}
	dup := scriptNode(2, "dup", 2, "")
	dup.Providers[2].UUID = taken.Providers[0].UUID // the second child's insert fails
	bad := scriptNode(4, "bad", 1, "")
	bad.Providers[1].AddInventories["VCPU"] = inventory.Inventory{Total: 1 << 31, MinUnit: 1, MaxUnit: 1, StepSize: 1, AllocationRatio: 1}
	nodes := []migrate.NodeWrite{scriptNode(1, "one", 1, ""), dup, scriptNode(3, "three", 2, ""), bad, scriptNode(5, "five", 0, "")}
	errs := WriteNodes(ctx, db, ids, nodes)
	if errs[0] != nil || errs[2] != nil || errs[4] != nil || !errors.Is(errs[1], migrate.ErrDuplicate) || !errors.Is(errs[3], migrate.ErrBadValue) {
		t.Fatalf("errors %v, want nil, ErrDuplicate, nil, ErrBadValue, nil", errs)
	}
	// A script whose first node fails: the error comes with the query.
	if errs := WriteNodes(ctx, db, ids, []migrate.NodeWrite{taken}); !errors.Is(errs[0], migrate.ErrDuplicate) {
		t.Errorf("the same node again: %v, want ErrDuplicate", errs[0])
	}
	// The connection goes back to the pool: the next script must not
	// commit anything the failed nodes left.
	if errs := WriteNodes(ctx, db, ids, []migrate.NodeWrite{scriptNode(6, "six", 0, "")}); errs[0] != nil {
		t.Fatal(errs[0])
	}
	var names []string
	if err := db.SelectContext(ctx, &names, "SELECT name FROM resource_providers WHERE parent_provider_id IS NULL ORDER BY name"); err != nil {
		t.Fatal(err)
	}
	if want := []string{"five", "one", "six", "taken", "three"}; !slices.Equal(names, want) {
		t.Errorf("roots %q, want %q", names, want)
	}
}

// blockedScript starts WriteNodes on three nodes while another session holds
// an uncommitted provider with the uuid of the second node's child, and
// waits until the script's session is seen waiting for that lock. It
// returns the other session, the waiting session's id and the channel
// WriteNodes' errors arrive on.
func blockedScript(t *testing.T, db *storage.DB, ids *migrate.PlacementIDs, before func(*sql.Conn)) (*sql.Conn, int64, chan []error, []migrate.NodeWrite) {
	t.Helper()
	ctx := context.Background()
	other, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.ExecContext(ctx, "ROLLBACK"); other.Close() })
	nodes := []migrate.NodeWrite{scriptNode(1, "one", 0, ""), scriptNode(2, "two", 1, ""), scriptNode(3, "three", 0, "")}
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := other.ExecContext(ctx, q, args...); err != nil {
			t.Fatal(err)
		}
	}
	exec("START TRANSACTION")
	if before != nil {
		before(other)
	}
	exec("INSERT INTO resource_providers (uuid, name, generation) VALUES (?, 'holder', 0)", nodes[1].Providers[1].UUID)
	var mine int64
	if err := other.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&mine); err != nil {
		t.Fatal(err)
	}
	done := make(chan []error, 1)
	go func() { done <- WriteNodes(ctx, db, ids, nodes) }()
	for {
		// The statement being run leads the session's INFO (the rest of
		// the script may follow it).
		var waiting []int64
		if err := db.SelectContext(ctx, &waiting, `SELECT id FROM information_schema.processlist
			WHERE db = DATABASE() AND command = 'Query' AND id <> ? AND LEFT(info, 200) LIKE ?`, mine, "INSERT INTO resource_providers%"+nodes[1].Providers[1].UUID+"%"); err != nil {
			t.Fatal(err)
		}
		if len(waiting) == 1 {
			return other, waiting[0], done, nodes
		}
		select {
		case errs := <-done:
			t.Fatalf("WriteNodes ended without waiting for the lock: %v", errs)
		default:
		}
	}
}

// TestWriteScriptsRetryADeadlockFromTheFailedNode: the script's node is
// the victim of a deadlock (another, larger transaction waits for it while
// it waits for that one); the nodes before it stay written and the script
// goes on from the failed node, as storage.Retry retries a transaction.
func TestWriteScriptsRetryADeadlockFromTheFailedNode(t *testing.T) {
	ctx := context.Background()
	db, ids := scriptPlacement(t)
	// InnoDB rolls back the transaction that changed fewer rows: the
	// other session's 50 make the script's node the victim.
	heavy := func(c *sql.Conn) {
		var vals []string
		for i := range 50 {
			vals = append(vals, fmt.Sprintf("('%s', 'weight%d', 0)", scriptUUID(9000+i), i))
		}
		if _, err := c.ExecContext(ctx, "INSERT INTO resource_providers (uuid, name, generation) VALUES "+strings.Join(vals, ", ")); err != nil {
			t.Fatal(err)
		}
	}
	other, _, done, nodes := blockedScript(t, db, ids, heavy)
	// The node's root is inserted, its child waits: wanting the root's
	// uuid closes the cycle.
	if _, err := other.ExecContext(ctx, "INSERT INTO resource_providers (uuid, name, generation) VALUES (?, 'cycle', 0)", nodes[1].Providers[0].UUID); err != nil {
		t.Fatalf("the other session lost the deadlock (want the script's node to): %v", err)
	}
	if _, err := other.ExecContext(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	for i, err := range <-done {
		if err != nil {
			t.Errorf("node %d: %v", i, err)
		}
	}
	var n int
	if err := db.GetContext(ctx, &n, "SELECT COUNT(*) FROM resource_providers"); err != nil || n != 4 {
		t.Errorf("%d providers (%v), want the 4 of the 3 nodes", n, err)
	}
}

// TestWriteScriptsInDoubtAfterAKill: the script's connection is killed
// while a node waits; the nodes whose markers came back are written, that
// node and every later one are in doubt (the caller reads back), with the
// session to wait for, and nothing of them is written.
func TestWriteScriptsInDoubtAfterAKill(t *testing.T) {
	ctx := context.Background()
	db, ids := scriptPlacement(t)
	other, session, done, _ := blockedScript(t, db, ids, nil)
	if _, err := db.ExecContext(ctx, fmt.Sprintf("KILL %d", session)); err != nil {
		t.Fatal(err)
	}
	errs := <-done
	if errs[0] != nil {
		t.Errorf("node 0 (before the kill): %v", errs[0])
	}
	for _, err := range errs[1:] {
		var se *storage.SessionError
		if !errors.As(err, &se) || se.Session != session || !storage.InDoubt(err) {
			t.Errorf("after the kill: %v (%T), want in doubt with session %d", err, err, session)
		}
	}
	if _, err := other.ExecContext(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	var names []string
	if err := db.SelectContext(ctx, &names, "SELECT name FROM resource_providers"); err != nil || !slices.Equal(names, []string{"one"}) {
		t.Errorf("providers %q (%v), want only one", names, err)
	}
}

// TestWriteScriptsGTIDCheckAfterACommit: an item's GTID check can raise
// 1213 after a COMMIT that did write (on Galera, two runs at once through
// two nodes: TestGaleraConcurrentMigrations saw a node's providers
// committed by the run whose check said they were not, which then counted
// its own write as another run's). On a MariaDB that is not a Galera node
// WSREP_LAST_WRITTEN_GTID() never moves, so a guarded script's check fails
// after every COMMIT: the nodes must still be reported written (nil), not
// retried into a duplicate of their own rows. The probe that decides it
// answers only for the node whose root row has the id its own INSERT got.
func TestWriteScriptsGTIDCheckAfterACommit(t *testing.T) {
	ctx := context.Background()
	db, ids := scriptPlacement(t)
	var before, after string
	if err := db.GetContext(ctx, &before, "SELECT WSREP_LAST_WRITTEN_GTID()"); err != nil {
		t.Fatal(err)
	}
	db.Galera = true // guarded scripts, as on a Galera node
	nodes := []migrate.NodeWrite{scriptNode(1, "host1", 1, ""), scriptNode(2, "host2", 0, ""), scriptNode(3, "host3", 2, "")}
	for i, err := range WriteNodes(ctx, db, ids, nodes) {
		if err != nil {
			t.Errorf("node %d: %v, want written", i+1, err)
		}
	}
	if err := db.GetContext(ctx, &after, "SELECT WSREP_LAST_WRITTEN_GTID()"); err != nil || after != before {
		t.Fatalf("WSREP_LAST_WRITTEN_GTID() %q before the writes, %q after (%v): the test needs a server where it does not move", before, after, err)
	}
	var n int
	if err := db.GetContext(ctx, &n, "SELECT COUNT(*) FROM resource_providers"); err != nil || n != 6 {
		t.Errorf("%d providers (%v), want the 6 of the 3 nodes", n, err)
	}

	// The probe, in a session whose @rp0 is one node's root id.
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, c := range []struct {
		set  string
		node int
		want bool
	}{
		{"SET @rp0 = NULL", 0, false},
		{"SET @rp0 = (SELECT id FROM resource_providers WHERE uuid = '" + nodes[0].Providers[0].UUID + "')", 0, true},
		// An abort before node 2's INSERT leaves node 1's id in @rp0.
		{"SET @rp0 = (SELECT id FROM resource_providers WHERE uuid = '" + nodes[0].Providers[0].UUID + "')", 1, false},
		// Another writer's row of the same uuid has another id.
		{"SET @rp0 = (SELECT MAX(id) + 1 FROM resource_providers)", 2, false},
	} {
		if _, err := conn.ExecContext(ctx, c.set); err != nil {
			t.Fatal(err)
		}
		probe, ok := nodeProbe(&nodes[c.node])
		if got := ok && committed(ctx, conn, probe); got != c.want {
			t.Errorf("%s: probe of node %d says committed %v, want %v", c.set, c.node+1, got, c.want)
		}
	}
}
