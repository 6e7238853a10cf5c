package schema_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/internal/dsn"
	"github.com/rpctl/rpctl/internal/release"
	"github.com/rpctl/rpctl/internal/standards"
	"github.com/rpctl/rpctl/internal/testdb"
	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/placementdb"
	"github.com/rpctl/rpctl/storage/schema"
)

// referenceDBSync creates the three schemas with Nova's and Placement's own
// tools (scripts/reference-dbsync.sh).
func referenceDBSync(t *testing.T, prefix, cell, api, placement string) {
	t.Helper()
	testdb.RequirePython(t, "nova.cmd.manage", "placement", "pymysql")
	script := filepath.Join(testdb.RepoRoot(), "scripts", "reference-dbsync.sh")
	out, err := exec.Command(script, prefix, cell, api, placement).CombinedOutput()
	if err != nil {
		t.Fatalf("reference db sync: %v\n%s", err, out)
	}
}

// describeMySQL lists, for the given tables, every column (name, type,
// nullability, default, extra), index (name, uniqueness, column order) and
// foreign key, one string per fact, from information_schema.
func describeMySQL(t *testing.T, admin *sql.DB, schema string, tables []string) []string {
	t.Helper()
	in := "'" + strings.Join(tables, "','") + "'"
	queries := []string{
		`SELECT CONCAT_WS('|', 'column', table_name, ordinal_position, column_name, column_type, is_nullable, COALESCE(column_default, '<none>'), extra, COALESCE(character_set_name, ''), COALESCE(collation_name, ''))
		   FROM information_schema.columns WHERE table_schema = ? AND table_name IN (` + in + `)`,
		`SELECT CONCAT_WS('|', 'index', table_name, index_name, non_unique, seq_in_index, column_name)
		   FROM information_schema.statistics WHERE table_schema = ? AND table_name IN (` + in + `)`,
		`SELECT CONCAT_WS('|', 'fk', table_name, constraint_name, column_name, referenced_table_name, referenced_column_name)
		   FROM information_schema.key_column_usage WHERE table_schema = ? AND referenced_table_name IS NOT NULL AND table_name IN (` + in + `)`,
		`SELECT CONCAT_WS('|', 'table', table_name, engine, table_collation)
		   FROM information_schema.tables WHERE table_schema = ? AND table_name IN (` + in + `)`,
	}
	var facts []string
	for _, q := range queries {
		rows, err := admin.Query(q, schema)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				t.Fatal(err)
			}
			facts = append(facts, s)
		}
		rows.Close()
	}
	return facts
}

func diffFacts(want, got []string) (missing, extra []string) {
	w, g := map[string]bool{}, map[string]bool{}
	for _, s := range want {
		w[s] = true
	}
	for _, s := range got {
		g[s] = true
	}
	for _, s := range want {
		if !g[s] {
			missing = append(missing, s)
		}
	}
	for _, s := range got {
		if !w[s] {
			extra = append(extra, s)
		}
	}
	return
}

// TestMySQLSchemaMatchesRealDBSync proves that what `rpctl init` creates on
// MariaDB is, column for column and index for index, what Nova 26's and
// Placement 8.0.0's own db sync create, for every table rpctl uses.
func TestMySQLSchemaMatchesRealDBSync(t *testing.T) {
	refCell, refAPI, refPl := testdb.NewMySQL(t), testdb.NewMySQL(t), testdb.NewMySQL(t)
	prefix := strings.TrimSuffix(refCell.URL[:strings.LastIndex(refCell.URL, "/")], "/")
	referenceDBSync(t, prefix, refCell.Name+"?charset=utf8", refAPI.Name+"?charset=utf8", refPl.Name+"?charset=utf8")
	compareMySQLSchema(t, release.Zed, refCell, refAPI, refPl)
}

