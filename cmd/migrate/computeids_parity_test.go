package migrate_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/cmd/internal/cmdtest"
	"github.com/rpctl/rpctl/internal/testdb"
)

// nova31Copies is a pair of cell and API databases synced by Nova 31's own
// db sync in the release chroot, filled by sample-cloud --release zed (a
// cloud upgraded from Zed: every instance's compute_id NULL), plus
// instances Nova 31 cannot give a compute_id (no host; a node gone) and
// one on a host whose oldest node row is soft-deleted (read_deleted='yes':
// Nova takes the lowest id); a copy of the pair for rpctl, and a
// Placement 13 database for rpctl's Placement steps.
type nova31Copies struct {
	chroot                                 *testdb.Chroot
	novaCell, novaAPI, rpctlCell, rpctlAPI *testdb.MySQL
	placement                              *testdb.MySQL
	novaConf, rpctlConf                    string
}

func newNova31Copies(t *testing.T, nullUUIDs bool) *nova31Copies {
	t.Helper()
	chroot := testdb.ReleaseChroot(t, "2025.1")
	c := &nova31Copies{chroot: chroot, novaCell: testdb.NewMySQL(t), novaAPI: testdb.NewMySQL(t),
		rpctlCell: testdb.NewMySQL(t), rpctlAPI: testdb.NewMySQL(t), placement: testdb.NewMySQL(t)}
	chroot.DBSync(t, c.novaCell, c.novaAPI, c.placement)
	// Nova's cell0 for each pair, with every table of Nova 31's cell
	// schema (fill_virtual_interface_list keeps its marker there; rpctl
	// creates only the tables it uses).
	cell0Nova, cell0Rpctl := testdb.NewMySQL(t), testdb.NewMySQL(t)
	copyDatabase(t, c.novaCell.Admin, c.novaCell.Name, cell0Nova.Name)
	copyDatabase(t, c.novaCell.Admin, c.novaCell.Name, cell0Rpctl.Name)
	if out, errOut, code := cmdtest.Rpctl(t, "--cell-db", c.novaCell.URL, "--api-db", c.novaAPI.URL, "sample-cloud", "--release", "zed",
		"--nodes", "6", "--seed", "5", "--max-instances-per-node", "3"); code != 0 {
		t.Fatalf("sample-cloud: exit %d\n%s%s", code, out, errOut)
	}
	exec := func(db, q string, args ...any) {
		t.Helper()
		if _, err := c.novaCell.Admin.Exec(strings.ReplaceAll(q, "DB.", "`"+db+"`."), args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	cell := c.novaCell.Name
	if !nullUUIDs {
		// The same uuids on both copies (copied below).
		exec(cell, `UPDATE DB.compute_nodes SET uuid = CONCAT('0c0c0c0c-0000-4000-8000-', LPAD(id, 12, '0')) WHERE uuid IS NULL`)
	}
	// A live instance's node row moves to id 950 and a soft-deleted row
	// of the same host and node takes its old, lower id: Nova 31 picks
	// that one (read_deleted='yes', ORDER BY id).
	var oldID int64
	if err := c.novaCell.Admin.QueryRow("SELECT n.id FROM `" + cell + "`.compute_nodes n JOIN `" + cell + "`.instances i ON i.host = n.host AND i.node = n.hypervisor_hostname WHERE n.deleted = 0 AND i.deleted = 0 ORDER BY i.id LIMIT 1").Scan(&oldID); err != nil {
		t.Fatal(err)
	}
	exec(cell, `UPDATE DB.compute_nodes SET id = 950 WHERE id = ?`, oldID)
	exec(cell, `INSERT INTO DB.compute_nodes (id, created_at, deleted_at, deleted, service_id, host, hypervisor_hostname, uuid, vcpus, memory_mb, local_gb, vcpus_used, memory_mb_used, local_gb_used, hypervisor_type, hypervisor_version, cpu_info, running_vms)
		SELECT ?, '2020-01-01 00:00:00', '2021-01-01 00:00:00', ?, NULL, host, hypervisor_hostname, '0d0d0d0d-0000-4000-8000-000000000900', 4, 4096, 40, 0, 0, 0, 'QEMU', 1, '{}', 0
		FROM DB.compute_nodes WHERE id = 950`, oldID, oldID)
	// Instances Nova 31 leaves: never scheduled (no host), and one whose
	// node is gone; and a deleted instance, which it migrates. (Not an
	// instance with host '': Nova's populate_missing_availability_zones
	// then finds and "migrates" it at every batch, for ever.)
	for i, hn := range [][2]any{{nil, nil}, {"gone-host", "gone-node"}} {
		exec(cell, `INSERT INTO DB.instances (id, uuid, created_at, deleted, user_id, project_id, host, node, vm_state, instance_type_id, memory_mb, vcpus, root_gb, ephemeral_gb, launch_index, locked, hidden, cleaned, shutdown_terminate, disable_terminate, reservation_id)
			VALUES (?, ?, '2022-01-01 00:00:00', 0, 'u', 'p', ?, ?, 'error', 1, 512, 1, 1, 0, 0, 0, 0, 0, 0, 0, 'r-x')`,
			800+i, fmt.Sprintf("0e0e0e0e-0000-4000-8000-%012d", 800+i), hn[0], hn[1])
	}
	exec(cell, `UPDATE DB.instances SET deleted = id, deleted_at = '2023-01-01 00:00:00' WHERE id = (SELECT MAX(id) FROM (SELECT id FROM DB.instances WHERE host IS NOT NULL AND id < 800) x)`)
	if !nullUUIDs {
		// Nothing left for Nova's other online migrations, so that a
		// batch's budget is populate_instance_compute_id's alone, in
		// nova-manage as in rpctl migrate compute-ids.
		for _, col := range []string{"cpu", "ram", "disk"} {
			exec(cell, fmt.Sprintf(`UPDATE DB.compute_nodes SET %[1]s_allocation_ratio = 1.0 WHERE %[1]s_allocation_ratio IS NULL OR %[1]s_allocation_ratio = 0`, col))
		}
		exec(cell, `UPDATE DB.instances SET availability_zone = 'nova' WHERE host IS NOT NULL AND availability_zone IS NULL`)
	}
	dir := chroot.TempDir(t)
	writeConf := func(name, cell, api string) string {
		p := filepath.Join(dir, name)
		body := fmt.Sprintf("[DEFAULT]\ntransport_url = fake://\n[database]\nconnection = %s\n[api_database]\nconnection = %s\n", cell, api)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	c.novaConf = writeConf("nova.conf", c.novaCell.URL, c.novaAPI.URL)
	c.rpctlConf = writeConf("rpctl.conf", c.rpctlCell.URL, c.rpctlAPI.URL)
	if !nullUUIDs {
		// fill_virtual_interface_list's marker instance (a deleted
		// instance without a host), which Nova's first batch would
		// otherwise create before populate_instance_compute_id reads.
		if out, errOut, code := cmdtest.Rpctl(t, "--config-file", c.novaConf, "migrate", "vif-list"); code != 0 {
			t.Fatalf("migrate vif-list: exit %d\n%s%s", code, out, errOut)
		}
	}
	const zero = "00000000-0000-0000-0000-000000000000"
	exec(c.novaAPI.Name, `UPDATE DB.cell_mappings SET database_connection = ? WHERE uuid = ?`, cell0Nova.URL, zero)
	copyDatabase(t, c.novaCell.Admin, c.novaCell.Name, c.rpctlCell.Name)
	copyDatabase(t, c.novaCell.Admin, c.novaAPI.Name, c.rpctlAPI.Name)
	// sample-cloud mapped the cell (and cell0, the zero uuid).
	exec(c.rpctlAPI.Name, `UPDATE DB.cell_mappings SET database_connection = ? WHERE uuid <> ?`, c.rpctlCell.URL, zero)
	exec(c.rpctlAPI.Name, `UPDATE DB.cell_mappings SET database_connection = ? WHERE uuid = ?`, cell0Rpctl.URL, zero)
	return c
}

// manage runs Nova 31's nova-manage in the chroot.
func (c *nova31Copies) manage(t *testing.T, args ...string) (string, int) {
	t.Helper()
	py := fmt.Sprintf("import sys; from nova.cmd import manage; sys.argv=%s; sys.exit(manage.main())", cmdtest.PyList(append([]string{"nova-manage"}, args...)))
	out, errOut, code := c.chroot.Python(t, py, "")
	return out + errOut, code
}

const instancesDumpQ = "SELECT id, uuid, host, node, compute_id, deleted, updated_at FROM instances ORDER BY id"

// TestInstanceComputeIDParityWithNova31: on copies of the same Nova-31
// synced databases, Nova 31's nova-manage db online_data_migrations and
// rpctl migrate compute-ids --release 2025.1 (batches of 50, --max-count 7)
// exit the same, give the same populate_instance_compute_id totals and leave
// the same instances rows (compute_id of every one, deleted ones included,
// the instances it cannot place left NULL); nova-manage then finds on
// rpctl's copy what it finds on its own: only the instances it cannot
// place, nothing done. rpctl migrate all --release 2025.1 writes the same
// rows and completes as many (its total_needed counts the unplaceable
// instances once more per batch its own Placement steps add); with
// --release zed it leaves compute_id alone.
func TestInstanceComputeIDParityWithNova31(t *testing.T) {
	name := "populate_instance_compute_id"
	for _, maxCount := range []string{"", "7"} {
		t.Run("max-count "+maxCount, func(t *testing.T) {
			c := newNova31Copies(t, false)
			r := sameOnlineRun(t, "nova-manage (Nova 31)", c.manage, []string{"--config-file", c.novaConf, "db", "online_data_migrations"},
				[]string{"--config-file", c.rpctlConf, "migrate", "compute-ids", "--release", "2025.1"}, maxCount, name)
			want, got := tableDump(t, c.novaCell.DSN, instancesDumpQ), tableDump(t, c.rpctlCell.DSN, instancesDumpQ)
			compareDumps(t, "instances", want, got)
			if maxCount == "" {
				all := strings.Join(got, "\n")
				if set := len(got) - strings.Count(all, "compute_id=NULL"); set < 10 || !strings.Contains(all, `id="800" uuid="0e0e0e0e-0000-4000-8000-000000000800" host=NULL node=NULL compute_id=NULL`) {
					t.Errorf("%d instances given a compute_id, want at least 10 and the hostless one left NULL:\n%s", set, all)
				}
				// Nova took the soft-deleted node row, the lowest id.
				if strings.Contains(all, `compute_id="950"`) {
					t.Errorf("an instance got the live node 950, not its soft-deleted row:\n%s", all)
				}
				againNova, _ := c.manage(t, "--config-file", c.novaConf, "db", "online_data_migrations")
				againRpctl, _ := c.manage(t, "--config-file", c.rpctlConf, "db", "online_data_migrations")
				if n, rp := onlineSummary(againNova, name), onlineSummary(againRpctl, name); n != rp || !strings.HasSuffix(rp, "/0") {
					t.Errorf("%s after nova-manage %s, after rpctl %s (want the same, none done)", name, n, rp)
				}
			}
			if t.Failed() {
				t.Log(r)
			}
		})
	}
	t.Run("migrate all", func(t *testing.T) {
		c := newNova31Copies(t, false)
		novaOut, _ := c.manage(t, "--config-file", c.novaConf, "db", "online_data_migrations")
		out, errOut, code := cmdtest.Rpctl(t, "--config-file", c.rpctlConf, "--placement-db", c.placement.URL, "migrate", "all", "--release", "2025.1", "--batch-size", "50")
		compareDumps(t, "instances", tableDump(t, c.novaCell.DSN, instancesDumpQ), tableDump(t, c.rpctlCell.DSN, instancesDumpQ))
		done := func(s string) string { return s[strings.Index(s, "/")+1:] }
		if n, r := onlineSummary(novaOut, name), onlineSummary(out, name); done(n) != done(r) || done(r) == "0" {
			t.Errorf("%s: nova-manage %s, rpctl migrate all %s (exit %d): want as many completed\n%s\n%s%s", name, n, r, code, novaOut, out, errOut)
		}
	})
	t.Run("compute-ids alone and --release zed", func(t *testing.T) {
		c := newNova31Copies(t, false)
		out, errOut, code := cmdtest.Rpctl(t, "--config-file", c.rpctlConf, "--placement-db", c.placement.URL, "migrate", "all", "--release", "zed")
		if strings.Contains(out, name) || !strings.Contains(out, "migrate_empty_ratio") {
			t.Errorf("migrate all --release zed ran %s (exit %d):\n%s%s", name, code, out, errOut)
		}
		if n := strings.Count(strings.Join(tableDump(t, c.rpctlCell.DSN, instancesDumpQ), "\n"), "compute_id=NULL"); n < 12 {
			t.Errorf("after migrate all --release zed, %d instances without a compute_id, want all", n)
		}
		if _, errOut, code := cmdtest.Rpctl(t, "--config-file", c.rpctlConf, "migrate", "compute-ids"); code != 127 || !strings.Contains(errOut, "2025.1") {
			t.Errorf("migrate compute-ids (zed): exit %d %s", code, errOut)
		}
	})
}

// TestInstanceComputeIDNullUUIDNova31: while compute nodes have a NULL
// uuid, Nova 31's own online_data_migrations fails
// populate_instance_compute_id (exit 2, "Error attempting to run", no
// instance given a compute_id); after rpctl migrate inventory --release
// 2025.1 has given the nodes their uuids, the same command succeeds. rpctl
// migrate compute-ids on such a cloud skips the instances of those nodes,
// naming them, and migrates the others (exit 2).
func TestInstanceComputeIDNullUUIDNova31(t *testing.T) {
	name := "populate_instance_compute_id"
	c := newNova31Copies(t, true)
	var nulls int
	if err := c.novaCell.Admin.QueryRow("SELECT COUNT(*) FROM `" + c.novaCell.Name + "`.compute_nodes WHERE uuid IS NULL AND deleted = 0").Scan(&nulls); err != nil || nulls == 0 {
		t.Fatalf("the sample cloud has %d live nodes with a NULL uuid (%v): nothing to prove", nulls, err)
	}
	out, code := c.manage(t, "--config-file", c.novaConf, "db", "online_data_migrations")
	if code != 2 || !strings.Contains(out, "Error attempting to run <function populate_instance_compute_id") {
		t.Errorf("Nova 31 with NULL uuids: exit %d, want 2 and its error\n%s", code, out)
	}
	before := tableDump(t, c.novaCell.DSN, instancesDumpQ)
	if strings.Count(strings.Join(before, "\n"), "compute_id=NULL") != len(before)-1 {
		// Nova's batch fails whole: only the instance on node 0... is
		// not even reached; every compute_id stays NULL but where a
		// batch before the failure committed.
		t.Logf("instances after Nova 31's failed run:\n%s", strings.Join(before, "\n"))
	}
	// rpctl on its copy: the instances of the uuid-less nodes are skipped.
	rOut, rErr, rCode := cmdtest.Rpctl(t, "--config-file", c.rpctlConf, "migrate", "compute-ids", "--release", "2025.1")
	if rCode != 2 || !strings.Contains(rErr, "has no uuid") || !strings.Contains(rErr, "rpctl migrate inventory") {
		t.Errorf("rpctl migrate compute-ids with NULL uuids: exit %d\n%s%s", rCode, rOut, rErr)
	}
	if out, errOut, code := cmdtest.Rpctl(t, "--config-file", c.novaConf, "--placement-db", c.placement.URL, "migrate", "inventory", "--release", "2025.1"); code != 0 {
		t.Fatalf("rpctl migrate inventory: exit %d\n%s%s", code, out, errOut)
	}
	out, code = c.manage(t, "--config-file", c.novaConf, "db", "online_data_migrations")
	if code != 0 || strings.Contains(out, "Error attempting") {
		t.Errorf("Nova 31 after rpctl migrate inventory: exit %d\n%s", code, out)
	}
	if s := onlineSummary(out, name); !strings.HasPrefix(s, "") || strings.HasSuffix(s, "/0") {
		t.Errorf("%s after rpctl migrate inventory: %s, want instances migrated\n%s", name, s, out)
	}
}
