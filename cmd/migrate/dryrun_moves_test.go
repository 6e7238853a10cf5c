package migrate_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/cmd/internal/cmdtest"
	"github.com/rpctl/rpctl/internal/dsn"
	"github.com/rpctl/rpctl/storage"
)

// allocationHomes maps consumer/class to the names of the providers that
// hold it.
func allocationHomes(t *testing.T, db string) map[string][]string {
	t.Helper()
	p, err := storage.Open(context.Background(), dsn.SQLiteFile(db), storage.RolePlacement, "")
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var rows []struct {
		Key  string `db:"k"`
		Name string `db:"name"`
	}
	if err := p.SelectContext(context.Background(), &rows, `SELECT a.consumer_id || '/' || rc.name AS k, rp.name FROM allocations a
		JOIN resource_providers rp ON rp.id = a.resource_provider_id JOIN resource_classes rc ON rc.id = a.resource_class_id ORDER BY rp.name`); err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, r := range rows {
		out[r.Key] = append(out[r.Key], r.Name)
	}
	return out
}

// dryRunThenRun runs migrate inventory with args as a dry run and then for
// real, and compares the allocations the dry run says it moves and the
// nodes whose switch it says it refuses with what the run then did. It
// returns the numbers of moves and of refused nodes.
func dryRunThenRun(t *testing.T, db string, args ...string) (int, int) {
	t.Helper()
	out, errOut, dryCode := cmdtest.Rpctl(t, append([]string{"--db", db, "-f", "json", "migrate", "inventory", "--dry-run"}, args...)...)
	if dryCode != 0 && dryCode != 2 {
		t.Fatalf("%v --dry-run: exit %d: %s", args, dryCode, errOut)
	}
	var rows []map[string]any
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("%v --dry-run -f json: %v", args, err)
	}
	var listed, wouldRefuse []string
	for _, r := range rows {
		switch r["action"] {
		case "move allocation":
			consumer := strings.Fields(r["before"].(string))[1]
			_, to, _ := strings.Cut(r["after"].(string), " on ")
			listed = append(listed, consumer+"/"+r["resource_class"].(string)+": "+r["provider"].(string)+" -> "+to)
		case "skip (layout switch refused)":
			wouldRefuse = append(wouldRefuse, r["provider"].(string))
		}
	}
	before := allocationHomes(t, db)
	_, errOut, code := cmdtest.Rpctl(t, append([]string{"--db", db, "migrate", "inventory"}, args...)...)
	if code != 0 && (code != 2 || len(wouldRefuse) == 0) {
		t.Fatalf("%v: exit %d: %s", args, code, errOut)
	}
	// The dry run exits as the run does: 2 when it refuses switches.
	if code != dryCode {
		t.Errorf("%v: the run exits %d, its dry run %d", args, code, dryCode)
	}
	var refused []string
	for _, l := range strings.Split(errOut, "\n") {
		// The runner's "Skipped" lines (the summary lists them again).
		if strings.HasPrefix(l, "Skipped ") && strings.Contains(l, "layout switch refused: node ") {
			host, _, _ := strings.Cut(strings.SplitN(l, "layout switch refused: node ", 2)[1], ":")
			refused = append(refused, host)
		}
	}
	after := allocationHomes(t, db)
	var made []string
	for k, from := range before {
		to := after[k]
		if slices.Equal(from, to) {
			continue
		}
		if len(from) != 1 || len(to) != 1 {
			t.Fatalf("%v: %s was on %v, now on %v", args, k, from, to)
		}
		made = append(made, k+": "+from[0]+" -> "+to[0])
	}
	for _, l := range [][]string{listed, made, wouldRefuse, refused} {
		slices.Sort(l)
	}
	if len(made) == 0 || !slices.Equal(listed, made) {
		t.Errorf("%v: the dry run listed %d moves, the run made %d:\nlisted %q\nmade   %q", args, len(listed), len(made), listed, made)
	}
	if !slices.Equal(wouldRefuse, refused) {
		t.Errorf("%v: the dry run would refuse %q, the run refused %q", args, wouldRefuse, refused)
	}
	return len(made), len(refused)
}

// flatSampleCloud is sample cloud seed 3 (20 nodes) after migrate all.
func flatSampleCloud(t *testing.T) string {
	db := filepath.Join(t.TempDir(), "rpctl.db")
	if _, errOut, code := cmdtest.Rpctl(t, "--db", db, "sample-cloud", "--seed", "3", "--nodes", "20"); code != 0 {
		t.Fatalf("sample-cloud: %s", errOut)
	}
	if _, errOut, code := cmdtest.Rpctl(t, "--db", db, "migrate", "all"); code != 0 {
		t.Fatalf("migrate all: %s", errOut)
	}
	return db
}

// migrate inventory --dry-run lists the allocations a layout switch moves:
// at every step of flat → nested → flat+shared → nested+shared → flat, the
// moves it lists (consumer, class, from, to) are exactly those the run
// then makes.
func TestMigrateInventoryDryRunListsMoves(t *testing.T) {
	db := flatSampleCloud(t)
	for _, name := range []string{"nested", "flat+shared", "nested+shared", "flat"} {
		n, _ := dryRunThenRun(t, db, layoutFlags[name]...)
		t.Logf("%s: %d allocations moved, as listed", name, n)
	}
}

// A pool with room for some of the nodes' DISK_GB only: the dry run counts
// the moves of the nodes before a node against the pool's room, as the run
// does, so it refuses the same nodes and lists the same moves (SQLite: one
// writer, nodes in plan order).
func TestMigrateInventoryDryRunPoolRoom(t *testing.T) {
	db := flatSampleCloud(t)
	// 0.1 of the largest node's disk holds about half of the cloud's
	// DISK_GB allocations.
	if moved, refused := dryRunThenRun(t, db, "--shared-storage", "ceph=*", "--disk-allocation-ratio", "0.1"); refused == 0 {
		t.Errorf("every node fit the pool (%d allocations moved): the test needs a smaller ratio", moved)
	}
}