// TestMySQLSchemaMatchesRealDBSync2025_1 is the same for 2025.1 (issue
// 33): `rpctl init --release 2025.1` against Nova 31.0.0's and Placement
// 13.0.0's own db sync in the release chroot (instances.compute_id,
// migrations.dest_compute_id and their indexes, Placement's five dropped
// indexes, alembic a082b8bb98d0), and Zed's schema is not what they make.
func TestMySQLSchemaMatchesRealDBSync2025_1(t *testing.T) {
	chroot := testdb.ReleaseChroot(t, "2025.1")
	refCell, refAPI, refPl := testdb.NewMySQL(t), testdb.NewMySQL(t), testdb.NewMySQL(t)
	chroot.DBSync(t, refCell, refAPI, refPl)
	compareMySQLSchema(t, release.R2025_1, refCell, refAPI, refPl)

	// The test can fail: Zed's schema differs from Nova 31's db sync in
	// the facts issue 33 names.
	zed := testdb.NewMySQL(t)
	if _, err := schema.InitRelease(context.Background(), testdb.Open(t, zed.DSN, storage.RoleCell), release.Zed, schema.PartCell); err != nil {
		t.Fatal(err)
	}
	tables := schema.Tables(schema.PartCell)
	missing, _ := diffFacts(describeMySQL(t, refCell.Admin, refCell.Name, tables), describeMySQL(t, zed.Admin, zed.Name, tables))
	if !slices.ContainsFunc(missing, func(s string) bool { return strings.Contains(s, "|compute_id|") }) {
		t.Errorf("Zed's cell schema has everything Nova 31's db sync makes: %v", missing)
	}
}

// compareMySQLSchema inits empty databases with rpctl's schema of rel and
// compares them with the reference databases rel's own db sync made.
func compareMySQLSchema(t *testing.T, rel release.Name, refCell, refAPI, refPl *testdb.MySQL) {
	t.Helper()
	ctx := context.Background()
	ourCell, ourAPI, ourPl := testdb.NewMySQL(t), testdb.NewMySQL(t), testdb.NewMySQL(t)
	for _, tc := range []struct {
		part     schema.Part
		ref, our *testdb.MySQL
		role     storage.Role
	}{
		{schema.PartCell, refCell, ourCell, storage.RoleCell},
		{schema.PartAPI, refAPI, ourAPI, storage.RoleAPI},
		{schema.PartPlacement, refPl, ourPl, storage.RolePlacement},
	} {
		t.Run(string(tc.part), func(t *testing.T) {
			db := testdb.Open(t, tc.our.DSN, tc.role)
			if _, err := schema.InitRelease(ctx, db, rel, tc.part); err != nil {
				t.Fatal(err)
			}
			tables := schema.Tables(tc.part)
			want := describeMySQL(t, tc.ref.Admin, tc.ref.Name, tables)
			got := describeMySQL(t, tc.our.Admin, tc.our.Name, tables)
			if len(want) < len(tables)*2 {
				t.Fatalf("reference schema has only %d facts for %d tables: db sync did not create them?", len(want), len(tables))
			}
			missing, extra := diffFacts(want, got)
			for _, m := range missing {
				t.Errorf("rpctl schema (%s) lacks: %s", rel, m)
			}
			for _, e := range extra {
				t.Errorf("rpctl schema (%s) has extra: %s", rel, e)
			}
		})
	}

	// The whole Placement schema, not just a subset, and the same revision.
	plTables := func(db *testdb.MySQL) []string {
		rows, err := db.Admin.Query(`SELECT table_name FROM information_schema.tables WHERE table_schema = ? ORDER BY table_name`, db.Name)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var s string
			rows.Scan(&s)
			out = append(out, s)
		}
		return out
	}
	if w, g := plTables(refPl), plTables(ourPl); fmt.Sprint(w) != fmt.Sprint(g) {
		t.Errorf("Placement tables: db sync made %v, rpctl made %v", w, g)
	}
	var wantRev, gotRev string
	refPl.Admin.QueryRow("SELECT version_num FROM `" + refPl.Name + "`.alembic_version").Scan(&wantRev)
	ourPl.Admin.QueryRow("SELECT version_num FROM `" + ourPl.Name + "`.alembic_version").Scan(&gotRev)
	if wantRev != gotRev || wantRev == "" {
		t.Errorf("alembic revision (%s): db sync %q, rpctl %q", rel, wantRev, gotRev)
	}
}

var ws = regexp.MustCompile(`\s+`)

// TestSQLiteSchemaMatchesRealDBSync does the same for the embedded default:
// the DDL SQLAlchemy emits for SQLite when Nova and Placement sync a SQLite
// database is the DDL rpctl runs.
func TestSQLiteSchemaMatchesRealDBSync(t *testing.T) {
	dir := t.TempDir()
	referenceDBSync(t, "sqlite:///", filepath.Join(dir, "nova.db"), filepath.Join(dir, "api.db"), filepath.Join(dir, "placement.db"))
	compareSQLiteSchema(t, release.Zed, dir)
}

