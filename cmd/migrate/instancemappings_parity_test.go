package migrate_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/cmd/internal/cmdtest"
	"github.com/rpctl/rpctl/internal/nova"
	"github.com/rpctl/rpctl/internal/testdb"
	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/celldb"
)

// onlineSummary returns the "total/completed" of a migration's row in
// nova-manage's (or rpctl's) summary table.
func onlineSummary(out, name string) string {
	m := regexp.MustCompile(`\|\s*` + name + `\s*\|\s*(\d+)\s*\|\s*(\d+)\s*\|`).FindStringSubmatch(out)
	if m == nil {
		return "<no " + name + " row>"
	}
	return m[1] + "/" + m[2]
}

// copyDatabase replaces every table of to with from's, rows included.
func copyDatabase(t *testing.T, admin *sql.DB, from, to string) {
	t.Helper()
	ctx := context.Background()
	conn, err := admin.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	exec := func(q string) {
		t.Helper()
		if _, err := conn.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec("SET FOREIGN_KEY_CHECKS = 0")
	defer exec("SET FOREIGN_KEY_CHECKS = 1")
	tables := func(db string) []string {
		rows, err := conn.QueryContext(ctx, `SELECT table_name FROM information_schema.tables WHERE table_schema = ? AND table_type = 'BASE TABLE' ORDER BY table_name`, db)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var n string
			rows.Scan(&n)
			out = append(out, n)
		}
		return out
	}
	for _, tb := range tables(to) {
		exec(fmt.Sprintf("DROP TABLE `%s`.`%s`", to, tb))
	}
	for _, tb := range tables(from) {
		exec(fmt.Sprintf("CREATE TABLE `%s`.`%s` LIKE `%s`.`%s`", to, tb, from, tb))
		exec(fmt.Sprintf("INSERT INTO `%s`.`%s` SELECT * FROM `%s`.`%s`", to, tb, from, tb))
	}
}

// runNovaManage runs Nova 26's own nova-manage with args and returns its
// output and exit code.
func runNovaManage(t *testing.T, args ...string) (string, int) {
	t.Helper()
	py := fmt.Sprintf("import sys; from nova.cmd import manage; sys.argv=%s; sys.exit(manage.main())", cmdtest.PyList(append([]string{"nova-manage"}, args...)))
	out, err := exec.Command(testdb.Python, "-c", py).CombinedOutput()
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatal(err)
		}
		return string(out), ee.ExitCode()
	}
	return string(out), 0
}

