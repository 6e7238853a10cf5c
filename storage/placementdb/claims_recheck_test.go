package placementdb

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/rpctl/rpctl/claims"
	"github.com/rpctl/rpctl/internal/placementtest"
	"github.com/rpctl/rpctl/internal/testdb"
	"github.com/rpctl/rpctl/storage"
)

const (
	raceProvider = "c0000000-0000-4000-8000-000000000001"
	raceHolder   = "b0000000-0000-4000-8000-000000000001" // holds 4 of the 5 VCPU
)

// raceCloud is one provider of 5 VCPU of which 4 are used, on MariaDB;
// url is the database's SQLAlchemy URL, for placement-api.
func raceCloud(t *testing.T) (db *storage.DB, url string, rp, vcpu int64) {
	t.Helper()
	pl := placementtest.NewDB(t)
	db, url = pl.DB, pl.URL
	ctx := context.Background()
	for _, q := range []string{
		`INSERT INTO resource_providers (uuid, name, generation, created_at) VALUES ('` + raceProvider + `', 'cn1', 1, NOW())`,
		`UPDATE resource_providers SET root_provider_id = id`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.GetContext(ctx, &rp, `SELECT id FROM resource_providers WHERE uuid = ?`, raceProvider); err != nil {
		t.Fatal(err)
	}
	if err := db.GetContext(ctx, &vcpu, `SELECT id FROM resource_classes WHERE name = 'VCPU'`); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		fmt.Sprintf(`INSERT INTO inventories (resource_provider_id, resource_class_id, total, reserved, min_unit, max_unit, step_size, allocation_ratio, created_at) VALUES (%d, %d, 5, 0, 1, 5, 1, 1.0, NOW())`, rp, vcpu),
		fmt.Sprintf(`INSERT INTO allocations (resource_provider_id, consumer_id, resource_class_id, used, created_at) VALUES (%d, '%s', %d, 4, NOW())`, rp, raceHolder, vcpu),
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	return db, url, rp, vcpu
}

func usedVCPU(t *testing.T, db *storage.DB, rp, vcpu int64) int64 {
	t.Helper()
	var used int64
	if err := db.Get(&used, `SELECT COALESCE(SUM(used), 0) FROM allocations WHERE resource_provider_id = ? AND resource_class_id = ?`, rp, vcpu); err != nil {
		t.Fatal(err)
	}
	return used
}

// TestClaimRechecksCapacity: another writer adds the last free VCPU while
// rpctl's database claim for it is written but not committed (a writer
// that does not take the provider's row, so rpctl's snapshot cannot see
// it). rpctl re-checks with a locking read before committing and refuses
// its claim: 5 used of 5, where committing blind made it 6.
func TestClaimRechecksCapacity(t *testing.T) {
	db, _, rp, vcpu := raceCloud(t)
	var once sync.Once
	afterGroupWrite = func(ctx context.Context, _ *sqlx.Tx) {
		once.Do(func() {
			if _, err := db.ExecContext(ctx, fmt.Sprintf(`INSERT INTO allocations (resource_provider_id, consumer_id, resource_class_id, used, created_at) VALUES (%d, 'd0000000-0000-4000-8000-000000000001', %d, 1, NOW())`, rp, vcpu)); err != nil {
				t.Errorf("the other writer: %v", err)
			}
		})
	}
	defer func() { afterGroupWrite = nil }()
	p := &ClaimsPlacement{DB: db}
	_, err := p.PutAllocations(context.Background(), []claims.Write{{Consumer: "a0000000-0000-4000-8000-000000000001",
		Alloc: claims.Allocations{Allocations: map[string]claims.ProviderAllocation{raceProvider: {Resources: map[string]int64{"VCPU": 1}}}, ProjectID: "p", UserID: "u"}}})
	var we *claims.WriteError
	if !errors.As(err, &we) || !strings.Contains(we.Detail, "exceed the capacity") {
		t.Errorf("claim: err = %v, want it refused for capacity", err)
	}
	if used := usedVCPU(t, db, rp, vcpu); used != 5 {
		t.Errorf("%d VCPU used of 5", used)
	}
}

// TestPlacementOverCommitRace pins Placement 8.0.0's behaviour, not
// rpctl's: while another writer holds the provider's row with the last
// free VCPU written, placement-api's claim for it passes its capacity check
// on a snapshot, waits for the row, fails its generation check, and retries
// inside its outer transaction, re-checking against the same stale snapshot:
// both claims succeed, 6 VCPU used of 5. The README's "Placement's
// over-commit race" says how to avoid it. If this test fails, Placement no
// longer does this: update the README.
func TestPlacementOverCommitRace(t *testing.T) {
	db, url, rp, vcpu := raceCloud(t)
	base := testdb.PlacementAPI(t, url)
	ctx := context.Background()
	tx, err := db.BeginTxx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	// The holding writer: the provider's row locked and bumped, the last
	// VCPU allocated, not yet committed.
	for _, q := range []string{
		`SELECT id FROM resource_providers WHERE uuid = '` + raceProvider + `' FOR UPDATE`,
		`UPDATE resource_providers SET generation = generation + 1 WHERE uuid = '` + raceProvider + `'`,
		fmt.Sprintf(`INSERT INTO allocations (resource_provider_id, consumer_id, resource_class_id, used, created_at) VALUES (%d, 'a0000000-0000-4000-8000-000000000001', %d, 1, NOW())`, rp, vcpu),
	} {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	type answer struct {
		status int
		body   string
		err    error
	}
	done := make(chan answer, 1)
	go func() {
		body := `{"allocations": {"` + raceProvider + `": {"resources": {"VCPU": 1}}}, "project_id": "p", "user_id": "u", "consumer_generation": null}`
		req, _ := http.NewRequest(http.MethodPut, base+"/allocations/e0000000-0000-4000-8000-000000000001", bytes.NewReader([]byte(body)))
		req.Header.Set("X-Auth-Token", "admin")
		req.Header.Set("OpenStack-API-Version", "placement 1.28")
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			done <- answer{err: err}
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		done <- answer{status: resp.StatusCode, body: string(b)}
	}()
	// Commit once placement-api waits for the row: progress, not a clock
	// (the deadline only ends a test that would otherwise hang).
	waited := false
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); {
		var n int
		// placement-api's generation bump of the locked row is running (it
		// can only wait for our lock): INNODB_TRX does not always list
		// the waiting transaction, the process list does.
		if err := db.Get(&n, `SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE DB = DATABASE() AND COMMAND = 'Query' AND INFO LIKE 'UPDATE resource_providers%'`); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			waited = true
			break
		}
		select {
		case a := <-done:
			t.Fatalf("placement-api answered without waiting for the row: %d %s %v", a.status, a.body, a.err)
		case <-time.After(20 * time.Millisecond):
		}
	}
	if !waited {
		t.Fatal("placement-api never waited for the provider's row")
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	a := <-done
	if a.err != nil {
		t.Fatal(a.err)
	}
	used := usedVCPU(t, db, rp, vcpu)
	if a.status != http.StatusNoContent || used != 6 {
		t.Errorf("Placement answered %d %s with %d VCPU used of 5; Placement 8.0.0 answers 204 and over-commits to 6", a.status, a.body, used)
	}
}