// TestSQLiteSchemaMatchesRealDBSync2025_1 is the same for 2025.1: Nova
// 31's and Placement 13's db sync on SQLite files in the release chroot
// (scripts/reference-dbsync.sh run inside it).
func TestSQLiteSchemaMatchesRealDBSync2025_1(t *testing.T) {
	chroot := testdb.ReleaseChroot(t, "2025.1")
	dir := chroot.TempDir(t)
	script, err := os.ReadFile(filepath.Join(testdb.RepoRoot(), "scripts", "reference-dbsync.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "reference-dbsync.sh"), script, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := chroot.Run("bash", filepath.Join(dir, "reference-dbsync.sh"), "sqlite:///", filepath.Join(dir, "nova.db"), filepath.Join(dir, "api.db"), filepath.Join(dir, "placement.db")); err != nil {
		t.Fatalf("2025.1's db sync on SQLite: %v\n%s", err, out)
	}
	compareSQLiteSchema(t, release.R2025_1, dir)
}

// compareSQLiteSchema inits a SQLite file with rpctl's schema of rel and
// compares its DDL with the files rel's own db sync made in dir.
func compareSQLiteSchema(t *testing.T, rel release.Name, dir string) {
	t.Helper()
	ours := filepath.Join(dir, "rpctl.db")
	db, err := storage.Open(context.Background(), dsn.SQLiteFile(ours), storage.RoleCell, "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := schema.InitRelease(context.Background(), db, rel, schema.PartCell, schema.PartAPI, schema.PartPlacement); err != nil {
		t.Fatal(err)
	}
	for part, ref := range map[schema.Part]string{schema.PartCell: "nova.db", schema.PartAPI: "api.db", schema.PartPlacement: "placement.db"} {
		refDB, err := sql.Open("sqlite", filepath.Join(dir, ref))
		if err != nil {
			t.Fatal(err)
		}
		for _, table := range schema.Tables(part) {
			w := sqliteDDL(t, refDB, table)
			g := sqliteDDL(t, db.DB.DB, table)
			if w == "" {
				t.Errorf("%s: reference db sync (%s) created no table %s", part, rel, table)
			}
			if w != g {
				t.Errorf("%s.%s DDL differs (%s)\n db sync: %s\n rpctl:   %s", part, table, rel, w, g)
			}
		}
		refDB.Close()
	}
	var rev string
	if err := db.Get(&rev, `SELECT version_num FROM alembic_version`); err != nil {
		t.Fatal(err)
	}
	refDB, err := sql.Open("sqlite", filepath.Join(dir, "placement.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer refDB.Close()
	var want string
	if err := refDB.QueryRow(`SELECT version_num FROM alembic_version`).Scan(&want); err != nil || want != rev {
		t.Errorf("alembic revision (%s): db sync %q (%v), rpctl %q", rel, want, err, rev)
	}
}

func sqliteDDL(t *testing.T, db *sql.DB, table string) string {
	rows, err := db.Query(`SELECT sql FROM sqlite_master WHERE tbl_name = ? AND sql IS NOT NULL ORDER BY type DESC, name`, table)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var parts []string
	for rows.Next() {
		var s string
		rows.Scan(&s)
		parts = append(parts, ws.ReplaceAllString(s, " "))
	}
	return strings.Join(parts, "; ")
}

// TestRealPlacementAPIAcceptsRpctlDatabase starts the real placement-api on
// a Placement database that rpctl created and checks it serves it.
func TestRealPlacementAPIAcceptsRpctlDatabase(t *testing.T) {
	my := testdb.NewMySQL(t)
	db := testdb.Open(t, my.DSN, storage.RolePlacement)
	if _, err := schema.Init(context.Background(), db, schema.PartPlacement); err != nil {
		t.Fatal(err)
	}
	base := testdb.PlacementAPI(t, my.URL)
	for _, path := range []string{"/resource_providers", "/resource_classes", "/traits?name=startswith:HW_CPU_X86_AVX", "/allocation_candidates?resources=VCPU:1"} {
		code, body := testdb.PlacementGet(t, base, path, "1.39")
		if code != 200 {
			t.Errorf("GET %s: %d %s", path, code, body)
		}
	}
	// Placement syncs the standard classes and traits on its first requests;
	// rpctl's rows must be what it would have written, so that it added
	// nothing and renumbered nothing (a class's id is its index).
	var classes []struct {
		ID   int    `db:"id"`
		Name string `db:"name"`
	}
	if err := db.Select(&classes, `SELECT id, name FROM resource_classes ORDER BY id`); err != nil {
		t.Fatal(err)
	}
	std := placementdb.StandardResourceClasses()
	if len(classes) != len(std) {
		t.Errorf("resource_classes has %d rows after placement-api started, want %d", len(classes), len(std))
	}
	for i, c := range classes {
		if i < len(std) && (c.ID != i || c.Name != std[i]) {
			t.Errorf("resource class %s has id %d, want %s at %d", c.Name, c.ID, std[i], i)
		}
	}
	var traits int
	if err := db.Get(&traits, `SELECT COUNT(*) FROM traits`); err != nil {
		t.Fatal(err)
	}
	if traits != len(standards.Traits()) {
		t.Errorf("traits has %d rows after placement-api started, want %d", traits, len(standards.Traits()))
	}
}

// TestRealPlacementAPIAcceptsRpctlDatabase2025_1: Placement 13.0.0's own
// placement-api serves a Placement database `rpctl init --release 2025.1`
// created, and adds or renumbers no resource class or trait.
func TestRealPlacementAPIAcceptsRpctlDatabase2025_1(t *testing.T) {
	chroot := testdb.ReleaseChroot(t, "2025.1")
	my := testdb.NewMySQL(t)
	db := testdb.Open(t, my.DSN, storage.RolePlacement)
	if _, err := schema.InitRelease(context.Background(), db, release.R2025_1, schema.PartPlacement); err != nil {
		t.Fatal(err)
	}
	count := func(table string) int {
		var n int
		if err := db.Get(&n, `SELECT COUNT(*) FROM `+table); err != nil {
			t.Fatal(err)
		}
		return n
	}
	classes, traits := count("resource_classes"), count("traits")
	base := chroot.PlacementAPI(t, my.URL, "")
	for _, path := range []string{"/resource_providers", "/resource_classes", "/traits?name=startswith:COMPUTE_SECURITY_TPM", "/allocation_candidates?resources=VCPU:1"} {
		code, body := testdb.PlacementGet(t, base, path, "1.39")
		if code != 200 {
			t.Errorf("GET %s: %d %s", path, code, body)
		}
	}
	if c, tr := count("resource_classes"), count("traits"); c != classes || tr != traits || tr != len(standards.TraitsOf(release.R2025_1)) {
		t.Errorf("after Placement 13 started: %d classes (rpctl wrote %d), %d traits (rpctl wrote %d, os-traits 3.4.0 has %d)",
			c, classes, tr, traits, len(standards.TraitsOf(release.R2025_1)))
	}
}

// TestMySQLSchemaMatchesRealDBSyncRulesOnly: the releases rpctl knows by
// rules only (2023.1-2024.2) have no packages here to run, but their
// migrations are Nova 31's and Placement 13's first ones, unchanged once
// released: run to each release's heads in the 2025.1 chroot (nova-manage
// db sync / api_db sync REVISION, Placement's alembic upgrade REVISION),
// they make that release's schema, which rpctl init --release must make.
// The heads, from each tag's migrations/versions: Nova 27.0.0 cell
// 960aac0e09ea, API b30f573d3377; Nova 28.0.0 cell 1acf2c98e646, API
// cdeec0c85668; Nova 29.0.0 and 30.0.0 cell 13863f4e1612; Placement 9.0.0
// 422ece571366 (8.0.0's), 10.0.0-12.0.0 a082b8bb98d0 (the chains read by
// down_revision, as status.cellHeads lists the cell's).
func TestMySQLSchemaMatchesRealDBSyncRulesOnly(t *testing.T) {
	chroot := testdb.ReleaseChroot(t, "2025.1")
	for _, tc := range []struct {
		rel   release.Name
		heads testdb.Heads
	}{
		{release.R2023_1, testdb.Heads{Cell: "960aac0e09ea", API: "b30f573d3377", Placement: "422ece571366"}},
		{release.R2023_2, testdb.Heads{Cell: "1acf2c98e646", API: "cdeec0c85668", Placement: "a082b8bb98d0"}},
		{release.R2024_1, testdb.Heads{Cell: "13863f4e1612", API: "cdeec0c85668", Placement: "a082b8bb98d0"}},
		{release.R2024_2, testdb.Heads{Cell: "13863f4e1612", API: "cdeec0c85668", Placement: "a082b8bb98d0"}},
	} {
		t.Run(string(tc.rel), func(t *testing.T) {
			refCell, refAPI, refPl := testdb.NewMySQL(t), testdb.NewMySQL(t), testdb.NewMySQL(t)
			chroot.DBSyncTo(t, refCell, refAPI, refPl, tc.heads)
			compareMySQLSchema(t, tc.rel, refCell, refAPI, refPl)
		})
	}
}
