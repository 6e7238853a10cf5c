package celldb

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/rpctl/rpctl/internal/dsn"
	"github.com/rpctl/rpctl/internal/nova"
	"github.com/rpctl/rpctl/internal/testdb"
	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/apidb"
	"github.com/rpctl/rpctl/storage/internal/sqlutil"
	"github.com/rpctl/rpctl/storage/schema"
)

func openSQLiteCell(t *testing.T) *storage.DB {
	t.Helper()
	ctx := context.Background()
	db, err := storage.Open(ctx, dsn.SQLiteFile(filepath.Join(t.TempDir(), "rpctl.db")), storage.RoleCell, "cell1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := schema.Init(ctx, db, schema.PartCell, schema.PartAPI); err != nil {
		t.Fatal(err)
	}
	return db
}

func openMySQLCell(t *testing.T) *storage.DB {
	t.Helper()
	m := testdb.NewMySQL(t)
	ctx := context.Background()
	target, err := dsn.Parse(m.DSN)
	if err != nil {
		t.Fatal(err)
	}
	db, err := storage.Open(ctx, target, storage.RoleCell, "cell1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := schema.Init(ctx, db, schema.PartCell, schema.PartAPI); err != nil {
		t.Fatal(err)
	}
	return db
}

func sp(s string) *string   { return &s }
func ip(v int64) *int64     { return &v }
func fp(v float64) *float64 { return &v }

// sampleNodes covers NULL and set values of every nullable column, ratios
// that float32 cannot hold exactly, and a soft-deleted row.
func sampleNodes() ([]nova.Service, []nova.ComputeNode) {
	created := time.Date(2021, 5, 4, 3, 2, 1, 0, time.UTC)
	deletedAt := time.Date(2022, 1, 2, 3, 4, 5, 0, time.UTC)
	svcs := []nova.Service{
		{ID: 1, UUID: sp("2b1f7d5c-2d55-4f44-8c43-0d5a2c3a7e01"), Host: sp("cmp1"), Binary: sp("nova-compute"), Topic: sp("compute"), ReportCount: 7, Version: 64, CreatedAt: &created},
		{ID: 2, Host: sp("ctl1"), Binary: sp("nova-osapi_compute"), Version: 64, Disabled: true, DisabledReason: sp("x")},
	}
	nodes := []nova.ComputeNode{
		{ID: 1, CreatedAt: &created, ServiceID: ip(1), Host: sp("cmp1"), HypervisorHostname: sp("cmp1.example.org"),
			VCPUs: 64, MemoryMB: 262144, LocalGB: 1788, VCPUsUsed: 4, MemoryMBUsed: 8704, LocalGBUsed: 80,
			HypervisorType: "QEMU", HypervisorVersion: 6002000, CPUInfo: `{"arch": "x86_64"}`,
			DiskAvailableLeast: ip(1500), FreeRAMMB: ip(253440), FreeDiskGB: ip(1708), CurrentWorkload: ip(0), RunningVMs: ip(1),
			HostIP: sp("10.0.0.1"), SupportedInstances: sp(`[["x86_64", "kvm", "hvm"]]`), PCIStats: sp("[]"), Metrics: sp("[]"),
			ExtraResources: sp(`{"CUSTOM_FPGA": 2}`), Stats: sp(`{"num_instances": "1"}`), NUMATopology: sp(`{"cells": []}`),
			RAMAllocationRatio: fp(1.2), CPUAllocationRatio: fp(16), DiskAllocationRatio: fp(0), Mapped: ip(1)},
		{ID: 2, ServiceID: ip(1), Host: sp("cmp1"), HypervisorHostname: sp("cmp1.example.org"), UUID: sp("4c1f2d3e-1111-4f44-8c43-0d5a2c3a7e02"),
			VCPUs: 8, MemoryMB: 1024, LocalGB: 10, HypervisorType: "QEMU", CPUInfo: "{}",
			Deleted: 2, DeletedAt: &deletedAt, UpdatedAt: &deletedAt},
		{ID: 3, VCPUs: 1, MemoryMB: 2, LocalGB: 3, HypervisorType: "ironic", CPUInfo: "", CPUAllocationRatio: fp(1.1)},
	}
	return svcs, nodes
}

// onSampleCells runs fn on each database (SQLite, MariaDB) holding the
// sampleNodes rows, which it gets to compare with.
func onSampleCells(t *testing.T, fn func(t *testing.T, ctx context.Context, db *storage.DB, nodes []nova.ComputeNode)) {
	for _, tc := range []struct {
		name string
		open func(*testing.T) *storage.DB
	}{
		{"sqlite", openSQLiteCell},
		{"mariadb", openMySQLCell},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			db := tc.open(t)
			svcs, nodes := sampleNodes()
			if err := InsertCellRows(ctx, db, nova.CellRows{Services: svcs, ComputeNodes: nodes}); err != nil {
				t.Fatal(err)
			}
			fn(t, ctx, db, nodes)
		})
	}
}

