package samplecloud_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/rpctl/rpctl/cmd/internal/cmdtest"
	"github.com/rpctl/rpctl/internal/testdb"
	"github.com/rpctl/rpctl/storage"
)

// TestBadInputIsOneLine covers the foundation's promise: every way of
// pointing rpctl at a database wrongly ends in one line on stderr that says
// what is wrong, a non-zero exit, and never the password.
func TestBadInputIsOneLine(t *testing.T) {
	dir := t.TempDir()
	badConf := filepath.Join(dir, "nova.conf")
	os.WriteFile(badConf, []byte("[database]\nconnection = mysql://nova:hunter2@db/nova\nthis line is not an option\n"), 0o600)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"unparsable config", []string{"--config-file", badConf, "init"}, badConf + ":3: expected \"key = value\""},
		{"missing config", []string{"--config-file", filepath.Join(dir, "nope.conf"), "init"}, "nope.conf: no such file"},
		{"unknown scheme", []string{"--placement-db", "postgresql://placement:hunter2@db/placement", "init"}, `unknown database URL scheme "postgresql"`},
		{"dead server", []string{"--placement-db", "mysql+pymysql://placement:hunter2@127.0.0.1:1/placement", "init"}, "Placement database (mysql+pymysql://placement:***@127.0.0.1:1/placement): cannot connect"},
		{"no database at all", []string{"init"}, "no database configured"},
		{"no cell database", []string{"compute-node", "list"}, "give --db FILE (the embedded default), --cell-db URL, or --config-file"},
		{"bad format", []string{"--db", filepath.Join(dir, "x.db"), "-f", "xml", "compute-node", "list"}, `invalid --format "xml"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := cmdtest.Rpctl(t, tc.args...)
			if code == 0 {
				t.Fatalf("exit 0; stdout %q", out)
			}
			if !strings.Contains(errOut, tc.want) {
				t.Errorf("stderr %q, want it to contain %q", errOut, tc.want)
			}
			if n := strings.Count(strings.TrimRight(errOut, "\n"), "\n"); n != 0 {
				t.Errorf("stderr has %d lines, want one: %q", n+1, errOut)
			}
			if strings.Contains(out+errOut, "hunter2") {
				t.Errorf("password printed: %q %q", out, errOut)
			}
		})
	}
}

func TestWrongPassword(t *testing.T) {
	my := testdb.NewMySQL(t)
	cfg, err := mysql.ParseDSN(my.DSN)
	if err != nil {
		t.Fatal(err)
	}
	url := "mysql+pymysql://" + cfg.User + ":hunter2-wrong@" + cfg.Addr + "/" + my.Name
	_, errOut, code := cmdtest.Rpctl(t, "--placement-db", url, "init")
	if code != 255 || !strings.Contains(errOut, "Access denied") || strings.Contains(errOut, "hunter2") {
		t.Errorf("exit %d stderr %q", code, errOut)
	}
}

func TestInitOnMariaDBAndSQLite(t *testing.T) {
	cell, api, pl := testdb.NewMySQL(t), testdb.NewMySQL(t), testdb.NewMySQL(t)
	// nova.conf and placement.conf naming new, empty databases: the cell is
	// [database] connection, since the new API database maps none yet.
	confCell, confAPI, confPl := testdb.NewMySQL(t), testdb.NewMySQL(t), testdb.NewMySQL(t)
	conf := filepath.Join(t.TempDir(), "nova.conf")
	os.WriteFile(conf, []byte("[database]\nconnection = "+confCell.URL+"\n[api_database]\nconnection = "+confAPI.URL+
		"\n[placement_database]\nconnection = "+confPl.URL+"\n"), 0o600)
	for _, args := range [][]string{
		{"--cell-db", cell.URL, "--api-db", api.DSN, "--placement-db", pl.URL, "init"},
		{"--config-file", conf, "init"},
		{"--db", filepath.Join(t.TempDir(), "cloud.db"), "init"},
	} {
		out, errOut, code := cmdtest.Rpctl(t, args...)
		if code != 0 || strings.Count(out, "created") != 3 {
			t.Fatalf("%v: exit %d\n%s%s", args, code, out, errOut)
		}
		// A second init finds complete schemas and leaves them alone.
		out, errOut, code = cmdtest.Rpctl(t, args...)
		if code != 0 || strings.Count(out, "already present") != 3 {
			t.Fatalf("%v again: exit %d\n%s%s", args, code, out, errOut)
		}
	}
}

// TestFlagsWinOverConfigFiles: a database flag replaces the config file's
// connection, which is never opened.
func TestFlagsWinOverConfigFiles(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "placement.conf")
	os.WriteFile(conf, []byte("[placement_database]\nconnection = mysql+pymysql://placement:hunter2@127.0.0.1:1/placement\n"), 0o600)
	out, errOut, code := cmdtest.Rpctl(t, "--config-file", conf, "--placement-db", "sqlite:///"+filepath.Join(dir, "p.db"), "init")
	if code != 0 || !strings.Contains(out, "p.db") || strings.Count(out, "created") != 1 {
		t.Errorf("exit %d\n%s%s", code, out, errOut)
	}
}

// TestInitRelease2025_1: on databases 2025.1's own db sync made (Nova
// 31.0.0, Placement 13.0.0, in the release chroot), rpctl init --release
// 2025.1 accepts the schemas and syncs os-traits 3.4.0's 359 standard
// traits, and Placement 13's placement-api, started on that database, adds
// and renumbers none; --release zed would have left it 14 short. On an
// empty database it creates 2025.1's schema.
func TestInitRelease2025_1(t *testing.T) {
	chroot := testdb.ReleaseChroot(t, "2025.1")
	cell, api, pl, zedPl := testdb.NewMySQL(t), testdb.NewMySQL(t), testdb.NewMySQL(t), testdb.NewMySQL(t)
	chroot.DBSync(t, cell, api, pl)
	chroot.DBSync(t, nil, nil, zedPl)

	traits := func(m *testdb.MySQL) map[string]int {
		rows, err := m.Admin.Query("SELECT name, id FROM `" + m.Name + "`.traits")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		out := map[string]int{}
		for rows.Next() {
			var n string
			var id int
			if err := rows.Scan(&n, &id); err != nil {
				t.Fatal(err)
			}
			out[n] = id
		}
		return out
	}

	out, errOut, code := cmdtest.Rpctl(t, "--cell-db", cell.URL, "--api-db", api.URL, "--placement-db", pl.URL, "init", "--release", "2025.1")
	if code != 0 || strings.Count(out, "already present") != 3 {
		t.Fatalf("init --release 2025.1 on Nova 31's schemas: exit %d\n%s%s", code, out, errOut)
	}
	if _, _, code := cmdtest.Rpctl(t, "--placement-db", zedPl.URL, "init", "--release", "zed"); code != 0 {
		t.Fatalf("init --release zed: exit %d", code)
	}
	ours, zeds := traits(pl), traits(zedPl)
	if len(ours) != 359 || len(zeds) != 345 {
		t.Errorf("standard traits synced: --release 2025.1 %d (want 359), --release zed %d (want 345)", len(ours), len(zeds))
	}
	base := chroot.PlacementAPI(t, pl.URL, "")
	if st, body := testdb.PlacementGet(t, base, "/traits", "1.39"); st != 200 {
		t.Fatalf("GET /traits: %d %s", st, body)
	}
	after := traits(pl)
	if len(after) != len(ours) {
		t.Errorf("Placement 13 added %d traits to what rpctl init --release 2025.1 synced", len(after)-len(ours))
	}
	for n, id := range ours {
		if after[n] != id {
			t.Errorf("trait %s: id %d, %d after Placement 13 started", n, id, after[n])
		}
	}

	// On empty databases it creates 2025.1's schemas (storage/schema's
	// tests compare them with Nova 31's db sync).
	empty := testdb.NewMySQL(t)
	out, errOut, code = cmdtest.Rpctl(t, "--placement-db", empty.URL, "init", "--release", "2025.1")
	if code != 0 || strings.Count(out, "created") != 1 {
		t.Errorf("init --release 2025.1 on an empty database: exit %d\n%s%s", code, out, errOut)
	}
	var rev string
	if err := empty.Admin.QueryRow("SELECT version_num FROM `" + empty.Name + "`.alembic_version").Scan(&rev); err != nil || rev != "a082b8bb98d0" {
		t.Errorf("init --release 2025.1 stamped %q (%v), want Placement 13's a082b8bb98d0", rev, err)
	}
	if _, errOut, code := cmdtest.Rpctl(t, "--placement-db", empty.URL, "init", "--release", "2025.2"); code != 127 || !strings.Contains(errOut, "--release") {
		t.Errorf("init --release 2025.2: exit %d, stderr %q", code, errOut)
	}
}

// TestSampleCloudRelease2025_1: sample-cloud --release 2025.1 into
// databases Nova 31's own db sync made gives every instance the
// compute_id of its node and every migration its destination node's
// dest_compute_id, so that Nova 31's own populate_instance_compute_id finds
// nothing to do; on an empty SQLite file it creates 2025.1's schema first.
func TestSampleCloudRelease2025_1(t *testing.T) {
	chroot := testdb.ReleaseChroot(t, "2025.1")
	cell, api := testdb.NewMySQL(t), testdb.NewMySQL(t)
	chroot.DBSync(t, cell, api, nil)
	if out, errOut, code := cmdtest.Rpctl(t, "--cell-db", cell.URL, "--api-db", api.URL, "sample-cloud", "--release", "2025.1", "--nodes", "8", "--seed", "4"); code != 0 {
		t.Fatalf("sample-cloud --release 2025.1: exit %d\n%s%s", code, out, errOut)
	}
	count := func(q string) int {
		var n int
		if err := cell.Admin.QueryRow(strings.ReplaceAll(q, "DB.", "`"+cell.Name+"`.")).Scan(&n); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return n
	}
	if n := count(`SELECT COUNT(*) FROM DB.instances`); n == 0 || count(`SELECT COUNT(*) FROM DB.migrations`) == 0 {
		t.Fatalf("no instances (%d) or migrations to check", n)
	}
	if n := count(`SELECT COUNT(*) FROM DB.instances i LEFT JOIN DB.compute_nodes n ON n.id = i.compute_id AND n.host = i.host AND n.hypervisor_hostname = i.node AND n.deleted = 0 WHERE n.id IS NULL`); n != 0 {
		t.Errorf("%d instances without their node's compute_id", n)
	}
	if n := count(`SELECT COUNT(*) FROM DB.migrations m LEFT JOIN DB.compute_nodes n ON n.id = m.dest_compute_id AND n.host = m.dest_compute AND n.hypervisor_hostname = m.dest_node AND n.deleted = 0 WHERE n.id IS NULL`); n != 0 {
		t.Errorf("%d migrations without their destination node's dest_compute_id", n)
	}
	// Nova 31's own migration: nothing to do.
	dir := chroot.TempDir(t)
	conf := filepath.Join(dir, "nova.conf")
	if err := os.WriteFile(conf, []byte("[DEFAULT]\ntransport_url = fake://\n[database]\nconnection = "+cell.URL+"\n[api_database]\nconnection = "+api.URL+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, _ := chroot.Python(t, `import sys
from nova import config, context, objects
from nova.objects import instance
config.parse_args(["nova-manage", "--config-file", "`+conf+`"])
objects.register_all()
print(instance.populate_instance_compute_id(context.get_admin_context(), 1000))`, "")
	if strings.TrimSpace(out) != "(0, 0)" {
		t.Errorf("Nova 31's populate_instance_compute_id after sample-cloud --release 2025.1: %q %s", out, errOut)
	}
	// Nova 31's own "Older than N-1 computes" (nova/cmd/status.py
	// _check_old_computes) on the same cloud, and rpctl status's: the
	// computes are within Nova 31's supported range (issue 33: they were at
	// Zed's 61-64, which Nova 31 fails).
	out, errOut, _ = chroot.Python(t, `from nova import config, objects
from nova.cmd import status
config.parse_args(["nova-status", "--config-file", "`+conf+`"])
objects.register_all()
r = status.UpgradeCommands()._check_old_computes()
print({0: "Success", 1: "Warning", 2: "Failure"}[r.code] + "|" + (r.details or ""))`, "")
	nova31 := strings.TrimSpace(out)
	if nova31 != "Success|" {
		t.Errorf("Nova 31's _check_old_computes on sample-cloud --release 2025.1: %q %s", out, errOut)
	}
	out, errOut, _ = cmdtest.Rpctl(t, "--config-file", conf, "status", "--release", "2025.1", "--check", "nova-status", "-f", "value", "-c", "Check", "-c", "Result", "-c", "Details")
	var rpctl string
	for _, line := range strings.Split(out, "\n") {
		if rest, ok := strings.CutPrefix(line, "Older than N-1 computes "); ok {
			rpctl = strings.Replace(strings.TrimRight(rest, " "), " ", "|", 1)
			if !strings.Contains(rpctl, "|") {
				rpctl += "|"
			}
		}
	}
	if rpctl != nova31 {
		t.Errorf("Older than N-1 computes: rpctl status %q, Nova 31's nova-status %q\n%s%s", rpctl, nova31, out, errOut)
	}

	file := filepath.Join(t.TempDir(), "cloud.db")
	if out, errOut, code := cmdtest.Rpctl(t, "--db", file, "sample-cloud", "--release", "2025.1", "--nodes", "4"); code != 0 {
		t.Fatalf("sample-cloud --release 2025.1 --db: exit %d\n%s%s", code, out, errOut)
	}
	if out, errOut, code := cmdtest.Rpctl(t, "--db", file, "migrate", "compute-ids", "--release", "2025.1"); code != 0 || !strings.Contains(out, "populate_instance_compute_id") {
		t.Errorf("migrate compute-ids on sample-cloud --release 2025.1's file: exit %d\n%s%s", code, out, errOut)
	}
}

// TestInitRulesOnlyRelease: a release rpctl knows by its rules only
// (2023.1-2024.2) has no schema here: init creates no table in an empty
// database and says whose db sync makes them, and accepts databases whose
// tables exist (as that release's own db sync left them), syncing its
// standard traits.
func TestInitRulesOnlyRelease(t *testing.T) {
	// An empty database gets the release's schema: 2024.1's is 2025.1's for
	// the tables rpctl holds (schema.ddlShared; TestMySQLSchemaMatchesRealDBSyncRulesOnly
	// runs the real migrations to 2024.1's heads).
	empty := filepath.Join(t.TempDir(), "empty.db")
	if out, errOut, code := cmdtest.Rpctl(t, "--db", empty, "init", "--release", "2024.1"); code != 0 || !strings.Contains(out, "created") {
		t.Fatalf("init --release 2024.1 on an empty database: exit %d\n%s%s", code, out, errOut)
	}
	db := testdb.Open(t, "sqlite:///"+empty, storage.RoleCell)
	var n int
	if err := db.QueryRowContext(context.Background(), "SELECT COUNT(*) FROM instances WHERE compute_id IS NULL").Scan(&n); err != nil {
		t.Errorf("2024.1's instances have no compute_id: %v", err)
	}
	// A complete schema, whichever release made it, is accepted as it is.
	made := filepath.Join(t.TempDir(), "made.db")
	if _, errOut, code := cmdtest.Rpctl(t, "--db", made, "init"); code != 0 {
		t.Fatalf("init: %s", errOut)
	}
	out, errOut, code := cmdtest.Rpctl(t, "--db", made, "init", "--release", "2024.1")
	if code != 0 || strings.Contains(out, "created") {
		t.Errorf("init --release 2024.1 on a complete schema: exit %d\n%s%s", code, out, errOut)
	}
	// A release rpctl does not know is refused, naming those it does.
	out, errOut, code = cmdtest.Rpctl(t, "--db", filepath.Join(t.TempDir(), "x.db"), "init", "--release", "2025.2")
	if code == 0 || !strings.Contains(out+errOut, "2025.1") {
		t.Errorf("init --release 2025.2: exit %d\n%s%s", code, out, errOut)
	}
}

// TestSampleCloudRulesOnlyRelease: sample-cloud --release of a release rpctl
// knows by rules only writes that release's row shape into its schema
// (init --release): 2023.2's and 2024.1's instances carry their node's
// compute_id, 2023.1's (Nova 27, Zed's shape) have none; 2024.1's rows into
// Zed's schema are refused naming the column and the release, and nothing
// is written.
func TestSampleCloudRulesOnlyRelease(t *testing.T) {
	schema := func(rel string) string {
		t.Helper()
		db := filepath.Join(t.TempDir(), "cloud.db")
		for _, f := range []string{db, db + "_cell0"} {
			if _, errOut, code := cmdtest.Rpctl(t, "--db", f, "init", "--release", rel); code != 0 {
				t.Fatalf("init --release %s: %s", rel, errOut)
			}
		}
		return db
	}
	count := func(db, q string) int {
		t.Helper()
		c := testdb.Open(t, "sqlite:///"+db, storage.RoleCell)
		var n int
		if err := c.QueryRowContext(context.Background(), q).Scan(&n); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return n
	}
	for _, tc := range []struct {
		schema, release string
		want            string // "" for exit 0
	}{
		{"2024.1", "2024.1", ""},
		{"2023.2", "2023.2", ""},
		{"2023.1", "2023.1", ""},
		{"zed", "2024.1", "instances.compute_id and migrations.dest_compute_id, which Nova 28 (2023.2) added"},
	} {
		t.Run(tc.schema+"/"+tc.release, func(t *testing.T) {
			db := schema(tc.schema)
			out, errOut, code := cmdtest.Rpctl(t, "--db", db, "sample-cloud", "--release", tc.release, "--nodes", "6", "--seed", "2")
			if tc.want != "" {
				if code != 255 || !strings.Contains(errOut, tc.want) {
					t.Fatalf("exit %d, want 255 naming %q:\n%s%s", code, tc.want, out, errOut)
				}
				if n := count(db, "SELECT COUNT(*) FROM compute_nodes"); n != 0 {
					t.Errorf("%d compute nodes written by a refused run", n)
				}
				return
			}
			if code != 0 {
				t.Fatalf("exit %d\n%s%s", code, out, errOut)
			}
			placed := count(db, "SELECT COUNT(*) FROM instances WHERE node IS NOT NULL")
			if placed == 0 {
				t.Fatal("no instance on a node")
			}
			if tc.release == "2023.1" {
				return // no compute_id column to check
			}
			if n := count(db, `SELECT COUNT(*) FROM instances i JOIN compute_nodes n ON n.id = i.compute_id AND n.host = i.host AND n.hypervisor_hostname = i.node`); n != placed {
				t.Errorf("%d of %d instances on a node carry its compute_id", n, placed)
			}
		})
	}
}
