package status_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/internal/config"
	"github.com/rpctl/rpctl/internal/dsn"
	"github.com/rpctl/rpctl/internal/nova"
	"github.com/rpctl/rpctl/internal/testdb"
	"github.com/rpctl/rpctl/status"
	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/apidb"
	"github.com/rpctl/rpctl/storage/celldb"
	"github.com/rpctl/rpctl/storage/schema"
	"github.com/rpctl/rpctl/storage/stores"
)

// fixture is one cell database and one Placement database, separate
// databases on the real MariaDB as in a deployment, created by rpctl init's
// schemas.
type fixture struct {
	t         testing.TB
	ctx       context.Context
	cell      *storage.DB
	placement *storage.DB
	env       *status.Env
	nextID    int64
}

func open(t testing.TB, m *testdb.MySQL, role storage.Role, name string) *storage.DB {
	t.Helper()
	tg, err := dsn.Parse(m.DSN)
	if err != nil {
		t.Fatal(err)
	}
	db, err := storage.Open(context.Background(), tg, role, name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	ctx := context.Background()
	cell := open(t, testdb.NewMySQL(t), storage.RoleCell, "cell1")
	placement := open(t, testdb.NewMySQL(t), storage.RolePlacement, "")
	if _, err := schema.Init(ctx, cell, schema.PartCell); err != nil {
		t.Fatal(err)
	}
	if _, err := schema.Init(ctx, placement, schema.PartPlacement); err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, ctx: ctx, cell: cell, placement: placement, nextID: 1}
	f.env = &status.Env{Cells: stores.StatusCells([]*storage.DB{cell}), Placement: stores.StatusPlacement(placement), Options: config.DefaultOptions()}
	return f
}

func sp(s string) *string   { return &s }
func fp(f float64) *float64 { return &f }
func uuidFor(host string) string {
	return fmt.Sprintf("%08x-0000-4000-8000-%012x", len(host), hash(host))
}

func hash(s string) uint64 {
	var h uint64 = 1469598103934665603
	for _, c := range []byte(s) {
		h = (h ^ uint64(c)) * 1099511628211
	}
	return h & 0xffffffffffff
}

type nodeOpt func(*nova.ComputeNode)

func noUUID(n *nova.ComputeNode)  { n.UUID = nil }
func deleted(n *nova.ComputeNode) { n.Deleted = n.ID }
func ratios(ram, cpu, disk *float64) nodeOpt {
	return func(n *nova.ComputeNode) {
		n.RAMAllocationRatio, n.CPUAllocationRatio, n.DiskAllocationRatio = ram, cpu, disk
	}
}

// node writes a live compute node with 16 vCPUs, 65536 MB and 1000 GB.
func (f *fixture) node(host string, opts ...nodeOpt) nova.ComputeNode {
	f.t.Helper()
	n := nova.ComputeNode{ID: f.nextID, Host: sp(host), HypervisorHostname: sp(host), UUID: sp(uuidFor(host)),
		VCPUs: 16, MemoryMB: 65536, LocalGB: 1000, HypervisorType: "QEMU", HypervisorVersion: 6002000, CPUInfo: "{}",
		RAMAllocationRatio: fp(1.5), CPUAllocationRatio: fp(16), DiskAllocationRatio: fp(1)}
	f.nextID++
	for _, o := range opts {
		o(&n)
	}
	if err := celldb.InsertComputeNodes(f.ctx, f.cell, []nova.ComputeNode{n}); err != nil {
		f.t.Fatal(err)
	}
	return n
}

func (f *fixture) service(host, binary string, version int64) {
	f.t.Helper()
	f.nextID++
	s := nova.Service{ID: f.nextID, Host: sp(host), Binary: sp(binary), Version: version}
	if err := celldb.InsertServices(f.ctx, f.cell, []nova.Service{s}); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) exec(db *storage.DB, q string, args ...any) {
	f.t.Helper()
	if _, err := db.ExecContext(f.ctx, q, args...); err != nil {
		f.t.Fatalf("%s: %v", q, err)
	}
}

type inv struct {
	class           string
	total, reserved int64
	allocationRatio float64
}

