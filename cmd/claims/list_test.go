package claims_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rpctl/rpctl/cmd/internal/cmdtest"
	"github.com/rpctl/rpctl/internal/nova"
	"github.com/rpctl/rpctl/storage/celldb"
	"github.com/rpctl/rpctl/storage/claimsnap"
)

func TestClaimsList(t *testing.T) {
	c := newSQLiteCloud(t)
	deleted := liveInstance(2, "1")
	deleted.Deleted, deleted.VMState = 2, "deleted"
	c.instances(t, liveInstance(1, "1"), deleted, liveInstance(3, "2"), liveInstance(4, "2"))
	created := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := celldb.InsertCellRows(context.Background(), c.db, nova.CellRows{Migrations: []nova.Migration{
		{ID: 1, UUID: cu(101), CreatedAt: &created, SourceCompute: "host1", SourceNode: "node1", DestCompute: "host2", DestNode: "node2",
			Status: "finished", InstanceUUID: cu(4), MigrationType: "resize"},
	}}); err != nil {
		t.Fatal(err)
	}
	std := map[string]int{"VCPU": 1}
	on1 := map[int64]map[string]int{1: std}
	c.alloc(t, cu(1), time.Hour, on1)
	c.alloc(t, cu(2), time.Hour, on1)
	c.alloc(t, cu(3), time.Hour, on1)
	c.alloc(t, cu(101), time.Hour, on1)
	c.alloc(t, cu(4), time.Hour, map[int64]map[string]int{2: std})
	c.alloc(t, cu(900), time.Minute, on1)
	type row struct {
		Consumer     string `json:"consumer"`
		ConsumerType string `json:"nova_type"`
		Host         string `json:"host"`
		Nova         string `json:"nova"`
		Orphan       bool   `json:"orphan"`
	}
	list := func(args ...string) []row {
		t.Helper()
		out, errOut, code := cmdtest.Rpctl(t, append(append(c.args, "claims", "list", "-f", "json"), args...)...)
		if code != 0 {
			t.Fatalf("list %v: exit %d: %s", args, code, errOut)
		}
		var rows []row
		if err := json.Unmarshal([]byte(out), &rows); err != nil {
			t.Fatal(err)
		}
		// issue 39: Nova's view is nova_type; consumer_type is Placement's
		// field (allocation show), which claims list does not print.
		if strings.Contains(out, `"consumer_type"`) {
			t.Errorf("list %v prints consumer_type: %s", args, out)
		}
		return rows
	}
	want := []row{
		{cu(1), "instance", "host1/node1", "active on this node", false},
		{cu(2), "instance", "host1/node1", "deleted", true},
		{cu(3), "instance", "host1/node1", "on another node", true},
		{cu(4), "instance", "host2/node2", "migrating", false},
		{cu(101), "migration", "host1/node1", "migrating", false},
		{cu(900), "unknown", "host1/node1", "unknown", true}, // an orphan: no expiry by default, as claims audit
	}
	got := list()
	if len(got) != len(want) {
		t.Fatalf("list: %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("row %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
	count := func(args ...string) int { return len(list(args...)) }
	for _, tc := range []struct {
		args []string
		n    int
	}{
		{[]string{"--orphans"}, 3},
		{[]string{"--orphans", "--expiry", "300s"}, 2},
		{[]string{"--host", "node2"}, 1},
		{[]string{"--host", "host1"}, 5},
		{[]string{"--provider", "node2"}, 1},
		{[]string{"--provider", cn2UUID}, 1},
		{[]string{"--consumer", cu(3)}, 1},
		{[]string{"--project", "p1"}, 6},
		{[]string{"--project", "p2"}, 0},
	} {
		if n := count(tc.args...); n != tc.n {
			t.Errorf("list %v: %d rows, want %d", tc.args, n, tc.n)
		}
	}
	// The snapshot marks the moving instance's claim on the destination.
	snap := filepath.Join(t.TempDir(), "snap.db")
	if _, errOut, code := cmdtest.Rpctl(t, append(c.args, "claims", "snapshot", "--out", snap)...); code != 0 {
		t.Fatalf("snapshot: %s", errOut)
	}
	claimsIn, _, err := claimsnap.Read(context.Background(), snap)
	if err != nil {
		t.Fatal(err)
	}
	for _, cl := range claimsIn {
		if want := cl.InstanceUUID == cu(4); cl.ResizeTarget != want {
			t.Errorf("snapshot claim %s on %s: resize_target %v, want %v", cl.InstanceUUID, cl.Node, cl.ResizeTarget, want)
		}
		if cl.InstanceUUID == cu(1) && (cl.Host != "host1" || cl.Node != "node1" || cl.ProviderUUID != cn1UUID || cl.VCPUs != 1) {
			t.Errorf("snapshot claim of %s: %+v", cu(1), cl)
		}
	}
	if len(claimsIn) != 6 {
		t.Errorf("snapshot holds %d claims, want 6", len(claimsIn))
	}
	if _, _, code := cmdtest.Rpctl(t, append(c.args, "claims", "list", "--expiry", "-1s")...); code != 127 {
		t.Errorf("negative --expiry: exit %d, want 127", code)
	}
	// issue 21: a typo in --consumer is bad input, as the help says, not
	// an empty list.
	if _, errOut, code := cmdtest.Rpctl(t, append(c.args, "claims", "list", "--consumer", "bad")...); code != 127 || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, `--consumer "bad"`) {
		t.Errorf("--consumer bad: exit %d, stderr %q; want 127 naming it", code, errOut)
	}
}