// mappingsDump is instance_mappings as the instance mapping migrations
// leave it: every column, updated_at only as set or not (each tool stamps
// its own clock).
func mappingsDump(t *testing.T, dsnStr string) []string {
	t.Helper()
	db, err := sql.Open("mysql", dsnStr)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT instance_uuid, COALESCE(CAST(cell_id AS CHAR), 'NULL'), project_id,
		COALESCE(CAST(queued_for_delete AS CHAR), 'NULL'), COALESCE(user_id, 'NULL'), updated_at IS NOT NULL
		FROM instance_mappings ORDER BY instance_uuid`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var u, cell, project, queued, user string
		var updated bool
		if err := rows.Scan(&u, &cell, &project, &queued, &user, &updated); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s cell=%s project=%s queued_for_delete=%s user_id=%s updated_at_set=%v", u, cell, project, queued, user, updated))
	}
	return out
}

var uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// uuidsDump is a table's rows as the uuid migrations leave them: the uuid
// as NULL, kept (the one seeded) or generated (a random version 4 uuid, as
// Nova's uuidutils.generate_uuid), updated_at as set or not.
func uuidsDump(t *testing.T, dsnStr, table string) []string {
	t.Helper()
	db, err := sql.Open("mysql", dsnStr)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT id, deleted, uuid, updated_at IS NOT NULL FROM ` + table + ` ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id, deleted int64
		var u sql.NullString
		var updated bool
		if err := rows.Scan(&id, &deleted, &u, &updated); err != nil {
			t.Fatal(err)
		}
		kind := "NULL"
		switch {
		case u.Valid && strings.HasPrefix(u.String, "33333333-"):
			kind = u.String
		case u.Valid && uuidRE.MatchString(u.String):
			kind = "generated"
		case u.Valid:
			kind = "malformed " + u.String
		}
		out = append(out, fmt.Sprintf("id=%d deleted=%d uuid=%s updated_at_set=%v", id, deleted, kind, updated))
	}
	return out
}

// instancesAZDump is the cell's instances as
// populate_missing_availability_zones leaves them (fill_virtual_interface_list's
// marker, which only nova-manage creates, left out).
func instancesAZDump(t *testing.T, dsnStr string) []string {
	t.Helper()
	db, err := sql.Open("mysql", dsnStr)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT uuid, COALESCE(host, 'NULL'), COALESCE(availability_zone, 'NULL'), updated_at IS NOT NULL
		FROM instances WHERE uuid != '00000000-0000-0000-0000-000000000000' ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var u, host, az string
		var updated bool
		if err := rows.Scan(&u, &host, &az, &updated); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s host=%s availability_zone=%s updated_at_set=%v", u, host, az, updated))
	}
	return out
}

// TestInstanceMappingMigrationsParityWithNova builds Nova-synced API, cell0
// and cell1 databases holding instance mappings that need
// populate_missing_availability_zones, populate_queued_for_delete and
// populate_user_id (instances with a host and no zone; live, deleted and
// soft-deleted instances, in cell0 and cell1; mappings without a cell,
// without an instance, already half migrated, and
// fill_virtual_interface_list's marker), copies them, runs Nova 26's
// `nova-manage db online_data_migrations` on one copy and `rpctl migrate
// all` on the other, and requires the same instance_mappings, exit codes and
// summary rows; then nova-manage, run again on both copies, must find the
// same (nothing for populate_queued_for_delete).
func TestInstanceMappingMigrationsParityWithNova(t *testing.T) {
	testdb.RequirePython(t, "nova.cmd.manage", "pymysql")
	novaCell, novaAPI, placement := testdb.NewMySQL(t), testdb.NewMySQL(t), testdb.NewMySQL(t)
	novaCell0 := testdb.NewMySQL(t)
	rpctlCell, rpctlCell0, rpctlAPI := testdb.NewMySQL(t), testdb.NewMySQL(t), testdb.NewMySQL(t)
	prefix := novaCell.URL[:strings.LastIndex(novaCell.URL, "/")]
	script := filepath.Join(testdb.RepoRoot(), "scripts", "reference-dbsync.sh")
	if out, err := exec.Command(script, prefix, novaCell.Name, novaAPI.Name, placement.Name).CombinedOutput(); err != nil {
		t.Fatalf("reference db sync: %v\n%s", err, out)
	}
	admin := novaCell.Admin
	// The synced, empty cell schema, kept to reset the cells of each case.
	pristine := testdb.NewMySQL(t)
	copyDatabase(t, admin, novaCell.Name, pristine.Name)
	pristineAPI := testdb.NewMySQL(t)
	copyDatabase(t, admin, novaAPI.Name, pristineAPI.Name)

	dir := t.TempDir()
	writeConf := func(name, cell, api string) string {
		p := filepath.Join(dir, name)
		body := fmt.Sprintf("[DEFAULT]\ntransport_url = fake://\ndefault_availability_zone = zz-default\n[database]\nconnection = %s\n[api_database]\nconnection = %s\n", cell, api)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	novaConf := writeConf("nova.conf", novaCell.URL, novaAPI.URL)
	rpctlConf := writeConf("rpctl.conf", rpctlCell.URL, rpctlAPI.URL)

	exec := func(db, q string, args ...any) {
		t.Helper()
		if _, err := admin.Exec(strings.ReplaceAll(q, "DB.", "`"+db+"`."), args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	const cell0UUID, cell1UUID = "00000000-0000-0000-0000-000000000000", "c0000000-0000-4000-8000-000000000001"
	seed := func() {
		copyDatabase(t, admin, pristine.Name, novaCell.Name)
		copyDatabase(t, admin, pristine.Name, novaCell0.Name)
		copyDatabase(t, admin, pristineAPI.Name, novaAPI.Name)
		exec(novaAPI.Name, `INSERT INTO DB.cell_mappings (id, uuid, name, transport_url, database_connection, disabled) VALUES
			(1, ?, 'cell0', 'none:///', ?, 0), (2, ?, 'cell1', 'fake://', ?, 0)`, cell0UUID, novaCell0.URL, cell1UUID, novaCell.URL)
		n := 0
		instance := func(db string, cellID any, vmState string, deleted bool, user any, queued any, mappingUser any) {
			n++
			u := fmt.Sprintf("11111111-0000-4000-8000-%012d", n)
			if db != "" {
				del := "0"
				if deleted {
					del = "id"
				}
				exec(db, `INSERT INTO DB.instances (id, uuid, user_id, project_id, vm_state, availability_zone, created_at, deleted) VALUES (?, ?, ?, 'p1', ?, 'nova', '2019-03-01 10:00:00', 0)`, n, u, user, vmState)
				exec(db, `UPDATE DB.instances SET deleted = `+del+` WHERE id = ?`, n)
			}
			exec(novaAPI.Name, `INSERT INTO DB.instance_mappings (instance_uuid, cell_id, project_id, queued_for_delete, user_id, created_at) VALUES (?, ?, 'p1', ?, ?, '2019-03-01 10:00:00')`, u, cellID, queued, mappingUser)
		}
		for i := 0; i < 12; i++ {
			instance(novaCell.Name, 2, "active", false, fmt.Sprintf("u%d", i%3), nil, nil)
		}
		for i := 0; i < 4; i++ {
			instance(novaCell.Name, 2, "deleted", true, "u1", nil, nil)
			instance(novaCell.Name, 2, "soft-delete", false, "u2", nil, nil)
		}
		instance(novaCell.Name, 2, "active", false, "u9", false, nil) // queued set, user not
		instance(novaCell.Name, 2, "active", false, "u8", nil, "u8")  // user set, queued not
		instance(novaCell.Name, 2, "deleted", true, "u7", true, "u7") // nothing to do
		instance("", 2, "", false, nil, nil, nil)                     // no instance in its cell
		instance("", nil, "", false, nil, nil, nil)                   // still building: no cell
		for i := 0; i < 3; i++ {
			instance(novaCell0.Name, 1, "error", false, "u3", nil, nil)
		}
		instance(novaCell0.Name, 1, "error", true, "u4", nil, nil)
		// fill_virtual_interface_list's marker: populate_user_id leaves it.
		exec(novaAPI.Name, `INSERT INTO DB.instance_mappings (instance_uuid, cell_id, project_id, created_at) VALUES (?, 2, ?, '2019-03-01 10:00:00')`, cell0UUID, cell0UUID)
		// The aggregates' hosts are mapped compute nodes (rpctl's
		// aggregates step syncs them to Placement), with their ratios set.
		cellDB := testdb.Open(t, novaCell.DSN, storage.RoleCell)
		var nodes []nova.ComputeNode
		for id := int64(1); id <= 3; id++ {
			n := cmdtest.RatiosNode(id, cmdtest.RatiosFP(16), cmdtest.RatiosFP(1.5), cmdtest.RatiosFP(1))
			u := fmt.Sprintf("00000000-0000-4000-8000-%012d", id)
			n.UUID = &u
			nodes = append(nodes, n)
			exec(novaAPI.Name, `INSERT INTO DB.host_mappings (cell_id, host) VALUES (2, ?)`, *n.Host)
		}
		if err := celldb.InsertCellRows(context.Background(), cellDB, nova.CellRows{ComputeNodes: nodes}); err != nil {
			t.Fatal(err)
		}
		cellDB.Close()
		// populate_missing_availability_zones: instances with a host and
		// no zone (deleted ones too) in the [database] cell, the only one
		// nova-manage migrates; a host in a zone's aggregate, one in an
		// aggregate without a zone, one in none; one instance without a
		// host, which keeps its NULL.
		exec(novaAPI.Name, `INSERT INTO DB.aggregates (id, uuid, name, created_at) VALUES
			(1, 'a0000000-0000-4000-8000-000000000001', 'agg1', '2019-03-01 10:00:00'),
			(2, 'a0000000-0000-4000-8000-000000000002', 'agg2', '2019-03-01 10:00:00'),
			(3, 'a0000000-0000-4000-8000-000000000003', 'agg3', '2019-03-01 10:00:00')`)
		exec(novaAPI.Name, `INSERT INTO DB.aggregate_hosts (aggregate_id, host) VALUES (1, 'compute001'), (2, 'compute002'), (3, 'compute003'), (3, 'compute001')`)
		exec(novaAPI.Name, `INSERT INTO DB.aggregate_metadata (aggregate_id, `+"`key`"+`, value) VALUES
			(1, 'availability_zone', 'az1'), (2, 'color', 'blue'), (3, 'availability_zone', 'az3')`)
		for i, host := range []any{"compute001", "compute002", "compute003", "compute004", nil, "compute001", "compute003"} {
			n++
			exec(novaCell.Name, `INSERT INTO DB.instances (id, uuid, user_id, project_id, host, vm_state, created_at, deleted) VALUES (?, ?, 'u1', 'p1', ?, 'active', '2019-03-01 10:00:00', 0)`,
				n, fmt.Sprintf("22222222-0000-4000-8000-%012d", n), host)
			if i == 5 {
				exec(novaCell.Name, `UPDATE DB.instances SET deleted = id, vm_state = 'deleted' WHERE id = ?`, n)
			}
		}
		// migration_migrate_to_uuid (live rows only) and populate_uuids
		// (deleted rows too): rows without a uuid, live and deleted, and
		// one that has its uuid.
		inst1 := "11111111-0000-4000-8000-000000000001"
		for i := 1; i <= 6; i++ {
			var u any
			if i == 6 {
				u = fmt.Sprintf("33333333-0000-4000-8000-%012d", i)
			}
			exec(novaCell.Name, `INSERT INTO DB.migrations (id, instance_uuid, status, uuid, created_at, deleted) VALUES (?, ?, 'confirmed', ?, '2019-03-01 10:00:00', 0)`, i, inst1, u)
			exec(novaCell.Name, `INSERT INTO DB.block_device_mapping (id, instance_uuid, uuid, created_at, deleted) VALUES (?, ?, ?, '2019-03-01 10:00:00', 0)`, i, inst1, u)
			exec(novaCell.Name, `INSERT INTO DB.pci_devices (id, compute_node_id, address, product_id, vendor_id, dev_type, dev_id, label, status, uuid, created_at, deleted) VALUES (?, 1, ?, '1520', '8086', 'type-PCI', ?, 'label_8086_1520', 'available', ?, '2019-03-01 10:00:00', 0)`,
				i, fmt.Sprintf("0000:81:00.%d", i), fmt.Sprintf("pci_0000_81_00_%d", i), u)
			if i%3 == 0 {
				exec(novaCell.Name, `UPDATE DB.migrations SET deleted = id WHERE id = ?`, i)
				exec(novaCell.Name, `UPDATE DB.block_device_mapping SET deleted = id WHERE id = ?`, i)
				exec(novaCell.Name, `UPDATE DB.pci_devices SET deleted = id WHERE id = ?`, i)
			}
		}
		copyDatabase(t, admin, novaCell.Name, rpctlCell.Name)
		copyDatabase(t, admin, novaCell0.Name, rpctlCell0.Name)
		copyDatabase(t, admin, novaAPI.Name, rpctlAPI.Name)
		exec(rpctlAPI.Name, `UPDATE DB.cell_mappings SET database_connection = ? WHERE id = 1`, rpctlCell0.URL)
		exec(rpctlAPI.Name, `UPDATE DB.cell_mappings SET database_connection = ? WHERE id = 2`, rpctlCell.URL)
	}
	names := []string{"migration_migrate_to_uuid", "populate_uuids", "populate_dev_uuids", "populate_missing_availability_zones", "populate_queued_for_delete", "populate_user_id"}
	for _, maxCount := range []string{"", "7", "40"} {
		t.Run("max-count "+maxCount, func(t *testing.T) {
			seed()
			run := sameOnlineRun(t, "nova-manage", runNovaManage, []string{"--config-file", novaConf, "db", "online_data_migrations"},
				[]string{"--config-file", rpctlConf, "--placement-db", placement.URL, "migrate", "all"}, maxCount, names...)
			want, got := mappingsDump(t, novaAPI.DSN), mappingsDump(t, rpctlAPI.DSN)
			if strings.Join(want, "\n") != strings.Join(got, "\n") {
				t.Errorf("instance_mappings differ:\n nova-manage:\n  %s\n rpctl:\n  %s", strings.Join(want, "\n  "), strings.Join(got, "\n  "))
			}
			for _, table := range []string{"migrations", "block_device_mapping", "pci_devices"} {
				want, got = uuidsDump(t, novaCell.DSN, table), uuidsDump(t, rpctlCell.DSN, table)
				if strings.Join(want, "\n") != strings.Join(got, "\n") {
					t.Errorf("%s differ:\n nova-manage:\n  %s\n rpctl:\n  %s", table, strings.Join(want, "\n  "), strings.Join(got, "\n  "))
				}
			}
			want, got = instancesAZDump(t, novaCell.DSN), instancesAZDump(t, rpctlCell.DSN)
			if strings.Join(want, "\n") != strings.Join(got, "\n") {
				t.Errorf("instances' zones differ:\n nova-manage:\n  %s\n rpctl:\n  %s", strings.Join(want, "\n  "), strings.Join(got, "\n  "))
			}
			if t.Failed() {
				t.Fatal(run)
			}
			if maxCount != "" {
				return
			}
			// What is left: nova-manage again on both copies.
			againNova, _ := runNovaManage(t, "--config-file", novaConf, "db", "online_data_migrations")
			againRpctl, _ := runNovaManage(t, "--config-file", rpctlConf, "db", "online_data_migrations")
			for _, name := range names {
				if n, r := onlineSummary(againNova, name), onlineSummary(againRpctl, name); n != r {
					t.Errorf("%s after nova-manage %s, after rpctl %s", name, n, r)
				}
			}
			for _, name := range names[:5] {
				if s := onlineSummary(againRpctl, name); s != "0/0" {
					t.Errorf("%s after rpctl: nova-manage found %s", name, s)
				}
			}
			if t.Failed() {
				t.Logf("nova-manage after nova-manage:\n%s\nnova-manage after rpctl:\n%s", againNova, againRpctl)
			}
		})
	}
}