// provider writes a resource provider (a root unless parent is given) with
// inventories, and returns its id.
func (f *fixture) provider(uuid, name string, parent int64, invs ...inv) int64 {
	f.t.Helper()
	res, err := f.placement.ExecContext(f.ctx, `INSERT INTO resource_providers (uuid, name, generation) VALUES (?, ?, 1)`, uuid, name)
	if err != nil {
		f.t.Fatal(err)
	}
	id, _ := res.LastInsertId()
	root := id
	var par any
	if parent != 0 {
		root, par = parent, parent
	}
	f.exec(f.placement, `UPDATE resource_providers SET root_provider_id = ?, parent_provider_id = ? WHERE id = ?`, root, par, id)
	for _, i := range invs {
		f.exec(f.placement, `INSERT INTO inventories (resource_provider_id, resource_class_id, total, reserved, min_unit, max_unit, step_size, allocation_ratio)
			SELECT ?, id, ?, ?, 1, ?, 1, ? FROM resource_classes WHERE name = ?`, id, i.total, i.reserved, i.total, i.allocationRatio, i.class)
	}
	return id
}

// nodeProvider writes the provider `rpctl migrate inventory` would for n.
func (f *fixture) nodeProvider(n nova.ComputeNode) int64 {
	return f.provider(*n.UUID, *n.HypervisorHostname, 0,
		inv{"VCPU", n.VCPUs, 0, 16}, inv{"MEMORY_MB", n.MemoryMB, 512, 1.5}, inv{"DISK_GB", n.LocalGB, 0, 1})
}

func (f *fixture) allocate(rp int64, class, consumer string, used int64, withConsumer bool) {
	f.t.Helper()
	f.exec(f.placement, `INSERT INTO allocations (resource_provider_id, consumer_id, resource_class_id, used)
		SELECT ?, ?, id, ? FROM resource_classes WHERE name = ?`, rp, consumer, used, class)
	if withConsumer {
		f.exec(f.placement, `INSERT IGNORE INTO consumers (uuid, project_id, user_id, generation) VALUES (?, 1, 1, 1)`, consumer)
	}
}

func run(t *testing.T, f *fixture, check string) status.Result {
	t.Helper()
	checks, err := status.Select(status.Checks(f.env), []string{check})
	if err != nil {
		t.Fatal(err)
	}
	rep := status.Run(f.ctx, checks)
	if len(rep.Results) != 1 {
		t.Fatalf("%d results", len(rep.Results))
	}
	return rep.Results[0]
}

type scenario struct {
	name     string
	check    string
	setup    func(f *fixture)
	want     status.Code
	contains []string
	excludes []string
}

func runScenarios(t *testing.T, scenarios []scenario) {
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			f := newFixture(t)
			sc.setup(f)
			r := run(t, f, sc.check)
			if r.Crashed {
				t.Fatalf("check crashed: %s", r.Details)
			}
			if r.Code != sc.want {
				t.Errorf("%s: %s (%q), want %s", sc.check, r.Code, r.Details, sc.want)
			}
			for _, s := range sc.contains {
				if !strings.Contains(r.Details, s) {
					t.Errorf("details %q lack %q", r.Details, s)
				}
			}
			for _, s := range sc.excludes {
				if strings.Contains(r.Details, s) {
					t.Errorf("details %q mention %q", r.Details, s)
				}
			}
			if strings.Contains(r.Details, "rpctl-test-pw") {
				t.Errorf("details print the password: %q", r.Details)
			}
		})
	}
}

func TestCheckComputeNodeUUIDs(t *testing.T) {
	runScenarios(t, []scenario{
		{"pass", status.CheckComputeNodeUUIDs, func(f *fixture) {
			f.node("cmp1")
			f.node("old", noUUID, deleted) // deleted rows do not count
		}, status.Success, nil, nil},
		{"warn", status.CheckComputeNodeUUIDs, func(f *fixture) {
			f.node("cmp1")
			for i := 2; i <= 8; i++ {
				f.node(fmt.Sprintf("cmp%d", i), noUUID)
			}
		}, status.Warning, []string{"7 compute nodes have a NULL uuid", "cell1: cmp2, cmp3, cmp4, cmp5, cmp6 and 2 more", `Run "rpctl migrate inventory"`}, []string{"cmp1,"}},
		{"fail: missing table", status.CheckComputeNodeUUIDs, func(f *fixture) {
			f.exec(f.cell, "DROP TABLE pci_devices, compute_nodes") // pci_devices refers to it (Nova's schema)
		}, status.Failure, []string{`cell "cell1" database (rpctl:***@tcp(127.0.0.1:`, "compute_nodes' doesn't exist"}, nil},
	})
}

