package status_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/cmd/internal/cmdtest"
	"github.com/rpctl/rpctl/internal/dsn"
	"github.com/rpctl/rpctl/storage"
)

// TestStatusInstancesWithoutAllocations: after the inventory migration the
// sample cloud's instances hold no allocations: the check warns with the
// Count, the over-commit check counts what they use on a provider made too
// small for them, and after `claims heal` (on a provider with room) both
// pass.
func TestStatusInstancesWithoutAllocations(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cloud.db")
	for _, args := range [][]string{{"sample-cloud", "--nodes", "12", "--seed", "4"}, {"migrate", "inventory"}} {
		if _, errOut, code := cmdtest.Rpctl(t, append([]string{"--db", path}, args...)...); code != 0 {
			t.Fatalf("%v: %s", args, errOut)
		}
	}
	details := func() (map[string]int, map[string]string) {
		out, _, _ := cmdtest.Rpctl(t, "--db", path, "status", "--json")
		var doc cmdtest.StatusDoc
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		codes, det := map[string]int{}, map[string]string{}
		for _, c := range doc.Checks {
			codes[c.Check] = c.Result
			if c.Details != nil {
				det[c.Check] = *c.Details
			}
		}
		return codes, det
	}
	codes, det := details()
	if codes["Instances Without Allocations"] != 1 || !strings.Contains(det["Instances Without Allocations"], "cell1: ") ||
		!strings.Contains(det["Instances Without Allocations"], "rpctl claims heal") {
		t.Errorf("before heal: %d %q", codes["Instances Without Allocations"], det["Instances Without Allocations"])
	}
	if codes["Over-committed Providers"] != 0 {
		t.Errorf("before shrinking: over-commit %d %q", codes["Over-committed Providers"], det["Over-committed Providers"])
	}

	// Shrink the VCPU inventory of one node whose instances hold nothing.
	db, err := storage.Open(context.Background(), dsn.SQLiteFile(path), storage.RoleCell, "cell1")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var node string
	if err := db.Get(&node, `SELECT node FROM instances WHERE deleted = 0 AND task_state IS NULL AND node IS NOT NULL ORDER BY id LIMIT 1`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`UPDATE inventories SET total = 1, reserved = 1, allocation_ratio = 1.0 WHERE resource_class_id = 0
		AND resource_provider_id = (SELECT id FROM resource_providers WHERE name = ?)`, node); err != nil {
		t.Fatal(err)
	}
	codes, det = details()
	if codes["Over-committed Providers"] != 2 || !strings.Contains(det["Over-committed Providers"], node+" VCPU used") ||
		!strings.Contains(det["Over-committed Providers"], "by instances without allocations") {
		t.Errorf("shrunk provider: over-commit %d %q", codes["Over-committed Providers"], det["Over-committed Providers"])
	}
	// Room for every instance (the sample cloud has disks beyond a
	// provider's max_unit, which Placement refuses).
	if _, err := db.Exec(`UPDATE inventories SET total = 512, reserved = 0, allocation_ratio = 16.0 WHERE resource_class_id = 0`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`UPDATE inventories SET max_unit = 1000000, step_size = 1, min_unit = 1, total = total + 100000`); err != nil {
		t.Fatal(err)
	}
	if out, errOut, code := cmdtest.Rpctl(t, "--db", path, "claims", "heal"); code != 0 {
		t.Fatalf("heal: exit %d\n%s%s", code, out, errOut)
	}
	codes, det = details()
	if codes["Instances Without Allocations"] != 0 || codes["Over-committed Providers"] != 0 {
		t.Errorf("after heal: %v %v", codes, det)
	}
}
