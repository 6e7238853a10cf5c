package migrate_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/rpctl/rpctl/internal/dsn"
	"github.com/rpctl/rpctl/internal/nova"
	"github.com/rpctl/rpctl/internal/release"
	"github.com/rpctl/rpctl/migrate"
	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/celldb"
	"github.com/rpctl/rpctl/storage/schema"
	"github.com/rpctl/rpctl/storage/stores"
)

// TestInstanceComputeIDsSQLite runs populate_instance_compute_id on a
// 2025.1 cell schema: an instance gets the lowest id among the nodes of
// its host and node, deleted ones included (read_deleted='yes'); deleted
// instances too; one whose node is gone or that has no host is found at
// every batch and never done; one on a node without a uuid is skipped as a
// bad row naming the node, the others migrated.
func TestInstanceComputeIDsSQLite(t *testing.T) {
	ctx := context.Background()
	db, err := storage.Open(ctx, dsn.SQLiteFile(filepath.Join(t.TempDir(), "cell.db")), storage.RoleCell, "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := schema.InitRelease(ctx, db, release.R2025_1, schema.PartCell); err != nil {
		t.Fatal(err)
	}
	s := func(v string) *string { return &v }
	u := func(i int) *string { return s("00000000-0000-4000-8000-00000000000" + string(rune('0'+i))) }
	nodes := []nova.ComputeNode{
		{ID: 1, Host: s("h1"), HypervisorHostname: s("n1"), UUID: u(1), Deleted: 1},
		{ID: 2, Host: s("h1"), HypervisorHostname: s("n1"), UUID: u(2)},
		{ID: 3, Host: s("h2"), HypervisorHostname: s("n2"), UUID: u(3)},
		{ID: 4, Host: s("h3"), HypervisorHostname: s("n3")}, // NULL uuid
	}
	for i := range nodes {
		nodes[i].HypervisorType, nodes[i].CPUInfo = "QEMU", "{}"
	}
	in := func(id int64, host, node *string, deleted int64) nova.Instance {
		return nova.Instance{ID: id, UUID: "10000000-0000-4000-8000-00000000000" + string(rune('0'+id)), Host: host, Node: node, Deleted: deleted, VMState: "active", InstanceTypeID: 1}
	}
	insts := []nova.Instance{
		in(1, s("h1"), s("n1"), 0), // node 1 (deleted, lowest id)
		in(2, s("h2"), s("n2"), 0),
		in(3, s("h2"), s("n2"), 3), // a deleted instance
		in(4, nil, nil, 0),         // never scheduled
		in(5, s("gone"), s("gone"), 0),
		in(6, s("h3"), s("n3"), 0), // node without a uuid
	}
	if err := celldb.InsertCellRows(ctx, db, nova.CellRows{ComputeNodes: nodes, Instances: insts, Shape: nova.RowShape{ComputeIDs: true}}); err != nil {
		t.Fatal(err)
	}
	m := &migrate.InstanceComputeIDs{Cells: stores.ComputeIDCells([]*storage.DB{db})}
	found, done, err := m.Run(ctx, 50)
	var rows migrate.RowErrors
	if !errors.As(err, &rows) || len(rows) != 1 || rows[0].What != "instance 10000000-0000-4000-8000-000000000006" {
		t.Fatalf("want one skipped instance (6), got %v", err)
	}
	if found != 6 || done != 3 {
		t.Errorf("found %d done %d, want 6 and 3", found, done)
	}
	got := map[int64]*int64{}
	r, err := db.QueryContext(ctx, `SELECT id, compute_id FROM instances`)
	if err != nil {
		t.Fatal(err)
	}
	for r.Next() {
		var id int64
		var cid *int64
		if err := r.Scan(&id, &cid); err != nil {
			t.Fatal(err)
		}
		got[id] = cid
	}
	r.Close()
	want := map[int64]int64{1: 1, 2: 3, 3: 3}
	for id, cid := range got {
		w, ok := want[id]
		if ok != (cid != nil) || (ok && *cid != w) {
			t.Errorf("instance %d: compute_id %v, want %v (set: %v)", id, cid, w, ok)
		}
	}
	// Again: the three left are found, none done; the runner stops.
	sum, err := (&migrate.Runner{Migrations: []migrate.Migration{m}}).Run(ctx, 0, true)
	if err != nil || sum.Rows[0] != (migrate.Row{Migration: migrate.InstanceComputeIDName, TotalNeeded: 3}) || sum.Exit != 2 {
		t.Errorf("second run: %+v %v", sum, err)
	}
}