func TestCheckResourceProviders(t *testing.T) {
	runScenarios(t, []scenario{
		{"pass", status.CheckResourceProviders, func(f *fixture) {
			f.nodeProvider(f.node("cmp1"))
			f.node("cmp2", noUUID) // the UUID check's business
			f.node("gone", deleted)
		}, status.Success, nil, nil},
		{"warn", status.CheckResourceProviders, func(f *fixture) {
			f.nodeProvider(f.node("cmp1"))
			f.node("cmp2")
			n := f.node("cmp3")
			f.provider(*n.UUID, "cmp3", 0, inv{"VCPU", 16, 0, 16})
			ironic := f.node("ironic", func(n *nova.ComputeNode) { n.VCPUs, n.MemoryMB, n.LocalGB = 0, 0, 0 })
			f.provider(*ironic.UUID, "ironic", 0)
		}, status.Warning, []string{"1 compute node with a uuid has no resource provider (cell1: cmp2)",
			"1 resource provider has no inventory for a class their node has (cell1: cmp3 (MEMORY_MB, DISK_GB))", `Run "rpctl migrate inventory"`}, []string{"ironic", "cmp1"}},
		{"fail: no Placement database", status.CheckResourceProviders, func(f *fixture) {
			f.node("cmp1")
			f.env.Placement, f.env.PlacementErr = nil, fmt.Errorf("%w for Placement: give --placement-db URL", storage.ErrNoDatabase)
		}, status.Failure, []string{"Cannot run the check: no database configured for Placement"}, nil},
	})
}

func TestCheckInventoryDrift(t *testing.T) {
	runScenarios(t, []scenario{
		{"pass", status.CheckInventoryDrift, func(f *fixture) {
			f.nodeProvider(f.node("cmp1"))
			f.node("cmp2") // no provider: not drift
		}, status.Success, nil, nil},
		{"warn", status.CheckInventoryDrift, func(f *fixture) {
			n := f.node("cmp1")
			f.provider(*n.UUID, "cmp1", 0, inv{"VCPU", 32, 0, 16}, inv{"MEMORY_MB", 65536, 512, 1.5}, inv{"DISK_GB", 900, 0, 1})
		}, status.Warning, []string{"2 inventory totals disagree", "cmp1 VCPU legacy 16 Placement 32", "cmp1 DISK_GB legacy 1000 Placement 900"}, []string{"MEMORY_MB"}},
		{"fail: missing table", status.CheckInventoryDrift, func(f *fixture) {
			f.nodeProvider(f.node("cmp1"))
			f.exec(f.placement, "DROP TABLE inventories")
		}, status.Failure, []string{"Placement database (rpctl:***@tcp(127.0.0.1:", "inventories' doesn't exist"}, nil},
	})
}

func TestCheckAllocationRatios(t *testing.T) {
	zeroCPU := func(f *fixture) {
		f.env.Options.Ratios.CPU = fp(0)
		f.env.Options.Ratios.CPUSource = "/etc/nova/nova.conf:7"
	}
	runScenarios(t, []scenario{
		{"pass", status.CheckAllocationRatios, func(f *fixture) {
			f.node("cmp1")
			f.node("gone", deleted, ratios(nil, nil, nil))
			f.env.Options.Ratios.RAM = fp(1.0)
		}, status.Success, nil, nil},
		{"warn", status.CheckAllocationRatios, func(f *fixture) {
			f.node("cmp1")
			f.node("cmp2", ratios(nil, fp(16), fp(1)))
			f.node("cmp3", ratios(fp(1.5), fp(0), fp(1)))
			f.node("cmp4", ratios(fp(1.5), fp(16), fp(-1)))
		}, status.Warning, []string{"2 compute nodes have a 0.0 or NULL allocation ratio (cell1: cmp2, cmp3)", `Run "rpctl migrate ratios"`,
			"1 compute node has a negative allocation ratio"}, nil},
		{"fail: option set to 0.0", status.CheckAllocationRatios, func(f *fixture) {
			f.node("cmp1", ratios(nil, nil, nil))
			zeroCPU(f)
		}, status.Failure, []string{"[DEFAULT] cpu_allocation_ratio is set to 0.0 (/etc/nova/nova.conf:7)", "1 compute node has a 0.0 or NULL"}, nil},
	})
}

