package placementdb

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/rpctl/rpctl/internal/placementtest"
	"github.com/rpctl/rpctl/internal/testdb"
)

// TestCreateIncompleteConsumersRace: another run of
// create_incomplete_consumers (a second operator, or a second Galera node,
// as TestGaleraConcurrentMigrations found in CI) inserts the incomplete
// project after this run read that there was none. This run's INSERT
// waits on the other's uncommitted row and meets a duplicate key once it
// commits; rpctl runs its transaction again and uses the other run's
// project, where it failed with MySQL error 1062 before.
func TestCreateIncompleteConsumersRace(t *testing.T) {
	if !testdb.MySQLWanted() {
		t.Skip("needs MariaDB: run under make test (RPCTL_TEST_MYSQL)")
	}
	pl := placementtest.NewDB(t)
	db := pl.DB
	ctx := context.Background()
	const incomplete = "00000000-0000-0000-0000-000000000000"
	for _, q := range []string{
		`INSERT INTO resource_providers (uuid, name, generation, created_at) VALUES ('c0000000-0000-4000-8000-000000000001', 'cn1', 1, NOW())`,
		`UPDATE resource_providers SET root_provider_id = id`,
		`INSERT INTO allocations (resource_provider_id, consumer_id, resource_class_id, used, created_at)
			SELECT id, 'b0000000-0000-4000-8000-000000000001', 0, 1, NOW() FROM resource_providers`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}

	// The other run: its project row written, not yet committed.
	other, err := db.BeginTxx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Rollback()
	res, err := other.ExecContext(ctx, `INSERT INTO projects (external_id, created_at) VALUES (?, NOW())`, incomplete)
	if err != nil {
		t.Fatal(err)
	}
	otherID, _ := res.LastInsertId()

	type result struct {
		n   int
		err error
	}
	done := make(chan result, 1)
	go func() {
		n, err := New(db).CreateIncompleteConsumers(ctx, incomplete, incomplete, 1000, time.Now())
		done <- result{n, err}
	}()
	// Commit only once this run waits on the other's row: by then it has
	// read that there is no project. (The other's own INSERT is done, so
	// the statement in the process list is this run's, waiting; innodb_trx
	// would need the PROCESS privilege.)
	for {
		var waiting int
		if err := db.GetContext(ctx, &waiting, `SELECT COUNT(*) FROM information_schema.processlist WHERE info LIKE 'INSERT INTO projects%' AND id <> CONNECTION_ID()`); err != nil {
			t.Fatal(err)
		}
		if waiting > 0 {
			break
		}
		select {
		case r := <-done:
			t.Fatalf("the run finished before it waited on the other's project row: %d, %v", r.n, r.err)
		default:
		}
	}
	if err := other.Commit(); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err != nil {
		t.Fatalf("create_incomplete_consumers beside another run: %v", r.err)
	}
	if r.n != 1 {
		t.Errorf("consumers created: %d, want 1", r.n)
	}
	var projects []int64
	if err := db.SelectContext(ctx, &projects, `SELECT project_id FROM consumers`); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(projects) != fmt.Sprint([]int64{otherID}) {
		t.Errorf("consumers' project ids %v, want the other run's %d", projects, otherID)
	}
}