func TestComputeNodesRoundTrip(t *testing.T) {
	onSampleCells(t, func(t *testing.T, ctx context.Context, db *storage.DB, nodes []nova.ComputeNode) {
		got, err := ListComputeNodes(ctx, db, true)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, nodes) {
			for i := range got {
				if !reflect.DeepEqual(got[i], nodes[i]) {
					t.Errorf("node %d:\n got %+v\nwant %+v", nodes[i].ID, got[i], nodes[i])
				}
			}
			t.Fatalf("round trip differs (%d rows read, %d written)", len(got), len(nodes))
		}
		live, err := ListComputeNodes(ctx, db, false)
		if err != nil {
			t.Fatal(err)
		}
		if len(live) != 2 || live[0].ID != 1 || live[1].ID != 3 {
			t.Fatalf("live nodes: got %d rows %v", len(live), live)
		}
		for _, inc := range []bool{true, false} {
			n, err := CountComputeNodes(ctx, db, inc)
			if err != nil || n != map[bool]int{true: 3, false: 2}[inc] {
				t.Errorf("CountComputeNodes(includeDeleted=%v) = %d, %v", inc, n, err)
			}
		}
		// A second insert of the same ids must fail and leave nothing
		// half-written: the transaction rolls back.
		if err := InsertCellRows(ctx, db, nova.CellRows{ComputeNodes: []nova.ComputeNode{{ID: 4, HypervisorType: "QEMU"}, nodes[0]}}); err == nil {
			t.Fatal("duplicate id: no error")
		}
		if n, _ := CountComputeNodes(ctx, db, true); n != 3 {
			t.Fatalf("after failed insert: %d rows, want 3", n)
		}
	})
}

func TestInsertBatches(t *testing.T) {
	// More rows than one batch, and a partial last batch, through the
	// prepared full-batch statement.
	ctx := context.Background()
	db := openSQLiteCell(t)
	var nodes []nova.ComputeNode
	for i := int64(1); i <= 2*sqlutil.MaxBatchRows+7; i++ {
		nodes = append(nodes, nova.ComputeNode{ID: i, Host: sp("h"), HypervisorHostname: sp(string(rune('a' + i%26))),
			HypervisorType: "QEMU", CPUInfo: "{}", VCPUs: i})
		nodes[len(nodes)-1].Deleted = map[bool]int64{true: i}[i > 26]
	}
	if err := InsertComputeNodes(ctx, db, nodes); err != nil {
		t.Fatal(err)
	}
	got, err := ListComputeNodes(ctx, db, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(nodes) || got[len(got)-1].VCPUs != int64(len(nodes)) {
		t.Fatalf("got %d rows", len(got))
	}
}

func TestAPIRows(t *testing.T) {
	ctx := context.Background()
	db := openSQLiteCell(t)
	api := &storage.DB{DB: db.DB, Role: storage.RoleAPI, Target: db.Target}
	r := nova.APIRows{
		CellMappings: []nova.CellMapping{{ID: 1, UUID: nova.Cell0UUID, Name: "cell0", DatabaseConnection: "sqlite:///x_cell0"},
			{ID: 2, UUID: "9b0c3a55-2c1e-4b8e-9b7f-2f6f3f0e1a11", Name: "cell1", DatabaseConnection: "sqlite:///x"}},
		HostMappings: []nova.HostMapping{{ID: 1, CellID: 2, Host: "cmp1"}},
		Flavors:      []nova.Flavor{{ID: 1, FlavorID: "1", Name: "m1.tiny", VCPUs: 1, MemoryMB: 512, RootGB: 1, ExtraSpecs: map[string]string{"b": "2", "a": "1"}}},
	}
	if err := apidb.InsertAPIRows(ctx, api, r); err != nil {
		t.Fatal(err)
	}
	cells, err := apidb.ListCellMappings(ctx, api)
	if err != nil || len(cells) != 2 || cells[1].Name != "cell1" {
		t.Fatalf("cells %v, %v", cells, err)
	}
	if n, _ := sqlutil.CountRows(ctx, api, "flavor_extra_specs"); n != 2 {
		t.Fatalf("extra specs: %d", n)
	}
	r.CellMappings = nil
	r.Replace = true
	if err := apidb.InsertAPIRows(ctx, api, r); err != nil {
		t.Fatalf("replace: %v", err)
	}
}

func TestCellConnectionURL(t *testing.T) {
	target, err := dsn.Parse("mysql+pymysql://nova:p%40ss@db.example:3307/nova?charset=utf8")
	if err != nil {
		t.Fatal(err)
	}
	db := &storage.DB{Role: storage.RoleCell, Target: target}
	for cell0, want := range map[bool]string{
		false: "mysql+pymysql://nova:p%40ss@db.example:3307/nova?charset=utf8",
		true:  "mysql+pymysql://nova:p%40ss@db.example:3307/nova_cell0?charset=utf8",
	} {
		got, err := storage.CellConnectionURL(db, cell0)
		if err != nil || got != want {
			t.Errorf("cell0=%v: got %q, %v; want %q", cell0, got, err, want)
		}
		back, err := dsn.Parse(got)
		if err != nil || back.Driver != dsn.MySQL {
			t.Errorf("%q does not parse back: %v", got, err)
		}
	}
	lite := &storage.DB{Role: storage.RoleCell, Target: dsn.SQLiteFile("/var/lib/rpctl.db")}
	if got, _ := storage.CellConnectionURL(lite, false); got != "sqlite:////var/lib/rpctl.db" {
		t.Errorf("sqlite: %q", got)
	}
}