func TestCheckOverCommitted(t *testing.T) {
	runScenarios(t, []scenario{
		{"pass", status.CheckOverCommitted, func(f *fixture) {
			rp := f.nodeProvider(f.node("cmp1"))
			f.allocate(rp, "VCPU", "11111111-0000-0000-0000-000000000001", 256, true) // exactly (16-0)*16
			f.allocate(rp, "MEMORY_MB", "11111111-0000-0000-0000-000000000001", 97536, true)
		}, status.Success, nil, nil},
		{"fail", status.CheckOverCommitted, func(f *fixture) {
			rp := f.nodeProvider(f.node("cmp1"))
			f.provider("22222222-0000-0000-0000-000000000000", "cmp2", 0, inv{"VCPU", 16, 2, 1.1})
			f.allocate(rp, "VCPU", "11111111-0000-0000-0000-000000000001", 200, true)
			f.allocate(rp, "VCPU", "11111111-0000-0000-0000-000000000002", 57, true)
			f.allocate(2, "VCPU", "11111111-0000-0000-0000-000000000003", 16, true)
		}, status.Failure, []string{"2 inventories' allocations on 2 resource providers exceed",
			// The consumers involved are named, the most recent first.
			"cmp1 VCPU used 257 > capacity 256.0 ((16 - 0) * 16.0; consumers, most recent first: 11111111-0000-0000-0000-000000000002 (57), 11111111-0000-0000-0000-000000000001 (200))",
			"cmp2 VCPU used 16 > capacity 15.4", "* 1.1; consumers, most recent first: 11111111-0000-0000-0000-000000000003 (16))"}, nil},
		{"fail: missing table", status.CheckOverCommitted, func(f *fixture) {
			f.exec(f.placement, "DROP TABLE allocations")
		}, status.Failure, []string{"Placement database", "allocations' doesn't exist"}, nil},
	})
}

func TestPlacementStatusChecks(t *testing.T) {
	runScenarios(t, []scenario{
		{"root ids pass", status.CheckMissingRootIDs, func(f *fixture) { f.nodeProvider(f.node("cmp1")) }, status.Success, nil, nil},
		{"root ids fail", status.CheckMissingRootIDs, func(f *fixture) {
			f.nodeProvider(f.node("cmp1"))
			f.exec(f.placement, "UPDATE resource_providers SET root_provider_id = NULL")
		}, status.Failure, []string{`There is at least one resource provider table record which misses its root provider id. Run the "placement-manage db online_data_migrations" command.`}, nil},
		{"consumers pass", status.CheckIncompleteConsum, func(f *fixture) {
			f.allocate(f.nodeProvider(f.node("cmp1")), "VCPU", "11111111-0000-0000-0000-000000000001", 1, true)
		}, status.Success, nil, nil},
		{"consumers warn", status.CheckIncompleteConsum, func(f *fixture) {
			rp := f.nodeProvider(f.node("cmp1"))
			f.allocate(rp, "VCPU", "11111111-0000-0000-0000-000000000001", 1, false)
			f.allocate(rp, "MEMORY_MB", "11111111-0000-0000-0000-000000000001", 1, false)
			f.allocate(rp, "VCPU", "11111111-0000-0000-0000-000000000002", 1, false)
			f.allocate(rp, "VCPU", "11111111-0000-0000-0000-000000000003", 1, true)
		}, status.Warning, []string{`There are 2 incomplete consumers table records for existing allocations. Run the "placement-manage db online_data_migrations" command.`}, nil},
		{"consumers fail: missing table", status.CheckIncompleteConsum, func(f *fixture) {
			f.exec(f.placement, "DROP TABLE consumers")
		}, status.Failure, []string{"consumers' doesn't exist"}, nil},
	})
}

