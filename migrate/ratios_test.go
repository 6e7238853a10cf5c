package migrate_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/rpctl/rpctl/internal/config"
	"github.com/rpctl/rpctl/internal/dsn"
	"github.com/rpctl/rpctl/internal/nova"
	"github.com/rpctl/rpctl/migrate"
	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/celldb"
	"github.com/rpctl/rpctl/storage/schema"
)

// ratioCellDB opens a fresh cell database with rpctl's schema: SQLite, or
// the test MariaDB server.
func ratioCellDB(t testing.TB, mysql bool, name string) *storage.DB {
	t.Helper()
	if mysql {
		db, _ := mysqlDB(t, schema.PartCell, storage.RoleCell, name)
		return db
	}
	ctx := context.Background()
	db, err := storage.Open(ctx, dsn.SQLiteFile(filepath.Join(t.TempDir(), "cell.db")), storage.RoleCell, name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := schema.Init(ctx, db, schema.PartCell); err != nil {
		t.Fatal(err)
	}
	return db
}

// ratioNode is a compute node row with the given ratios (cpu, ram, disk).
func ratioNode(id int64, cpu, ram, disk *float64) nova.ComputeNode {
	host := fmt.Sprintf("compute%d", id)
	return nova.ComputeNode{ID: id, Host: &host, HypervisorHostname: &host, VCPUs: 8, MemoryMB: 1024, LocalGB: 10,
		HypervisorType: "QEMU", CPUInfo: "{}", CPUAllocationRatio: cpu, RAMAllocationRatio: ram, DiskAllocationRatio: disk}
}

func ratioDump(t *testing.T, db *storage.DB) map[int64][3]string {
	t.Helper()
	nodes, err := celldb.ListComputeNodes(context.Background(), db, true)
	if err != nil {
		t.Fatal(err)
	}
	out := map[int64][3]string{}
	for _, n := range nodes {
		out[n.ID] = [3]string{migrate.FormatRatio(n.CPUAllocationRatio), migrate.FormatRatio(n.RAMAllocationRatio), migrate.FormatRatio(n.DiskAllocationRatio)}
	}
	return out
}

func ratioBothDBs(t *testing.T, fn func(t *testing.T, mysql bool)) {
	t.Run("sqlite", func(t *testing.T) { fn(t, false) })
	t.Run("mariadb", func(t *testing.T) { fn(t, true) })
}

func TestEmptyRatiosMigration(t *testing.T) {
	ratioBothDBs(t, func(t *testing.T, mysql bool) {
		ctx := context.Background()
		db := ratioCellDB(t, mysql, "cell1")
		deleted := ratioNode(5, nil, nil, nil)
		deleted.Deleted = 5
		rows := []nova.ComputeNode{
			ratioNode(1, ratioFP(0), ratioFP(0), ratioFP(0)),
			ratioNode(2, nil, ratioFP(1.1), nil),
			ratioNode(3, ratioFP(4), ratioFP(1), ratioFP(1)), // nothing to do
			ratioNode(4, ratioFP(-1), nil, ratioFP(0.7)),
			deleted,
		}
		if err := celldb.InsertComputeNodes(ctx, db, rows); err != nil {
			t.Fatal(err)
		}
		r := config.DefaultOptions().Ratios
		r.CPU = ratioFP(0) // explicit 0.0: falls back to initial, as in Nova 26
		r.RAM = ratioFP(1.3)
		at := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
		m := &migrate.EmptyRatios{Cells: cellStores(db), Ratios: r, Now: func() time.Time { return at }}
		run := &migrate.Runner{Migrations: []migrate.Migration{m}, Batch: 2}
		sum, err := run.Run(ctx, 0, true)
		if err != nil {
			t.Fatal(err)
		}
		if sum.Exit != 0 || len(sum.Rows) != 1 || sum.Rows[0] != (migrate.Row{migrate.EmptyRatioName, 3, 3}) {
			t.Fatalf("summary = %+v", sum)
		}
		want := map[int64][3]string{
			1: {"16.0", "1.3", "1.0"},
			2: {"16.0", "1.1", "1.0"},
			3: {"4.0", "1.0", "1.0"},
			4: {"-1.0", "1.3", "0.7"},
			5: {"NULL", "NULL", "NULL"},
		}
		got := ratioDump(t, db)
		for id, w := range want {
			if got[id] != w {
				t.Errorf("node %d: ratios (cpu, ram, disk) = %v, want %v", id, got[id], w)
			}
		}
		nodes, _ := celldb.ListComputeNodes(ctx, db, true)
		for _, n := range nodes {
			touched := n.UpdatedAt != nil && n.UpdatedAt.Equal(at)
			if touched != (n.ID == 1 || n.ID == 2 || n.ID == 4) {
				t.Errorf("node %d: updated_at = %v", n.ID, n.UpdatedAt)
			}
		}
		// Idempotent: a second run finds nothing.
		sum, err = run.Run(ctx, 0, true)
		if err != nil || sum.Exit != 0 || sum.Rows[0] != (migrate.Row{migrate.EmptyRatioName, 0, 0}) {
			t.Fatalf("second run: %+v, %v", sum, err)
		}
	})
}

func TestEmptyRatiosMaxCountAndCells(t *testing.T) {
	ctx := context.Background()
	c1, c2 := ratioCellDB(t, false, "cell1"), ratioCellDB(t, false, "cell2")
	for _, c := range []*storage.DB{c1, c2} {
		if err := celldb.InsertComputeNodes(ctx, c, []nova.ComputeNode{ratioNode(1, nil, nil, nil), ratioNode(2, nil, nil, nil)}); err != nil {
			t.Fatal(err)
		}
	}
	mk := func() *migrate.EmptyRatios {
		return &migrate.EmptyRatios{Cells: cellStores(c1, c2), Ratios: config.DefaultOptions().Ratios}
	}
	// One batch of 3 spans the cells: exit 1, more may remain.
	sum, err := (&migrate.Runner{Migrations: []migrate.Migration{mk()}}).Run(ctx, 3, false)
	if err != nil || sum.Exit != 1 || sum.Rows[0] != (migrate.Row{migrate.EmptyRatioName, 3, 3}) {
		t.Fatalf("--max-count 3: %+v, %v", sum, err)
	}
	if got := ratioDump(t, c2); got[1][0] != "16.0" || got[2][0] != "NULL" {
		t.Fatalf("cell2 after 3: %v", got)
	}
	sum, err = (&migrate.Runner{Migrations: []migrate.Migration{mk()}}).Run(ctx, 3, false)
	if err != nil || sum.Exit != 1 || sum.Rows[0] != (migrate.Row{migrate.EmptyRatioName, 1, 1}) {
		t.Fatalf("second --max-count 3: %+v, %v", sum, err)
	}
	sum, err = (&migrate.Runner{Migrations: []migrate.Migration{mk()}}).Run(ctx, 3, false)
	if err != nil || sum.Exit != 0 || sum.Rows[0] != (migrate.Row{migrate.EmptyRatioName, 0, 0}) {
		t.Fatalf("third --max-count 3: %+v, %v", sum, err)
	}
}

func TestEmptyRatiosSkipsRowsItCannotFix(t *testing.T) {
	ctx := context.Background()
	db := ratioCellDB(t, false, "cell1")
	var rows []nova.ComputeNode
	// Rows 1-3 need a CPU ratio that initial 0.0 cannot give; 4-6 only RAM.
	for id := int64(1); id <= 6; id++ {
		if id <= 3 {
			rows = append(rows, ratioNode(id, nil, ratioFP(1), ratioFP(1)))
		} else {
			rows = append(rows, ratioNode(id, ratioFP(2), ratioFP(0), ratioFP(1)))
		}
	}
	if err := celldb.InsertComputeNodes(ctx, db, rows); err != nil {
		t.Fatal(err)
	}
	r := config.DefaultOptions().Ratios
	r.InitialCPU = 0
	// A batch of 2 is filled by bad rows first: the cursor must page past
	// them rather than stop or loop.
	sum, err := (&migrate.Runner{Migrations: []migrate.Migration{&migrate.EmptyRatios{Cells: cellStores(db), Ratios: r}}, Batch: 2}).Run(ctx, 0, true)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Exit != 2 || len(sum.RowErrors) != 3 || sum.Rows[0] != (migrate.Row{migrate.EmptyRatioName, 6, 3}) {
		t.Fatalf("summary = %+v", sum)
	}
	if sum.RowErrors[0].ID != 1 || sum.RowErrors[0].Cell != "cell1" {
		t.Errorf("first row error = %v", sum.RowErrors[0])
	}
	got := ratioDump(t, db)
	for id := int64(1); id <= 6; id++ {
		want := [3]string{"2.0", "1.5", "1.0"}
		if id <= 3 {
			want = [3]string{"NULL", "1.0", "1.0"}
		}
		if got[id] != want {
			t.Errorf("node %d = %v, want %v", id, got[id], want)
		}
	}
}

// TestFillKeepsConcurrentFix: a ratio a nova-compute set between the select
// and the update wins, per column.
func TestFillKeepsConcurrentFix(t *testing.T) {
	ratioBothDBs(t, func(t *testing.T, mysql bool) {
		ctx := context.Background()
		db := ratioCellDB(t, mysql, "cell1")
		if err := celldb.InsertComputeNodes(ctx, db, []nova.ComputeNode{ratioNode(1, nil, nil, ratioFP(0)), ratioNode(2, nil, ratioFP(1), ratioFP(1))}); err != nil {
			t.Fatal(err)
		}
		nodes, err := celldb.ListEmptyRatioNodes(ctx, db, 0, 10)
		if err != nil || len(nodes) != 2 {
			t.Fatalf("list: %v %v", nodes, err)
		}
		if _, err := db.ExecContext(ctx, "UPDATE compute_nodes SET cpu_allocation_ratio = 3 WHERE id = 1"); err != nil {
			t.Fatal(err)
		}
		if _, err := db.ExecContext(ctx, "UPDATE compute_nodes SET cpu_allocation_ratio = 5 WHERE id = 2"); err != nil {
			t.Fatal(err)
		}
		n, err := celldb.FillEmptyRatios(ctx, db, []int64{1, 2}, migrate.RatioFill{CPU: ratioFP(16), RAM: ratioFP(1.5), Disk: ratioFP(1)}, time.Now())
		if err != nil || n != 1 {
			t.Fatalf("FillEmptyRatios = %d, %v; want 1 row", n, err)
		}
		got := ratioDump(t, db)
		if got[1] != [3]string{"3.0", "1.5", "1.0"} || got[2] != [3]string{"5.0", "1.0", "1.0"} {
			t.Errorf("ratios = %v", got)
		}
	})
}

func TestEmptyRatiosDeadDB(t *testing.T) {
	db := ratioCellDB(t, false, "cell1")
	db.Close()
	_, _, err := (&migrate.EmptyRatios{Cells: cellStores(db), Ratios: config.DefaultOptions().Ratios}).Run(context.Background(), 50)
	var rows migrate.RowErrors
	if err == nil || errors.As(err, &rows) {
		t.Fatalf("err = %v, want a database error", err)
	}
}

func TestPlanEmptyRatios(t *testing.T) {
	ctx := context.Background()
	db := ratioCellDB(t, false, "cell1")
	if err := celldb.InsertComputeNodes(ctx, db, []nova.ComputeNode{ratioNode(1, nil, ratioFP(0), ratioFP(1)), ratioNode(2, ratioFP(1), ratioFP(1), nil), ratioNode(3, ratioFP(1), ratioFP(1), ratioFP(1))}); err != nil {
		t.Fatal(err)
	}
	r := config.DefaultOptions().Ratios
	r.Disk = ratioFP(2)
	changes, bad, err := migrate.PlanEmptyRatios(ctx, cellStores(db), r, 0)
	if err != nil || len(bad) != 0 {
		t.Fatal(err, bad)
	}
	var got []string
	for _, c := range changes {
		got = append(got, fmt.Sprintf("%d %s %s->%s %s", c.ID, c.Ratio, migrate.FormatRatio(c.Old), migrate.FormatRatio(&c.New), c.Option))
	}
	want := []string{
		"1 cpu_allocation_ratio NULL->16.0 initial_cpu_allocation_ratio",
		"1 ram_allocation_ratio 0.0->1.5 initial_ram_allocation_ratio",
		"2 disk_allocation_ratio NULL->2.0 disk_allocation_ratio",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("plan = %q, want %q", got, want)
	}
	if ch, _, _ := migrate.PlanEmptyRatios(ctx, cellStores(db), r, 1); len(ch) != 2 {
		t.Errorf("limit 1 row: %d changes, want the 2 of row 1", len(ch))
	}
	// A plan writes nothing.
	if got := ratioDump(t, db); got[1][0] != "NULL" {
		t.Errorf("plan wrote: %v", got)
	}
}
