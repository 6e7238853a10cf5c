package migrate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/cmd/internal/cmdtest"
	"github.com/rpctl/rpctl/internal/dsn"
	"github.com/rpctl/rpctl/internal/testdb"
	"github.com/rpctl/rpctl/storage"
)

// matrixCloud is one sample cloud on one backend: the rpctl flags that
// reach it, its cell database, and the real placement-api on its
// Placement database.
type matrixCloud struct {
	args      []string
	cell      *storage.DB
	placement *storage.DB
	api       string
}

func matrixSQLite(t *testing.T) matrixCloud {
	db := filepath.Join(t.TempDir(), "rpctl.db")
	if _, errOut, code := cmdtest.Rpctl(t, "--db", db, "init"); code != 0 {
		t.Fatalf("init: %s", errOut)
	}
	cell, err := storage.Open(context.Background(), dsn.SQLiteFile(db), storage.RoleCell, "cell1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cell.Close() })
	// The embedded file holds Placement's tables too: placement-api
	// serves them as it serves any SQLite Placement database.
	return matrixCloud{args: []string{"--db", db}, cell: cell, placement: cell, api: testdb.PlacementAPI(t, "sqlite:///"+db)}
}

func matrixMariaDB(t *testing.T) matrixCloud {
	c, a, p := testdb.NewMySQL(t), testdb.NewMySQL(t), testdb.NewMySQL(t)
	args := []string{"--cell-db", c.URL, "--api-db", a.URL, "--placement-db", p.URL}
	if _, errOut, code := cmdtest.Rpctl(t, append(args, "init")...); code != 0 {
		t.Fatalf("init: %s", errOut)
	}
	tg, err := dsn.Parse(c.DSN)
	if err != nil {
		t.Fatal(err)
	}
	cell, err := storage.Open(context.Background(), tg, storage.RoleCell, "cell1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cell.Close() })
	pt, err := dsn.Parse(p.DSN)
	if err != nil {
		t.Fatal(err)
	}
	placement, err := storage.Open(context.Background(), pt, storage.RolePlacement, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { placement.Close() })
	return matrixCloud{args: args, cell: cell, placement: placement, api: testdb.PlacementAPI(t, p.URL)}
}

type migrateRow struct {
	Migration   string `json:"migration"`
	TotalNeeded int    `json:"total_needed"`
	Completed   int    `json:"completed"`
}

// migrateAll runs `migrate all` and returns how many rows it wrote.
func (c matrixCloud) migrateAll(t *testing.T, layout []string) int {
	t.Helper()
	out, errOut, code := cmdtest.Rpctl(t, append(append(append([]string{}, c.args...), "-f", "json", "migrate", "all"), layout...)...)
	if code != 0 {
		t.Fatalf("migrate all %v: exit %d:\n%s", layout, code, errOut)
	}
	var rows []migrateRow
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("migrate all -f json: %v: %s", err, out)
	}
	n := 0
	for _, r := range rows {
		n += r.Completed
		if r.Completed > 0 {
			t.Logf("migrate all %v: %s completed %d of %d", layout, r.Migration, r.Completed, r.TotalNeeded)
		}
	}
	return n
}

// checkAllocations asserts that every instance on a host and in no task
// state (the ones heal_allocations heals) holds an allocation the real
// Placement-api serves, and takes back unchanged (PUT → 204).
func (c matrixCloud) checkAllocations(t *testing.T) int {
	t.Helper()
	var uuids []string
	if err := c.cell.SelectContext(context.Background(), &uuids, `SELECT uuid FROM instances WHERE deleted = 0 AND host IS NOT NULL AND node IS NOT NULL AND task_state IS NULL ORDER BY id`); err != nil {
		t.Fatal(err)
	}
	if len(uuids) == 0 {
		t.Fatal("the sample cloud has no instance on a host")
	}
	for _, u := range uuids {
		code, body := testdb.PlacementDo(t, "GET", c.api, "/allocations/"+u, "1.28", "")
		var got struct {
			Allocations map[string]struct {
				Resources map[string]int64 `json:"resources"`
			} `json:"allocations"`
			ProjectID          string `json:"project_id"`
			UserID             string `json:"user_id"`
			ConsumerGeneration *int64 `json:"consumer_generation"`
		}
		if code != 200 || json.Unmarshal(body, &got) != nil || len(got.Allocations) == 0 {
			t.Fatalf("GET /allocations/%s: %d %s", u, code, body)
		}
		put := map[string]any{"allocations": got.Allocations, "project_id": got.ProjectID, "user_id": got.UserID, "consumer_generation": got.ConsumerGeneration}
		b, _ := json.Marshal(put)
		if code, body := testdb.PlacementDo(t, "PUT", c.api, "/allocations/"+u, "1.28", string(b)); code != 204 {
			t.Fatalf("PUT /allocations/%s %s: %d %s", u, b, code, body)
		}
	}
	return len(uuids)
}

// TestMigrateAllMatrix: three sample clouds on every layout rpctl writes,
// on SQLite and MariaDB: migrate all ends with exit 0 and a re-run writes
// nothing; every instance on a host holds an allocation the real
// Placement-api serves and accepts back; status exits 0.
func TestMigrateAllMatrix(t *testing.T) {
	if testing.Short() {
		t.Skip("integration matrix")
	}
	backends := []struct {
		name string
		open func(*testing.T) matrixCloud
	}{{"sqlite", matrixSQLite}, {"mariadb", matrixMariaDB}}
	for _, be := range backends {
		for _, seed := range []int{3, 7, 31} {
			for _, name := range []string{"flat", "nested", "flat+shared", "nested+shared"} {
				layout := layoutFlags[name]
				t.Run(fmt.Sprintf("%s/seed%d/%s", be.name, seed, name), func(t *testing.T) {
					// Most of the time is placement-api starting and
					// answering: the clouds wait on it side by side. (The
					// cases share the process: a migration's flag values
					// once lived in package variables, and another case's
					// Rpctl call reset a running migrate all's --layout;
					// TestFlagValuesBelongToTheirTree keeps them per tree.)
					t.Parallel()
					c := be.open(t)
					if _, errOut, code := cmdtest.Rpctl(t, append(append([]string{}, c.args...), "sample-cloud", "--seed", fmt.Sprint(seed), "--nodes", "8")...); code != 0 {
						t.Fatalf("sample-cloud: exit %d: %s", code, errOut)
					}
					if n := c.migrateAll(t, layout); n == 0 {
						t.Fatal("the first migrate all wrote nothing")
					}
					if n := c.migrateAll(t, layout); n != 0 {
						t.Errorf("the second migrate all wrote %d rows", n)
					}
					healed := c.checkAllocations(t)
					if out, errOut, code := cmdtest.Rpctl(t, append(append([]string{}, c.args...), "status", "--check", "rpctl", "--check", "placement-status")...); code != 0 {
						t.Errorf("status: exit %d:\n%s%s", code, out, errOut)
					}
					t.Logf("%d instances on hosts, each allocation served and accepted back", healed)
				})
			}
		}
	}
}

// allocationsByName lists every allocation as consumer/provider name/class=used.
func (c matrixCloud) allocationsByName(t *testing.T, db string) []string {
	t.Helper()
	p, err := storage.Open(context.Background(), dsn.SQLiteFile(db), storage.RolePlacement, "")
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var out []string
	if err := p.SelectContext(context.Background(), &out, `SELECT a.consumer_id || '/' || rp.name || '/' || rc.name || '=' || a.used FROM allocations a
		JOIN resource_providers rp ON rp.id = a.resource_provider_id JOIN resource_classes rc ON rc.id = a.resource_class_id ORDER BY 1`); err != nil {
		t.Fatal(err)
	}
	return out
}

// claims heal places instances on nested and shared trees the same way on
// both backends: the databases, and the real placement-api.
func TestClaimsHealLayoutsBothBackends(t *testing.T) {
	var got [2][]string
	for i, api := range []bool{false, true} {
		c := matrixSQLite(t)
		db := c.args[1]
		if _, errOut, code := cmdtest.Rpctl(t, "--db", db, "sample-cloud", "--seed", "3", "--nodes", "12"); code != 0 {
			t.Fatalf("sample-cloud: %s", errOut)
		}
		for _, step := range [][]string{{"migrate", "inventory", "--layout", "nested", "--shared-storage", "ceph=cmp1-0000[1-6]*"}, {"migrate", "ratios"}} {
			if _, errOut, code := cmdtest.Rpctl(t, append([]string{"--db", db}, step...)...); code != 0 {
				t.Fatalf("%v: exit %d: %s", step, code, errOut)
			}
		}
		args := []string{"--db", db, "claims", "heal"}
		if api {
			args = []string{"--db", db, "--os-endpoint", c.api, "--os-token", "admin", "claims", "heal"}
		}
		if _, errOut, code := cmdtest.Rpctl(t, args...); code != 0 {
			t.Fatalf("claims heal (API %v): exit %d: %s", api, code, errOut)
		}
		got[i] = c.allocationsByName(t, db)
		c.checkAllocations(t)
	}
	if len(got[0]) == 0 || !slices.Equal(got[0], got[1]) {
		t.Errorf("the backends place differently:\ndatabase %v\nAPI      %v", got[0], got[1])
	}
	shared, numa := false, false
	for _, a := range got[0] {
		shared = shared || strings.Contains(a, "/shared-storage-ceph/DISK_GB=")
		numa = numa || strings.Contains(a, "_NUMA")
	}
	if !shared || !numa {
		t.Errorf("nothing healed onto a sharing provider (%v) or a NUMA cell (%v)", shared, numa)
	}
}