func TestCheckOrphanedProviders(t *testing.T) {
	runScenarios(t, []scenario{
		{"pass", status.CheckOrphanedProviders, func(f *fixture) {
			rp := f.nodeProvider(f.node("cmp1"))
			f.provider("33333333-0000-0000-0000-000000000000", "cmp1_pci_0000_84_00_0", rp, inv{"VGPU", 4, 0, 1})
			shared := f.provider("44444444-0000-0000-0000-000000000000", "nfs-pool", 0, inv{"DISK_GB", 10000, 0, 1})
			f.exec(f.placement, `INSERT INTO resource_provider_traits (trait_id, resource_provider_id) SELECT id, ? FROM traits WHERE name = 'MISC_SHARES_VIA_AGGREGATE'`, shared)
		}, status.Success, nil, nil},
		{"warn", status.CheckOrphanedProviders, func(f *fixture) {
			f.nodeProvider(f.node("cmp1"))
			f.nodeProvider(f.node("old-cmp", deleted))
			f.provider("55555555-0000-0000-0000-000000000000", "vanished", 0)
		}, status.Warning, []string{"2 resource providers without a parent have no live compute node in any cell",
			"old-cmp (node deleted, cell1: old-cmp)", "vanished (no compute node)"}, []string{"cmp1 "}},
		{"fail: unreadable cell", status.CheckOrphanedProviders, func(f *fixture) {
			f.nodeProvider(f.node("cmp1"))
			f.exec(f.cell, "DROP TABLE pci_devices, compute_nodes") // pci_devices refers to it (Nova's schema)
		}, status.Failure, []string{"Cannot run the check", "compute_nodes' doesn't exist"}, nil},
	})
}

func TestCheckServiceVersions(t *testing.T) {
	control := func(f *fixture, v int64) {
		f.service("ctl1", "nova-conductor", v)
		f.service("ctl1", "nova-osapi_compute", v)
	}
	runScenarios(t, []scenario{
		{"pass", status.CheckServiceVersions, func(f *fixture) {
			control(f, 64)
			f.service("cmp1", "nova-compute", 61)
			f.service("cmp2", "nova-compute", 0) // never started: Nova ignores it too
		}, status.Success, nil, nil},
		{"warn: old computes", status.CheckServiceVersions, func(f *fixture) {
			control(f, 64)
			f.service("cmp1", "nova-compute", 30)
			f.service("cmp2", "nova-compute", 35)
			f.service("cmp3", "nova-compute", 64)
		}, status.Warning, []string{"2 nova-compute services are older than service version 37 (minimum 30): cell1: cmp1 (30), cell1: cmp2 (35)"}, []string{"cmp3"}},
		{"warn: no conductor recorded", status.CheckServiceVersions, func(f *fixture) {
			f.service("ctl1", "nova-osapi_compute", 64)
		}, status.Warning, []string{"No live nova-conductor service found in any cell"}, nil},
		{"fail: old conductor", status.CheckServiceVersions, func(f *fixture) {
			control(f, 64)
			f.service("ctl2", "nova-conductor", 35)
			f.env.MinServiceVersion = 40
		}, status.Failure, []string{"1 nova-conductor service is older than service version 40 (minimum 35): cell1: ctl2 (35). Upgrade them"}, []string{"osapi"}},
	})
}

