package migrate_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/rpctl/rpctl/cmd/internal/cmdtest"
	"github.com/rpctl/rpctl/internal/nova"
	"github.com/rpctl/rpctl/internal/testdb"
	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/celldb"
)

// TestMigrateRatiosParityWithNova31 runs 2025.1's own `nova-manage db
// online_data_migrations` (Nova 31, in the chroot scripts/release-chroot.sh
// builds) on one cell database and `rpctl migrate ratios --release 2025.1`
// on another, both with 2025.1's schema (Nova 31's db sync) and the same
// rows and nova.conf, and requires identical compute_nodes tables, exit
// codes and migrate_empty_ratio totals. Without nova.conf's initial
// ratios, Nova 31 writes 4.0/1.0/1.0 where Zed wrote 16.0/1.5/1.0; the
// last case proves rpctl's Zed defaults would differ.
func TestMigrateRatiosParityWithNova31(t *testing.T) {
	chroot := testdb.ReleaseChroot(t, "2025.1")
	novaCell, novaAPI, rpctlCell := testdb.NewMySQL(t), testdb.NewMySQL(t), testdb.NewMySQL(t)
	dir := chroot.TempDir(t)
	writeConf := func(name, defaults, cell string) string {
		p := filepath.Join(dir, name)
		body := fmt.Sprintf("[DEFAULT]\ntransport_url = fake://\n%s\n[database]\nconnection = %s\n[api_database]\nconnection = %s\n",
			defaults, cell, novaAPI.URL)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	manage := func(args ...string) ([]byte, int) {
		py := fmt.Sprintf("import sys; from nova.cmd import manage; sys.argv=%s; sys.exit(manage.main())", cmdtest.PyList(append([]string{"nova-manage"}, args...)))
		out, errOut, code := chroot.Python(t, py, "")
		return []byte(out + errOut), code
	}
	// 2025.1's schemas, from Nova 31's own db sync.
	syncNova := writeConf("sync-nova.conf", "", novaCell.URL)
	syncRpctl := writeConf("sync-rpctl.conf", "", rpctlCell.URL)
	for _, args := range [][]string{
		{"--config-file", syncNova, "api_db", "sync"},
		{"--config-file", syncNova, "db", "sync"},
		{"--config-file", syncRpctl, "db", "sync"},
	} {
		if out, code := manage(args...); code != 0 {
			t.Fatalf("nova-manage %v (Nova 31): exit %d\n%s", args, code, out)
		}
	}
	ctx := context.Background()
	novaDB, rpctlDB := testdb.Open(t, novaCell.DSN, storage.RoleCell), testdb.Open(t, rpctlCell.DSN, storage.RoleCell)

	for i, tc := range []struct {
		name     string
		defaults string
		release  string
		differ   bool // rpctl must NOT agree (Zed's defaults on a 2025.1 cloud)
	}{
		{name: "nothing set", release: "2025.1"},
		{name: "only initial values", release: "2025.1", defaults: "initial_cpu_allocation_ratio = 8.0\ninitial_ram_allocation_ratio = 1.1\n"},
		{name: "overrides", release: "2025.1", defaults: "cpu_allocation_ratio = 2.5\nram_allocation_ratio = 1.3\ndisk_allocation_ratio = 1.7\n"},
		{name: "override 0.0", release: "2025.1", defaults: "cpu_allocation_ratio = 0.0\ninitial_disk_allocation_ratio = 1.25\n"},
		{name: "zed's defaults differ", release: "zed", differ: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, db := range []*storage.DB{novaDB, rpctlDB} {
				if err := celldb.InsertCellRows(ctx, db, nova.CellRows{ComputeNodes: ratiosLegacyRows(), Replace: true}); err != nil {
					t.Fatal(err)
				}
			}
			conf := writeConf(fmt.Sprintf("nova%d.conf", i), tc.defaults, novaCell.URL)
			novaOut, novaCode := manage("--config-file", conf, "db", "online_data_migrations")
			rpctlOut, rpctlErr, rpctlCode := cmdtest.Rpctl(t, "--config-file", conf, "--cell-db", rpctlCell.URL, "migrate", "ratios", "--release", tc.release)

			if novaCode != rpctlCode {
				t.Errorf("exit code: nova-manage %d, rpctl %d", novaCode, rpctlCode)
			}
			if n, r := ratiosSummaryRow(string(novaOut)), ratiosSummaryRow(rpctlOut); n != r {
				t.Errorf("migrate_empty_ratio Total Needed/Completed: nova-manage %s, rpctl %s", n, r)
			}
			want, _ := ratiosTableDump(t, novaCell.DSN)
			got, _ := ratiosTableDump(t, rpctlCell.DSN)
			if len(want) != len(got) {
				t.Fatalf("row counts differ: nova %d, rpctl %d", len(want), len(got))
			}
			differ := 0
			for j := range want {
				if want[j] != got[j] {
					differ++
					if !tc.differ {
						t.Errorf("row differs:\n nova:  %s\n rpctl: %s", want[j], got[j])
					}
				}
			}
			if tc.differ && differ == 0 {
				t.Error("rpctl --release zed wrote what Nova 31 writes: the defaults did not change?")
			}
			if tc.differ {
				t.Logf("--release zed: %d of %d rows differ from Nova 31's", differ, len(want))
			}
			if t.Failed() {
				t.Logf("nova-manage (exit %d):\n%s\nrpctl (exit %d):\n%s%s", novaCode, novaOut, rpctlCode, rpctlOut, rpctlErr)
			}
		})
	}

	// migrate all --release 2025.1 (inventory first, then ratios) into a
	// Placement 13 database writes the same compute_nodes ratios as Nova
	// 31's online migrations. Its exit code is not Nova's: the inventory
	// step skips the rows Placement would refuse (a negative ratio).
	t.Run("migrate all", func(t *testing.T) {
		placement := testdb.NewMySQL(t)
		chroot.DBSync(t, nil, nil, placement)
		for _, db := range []*storage.DB{novaDB, rpctlDB} {
			if err := celldb.InsertCellRows(ctx, db, nova.CellRows{ComputeNodes: ratiosLegacyRows(), Replace: true}); err != nil {
				t.Fatal(err)
			}
		}
		conf := writeConf("nova-all.conf", "", novaCell.URL)
		if out, code := manage("--config-file", conf, "db", "online_data_migrations"); code != 0 {
			t.Fatalf("nova-manage online_data_migrations: exit %d\n%s", code, out)
		}
		out, errOut, code := cmdtest.Rpctl(t, "--config-file", conf, "--cell-db", rpctlCell.URL, "--placement-db", placement.DSN,
			"migrate", "all", "--release", "2025.1")
		t.Logf("rpctl migrate all --release 2025.1: exit %d", code)
		ratios := func(m *testdb.MySQL) []string {
			r, err := m.Admin.Query("SELECT id, CAST(cpu_allocation_ratio AS DOUBLE), CAST(ram_allocation_ratio AS DOUBLE), CAST(disk_allocation_ratio AS DOUBLE) FROM `" + m.Name + "`.compute_nodes ORDER BY id")
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			var rows []string
			for r.Next() {
				var id int64
				var c, ra, d *float64
				if err := r.Scan(&id, &c, &ra, &d); err != nil {
					t.Fatal(err)
				}
				f := func(v *float64) string {
					if v == nil {
						return "NULL"
					}
					return fmt.Sprint(*v)
				}
				rows = append(rows, fmt.Sprintf("%d %s %s %s", id, f(c), f(ra), f(d)))
			}
			return rows
		}
		want, got := ratios(novaCell), ratios(rpctlCell)
		if len(want) != len(got) {
			t.Fatalf("row counts differ: nova %d, rpctl %d", len(want), len(got))
		}
		for j := range want {
			if want[j] != got[j] {
				t.Errorf("ratios differ:\n nova:  %s\n rpctl: %s", want[j], got[j])
			}
		}
		// Node 1 (all NULL) got Nova 31's initial ratios in Placement too.
		var vcpu, mem float64
		err := placement.Admin.QueryRow("SELECT MAX(CASE WHEN rc.name = 'VCPU' THEN i.allocation_ratio END), MAX(CASE WHEN rc.name = 'MEMORY_MB' THEN i.allocation_ratio END) FROM `"+placement.Name+"`.inventories i JOIN `"+placement.Name+"`.resource_providers rp ON rp.id = i.resource_provider_id JOIN `"+placement.Name+"`.resource_classes rc ON rc.id = i.resource_class_id WHERE rp.uuid = '00000000-0000-4000-8000-000000000001'").Scan(&vcpu, &mem)
		if err != nil || vcpu != 4 || mem != 1 {
			t.Errorf("node 1's inventory: VCPU ratio %v, MEMORY_MB ratio %v (%v); want 4.0, 1.0", vcpu, mem, err)
		}
		if t.Failed() {
			t.Logf("rpctl:\n%s%s", out, errOut)
		}
	})
}