// TestDeadDatabase points the checks at a cell server that is not there:
// the checks that need the cell fail naming it, the Placement-only checks
// still pass, nothing crashes, and the run exits 255 (no verdict), as
// nova-status does on a dead database.
func TestDeadDatabase(t *testing.T) {
	live := testdb.NewMySQL(t)
	ctx := context.Background()
	p := open(t, live, storage.RolePlacement, "")
	if _, err := schema.Init(ctx, p, schema.PartPlacement); err != nil {
		t.Fatal(err)
	}
	port := testdb.FreePort(t)
	dead := fmt.Sprintf("mysql+pymysql://nova:secret-pw@127.0.0.1:%d/nova_cell1", port)
	r, err := storage.ConnectReachable(ctx, storage.Sources{
		CellDBs:     []storage.Source{{URL: dead, Origin: "--cell-db"}},
		PlacementDB: storage.Source{URL: live.URL, Origin: "--placement-db"},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	env := &status.Env{Cells: stores.StatusCells(r.Cells), CellErrs: r.CellErrs, Placement: stores.StatusPlacement(r.Placement), PlacementErr: r.PlacementErr, Options: config.DefaultOptions()}
	rep := status.Run(ctx, status.Checks(env))
	if rep.Exit() != 255 {
		t.Errorf("exit %d, want 255", rep.Exit())
	}
	for _, res := range rep.Results {
		if res.Crashed {
			t.Errorf("%s crashed: %s", res.Check, res.Details)
		}
		if strings.Contains(res.Details, "secret-pw") || strings.Contains(res.Details, "rpctl-test-pw") {
			t.Errorf("%s prints a password: %s", res.Check, res.Details)
		}
		placementOnly := res.Check == status.CheckOverCommitted || res.Tool == status.ToolPlacement
		// nova-status' checks of nova.conf alone have their verdicts;
		// Cells v2 reads the API database, which is not configured.
		configOnly := map[string]status.Code{status.CheckPlacementAPI: status.Failure, status.CheckCinderAPI: status.Success,
			status.CheckPolicyJSON: status.Success, status.CheckServiceUserToken: status.Failure}
		want, isConfig := configOnly[res.Check]
		switch {
		case res.Tool == status.ToolNova && isConfig:
			if res.Code != want || res.Unreadable {
				t.Errorf("%s: %s %q, want %s", res.Check, res.Code, res.Details, want)
			}
		case res.Check == status.CheckCellsV2:
			if !res.Unreadable || !strings.Contains(res.Details, "no API database") {
				t.Errorf("%s: %s %q, want no verdict without the API database", res.Check, res.Code, res.Details)
			}
		case placementOnly && res.Code != status.Success:
			t.Errorf("%s: %s %q, want Success", res.Check, res.Code, res.Details)
		case !placementOnly && (res.Code != status.Failure || !strings.Contains(res.Details, fmt.Sprintf(`cell "nova_cell1" database (mysql+pymysql://nova:***@127.0.0.1:%d/nova_cell1): cannot connect`, port))):
			t.Errorf("%s: %s %q, want a Failure naming the dead cell", res.Check, res.Code, res.Details)
		}
	}
}

// TestCellsFromMappings: without --cell-db the cells come from the API
// database's cell_mappings, cell0 skipped; a dead cell is reported by its
// mapping's name and does not hide the live one.
func TestCellsFromMappings(t *testing.T) {
	ctx := context.Background()
	live, apiDB := testdb.NewMySQL(t), testdb.NewMySQL(t)
	api := open(t, apiDB, storage.RoleAPI, "")
	if _, err := schema.Init(ctx, api, schema.PartAPI); err != nil {
		t.Fatal(err)
	}
	dead := fmt.Sprintf("mysql+pymysql://nova:secret-pw@127.0.0.1:%d/nova_cell2", testdb.FreePort(t))
	if err := apidb.InsertAPIRows(ctx, api, nova.APIRows{CellMappings: []nova.CellMapping{
		{ID: 1, UUID: nova.Cell0UUID, Name: "cell0", DatabaseConnection: dead},
		{ID: 2, UUID: "6b9b1e0e-0000-4000-8000-000000000001", Name: "cell1", DatabaseConnection: live.URL},
		{ID: 3, UUID: "6b9b1e0e-0000-4000-8000-000000000002", Name: "cell2", DatabaseConnection: dead},
	}}); err != nil {
		t.Fatal(err)
	}
	r, err := storage.ConnectReachable(ctx, storage.Sources{APIDB: storage.Source{URL: apiDB.URL, Origin: "--api-db"}, CellMappings: apidb.ListCellMappings})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if len(r.Cells) != 1 || r.Cells[0].Name != "cell1" {
		t.Errorf("cells %+v", r.Cells)
	}
	if len(r.CellErrs) != 1 || !strings.HasPrefix(r.CellErrs[0].Error(), `cell "cell2": `) || strings.Contains(r.CellErrs[0].Error(), "secret-pw") {
		t.Errorf("cell errors %q", r.CellErrs)
	}
	if r.PlacementErr == nil || !strings.Contains(r.PlacementErr.Error(), "no database configured for Placement") {
		t.Errorf("Placement error %v", r.PlacementErr)
	}
}
