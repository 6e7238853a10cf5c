package schema

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/rpctl/rpctl/internal/release"
	"github.com/rpctl/rpctl/storage"
)

//go:embed sql/*/*.sql sql/*/*.txt
var schemaFS embed.FS

// ddlDir is the directory of release rel's DDL of part: what its own db
// sync creates (scripts/dump-reference-schema.sh: Zed from the host's
// Debian 12 packages, 2025.1 from the release chroot's Debian 13 ones), one
// directory per release, so that a release's schema is a table of files
// keyed by its name rather than conditions in the code that runs it. The
// releases rpctl knows by rules only take a proven release's files where
// their db sync makes the same tables (ddlShared), less the lines their
// own migrations drop (ddlEdits: 2023.1's cell). A release without one is
// an error naming the releases that have one.
func ddlDir(rel release.Name, part Part) (string, error) {
	if rel == "" {
		rel = release.Default
	}
	src := rel
	if shared, ok := ddlShared()[rel][part]; ok {
		src = shared
	}
	dir := "sql/" + string(src)
	if _, err := fs.Stat(schemaFS, dir+"/mysql_"+string(part)+".sql"); err != nil {
		return "", fmt.Errorf("rpctl holds no schema of release %q (it has %s)", rel, strings.Join(DDLReleases(), ", "))
	}
	return dir, nil
}

// ddlShared names, for a release known by rules only, the release whose
// dump of a part is what its own db sync creates for the tables rpctl
// holds (its cell tables, its API tables, all of Placement's), read from
// the migrations of each tag and proven by running each release's heads
// with Nova 31's and Placement 13's own migrations in the 2025.1 chroot
// (TestMySQLSchemaMatchesRealDBSyncRulesOnly):
//   - 2023.1 (Nova 27, Placement 9): as Zed (no API migration; Placement
//     9.0.0's head is 8.0.0's 422ece571366); the cell less instances'
//     duplicate `uuid` index (ddlEdits).
//   - 2023.2, 2024.1, 2024.2 (Nova 28-30, Placement 10-12): as 2025.1. The
//     cell has compute_id (1acf2c98e646, Nova 28); the later cell
//     migrations (13863f4e1612, 2903cd72dc14, d60bddf7a903) touch only
//     share_mapping and console_auth_tokens; the API's cdeec0c85668 drops
//     migrate_version; Placement 10.0.0-13.0.0 share head a082b8bb98d0.
func ddlShared() map[release.Name]map[Part]release.Name {
	as2025 := map[Part]release.Name{PartCell: release.R2025_1, PartAPI: release.R2025_1, PartPlacement: release.R2025_1}
	return map[release.Name]map[Part]release.Name{
		release.R2023_1: {PartCell: release.Zed, PartAPI: release.Zed, PartPlacement: release.Zed},
		release.R2023_2: as2025,
		release.R2024_1: as2025,
		release.R2024_2: as2025,
	}
}

// ddlEdit is how a rules-only release's part differs from the dump it
// shares (ddlShared): the lines its own migrations drop (whole lines, of
// either dialect's file), and the versions of Nova and Placement whose db
// sync it is (SchemaReleasesOf; the shared dump's header names its own).
type ddlEdit struct {
	drop            []string
	nova, placement string
}

// ddlEdits: 2023.1's cell is Zed's without instances' duplicate `uuid`
// index, dropped by Nova 27's only cell migration that touches the tables
// rpctl holds (960aac0e09ea_de_duplicate_indexes_in_instances__.py).
// Derived rather than a copy of Zed's files, so that a new dump of Zed
// cannot leave it behind; a dump without the line fails (ddlText).
func ddlEdits() map[release.Name]map[Part]ddlEdit {
	return map[release.Name]map[Part]ddlEdit{
		release.R2023_1: {PartCell: {
			drop:      []string{"  UNIQUE KEY `uuid` (`uuid`),", "CREATE UNIQUE INDEX uuid ON instances (uuid);"},
			nova:      "27.0.0",
			placement: "9.0.0",
		}},
	}
}

// ddlText is part's DDL for dialect ("mysql" or "sqlite") as rel's db
// sync makes it: its dump (ddlDir), less ddlEdits' lines.
func ddlText(rel release.Name, part Part, dialect string) (string, error) {
	dir, err := ddlDir(rel, part)
	if err != nil {
		return "", err
	}
	b, err := schemaFS.ReadFile(fmt.Sprintf("%s/%s_%s.sql", dir, dialect, part))
	if err != nil {
		return "", err
	}
	edit, ok := ddlEdits()[rel][part]
	if !ok {
		return string(b), nil
	}
	var kept []string
	for _, l := range strings.Split(string(b), "\n") {
		if !slices.Contains(edit.drop, l) {
			kept = append(kept, l)
		}
	}
	if n := strings.Count(string(b), "\n") + 1 - len(kept); n != 1 {
		return "", fmt.Errorf("schema %s/%s of %s: %s has %d of the lines %s's migrations drop, want 1", dialect, part, rel, dir, n, rel)
	}
	return strings.Join(kept, "\n"), nil
}

// DDLReleases lists the releases whose schemas rpctl can create, in
// release order.
func DDLReleases() []string {
	var out []string
	for _, n := range release.Names() {
		if _, err := ddlDir(n, PartCell); err == nil {
			out = append(out, string(n))
		}
	}
	return out
}

// Part is one of the three schemas rpctl can create.
type Part string

// The schema parts. The embedded default database holds all three in one
// SQLite file.
const (
	PartCell      Part = "cell"
	PartAPI       Part = "api"
	PartPlacement Part = "placement"
)

// Statement is one CREATE statement of a part, for the table it belongs to.
type Statement struct {
	Table string
	SQL   string
}

// Compiled on first use: nothing runs at package init.
var (
	createTableRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("(?i)^CREATE TABLE [`\"]?([a-z_0-9]+)") })
	createIndexRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)^CREATE (?:UNIQUE )?INDEX \S+ ON "?([a-z_0-9]+)`)
	})
)

// SchemaStatements returns the DDL of a part for a dialect ("mysql" or
// "sqlite") as generated by release.Default's db sync.
func SchemaStatements(part Part, dialect string) ([]Statement, error) {
	return SchemaStatementsOf(release.Default, part, dialect)
}

// SchemaStatementsOf returns the DDL of a part for a dialect ("mysql" or
// "sqlite") as generated by release rel's own db sync
// (scripts/dump-reference-schema.sh).
func SchemaStatementsOf(rel release.Name, part Part, dialect string) ([]Statement, error) {
	text, err := ddlText(rel, part, dialect)
	if err != nil {
		return nil, err
	}
	var out []Statement
	for _, chunk := range strings.Split(text, ";\n") {
		var lines []string
		for _, l := range strings.Split(chunk, "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), "--") {
				continue
			}
			lines = append(lines, l)
		}
		s := strings.TrimSpace(strings.Join(lines, "\n"))
		if s == "" {
			continue
		}
		var table string
		if m := createTableRE().FindStringSubmatch(s); m != nil {
			table = m[1]
		} else if m := createIndexRE().FindStringSubmatch(s); m != nil {
			table = m[1]
		} else {
			return nil, fmt.Errorf("schema %s/%s: unrecognised statement %.60q", dialect, part, s)
		}
		out = append(out, Statement{Table: table, SQL: s})
	}
	return out, nil
}

// Tables returns the table names of a part, in file order (the same in
// every release rpctl holds: TestTablesSameInEveryRelease).
func Tables(part Part) []string {
	stmts, err := SchemaStatementsOf(release.Default, part, "mysql")
	if err != nil {
		panic(err) // embedded at build time; cannot fail
	}
	var out []string
	seen := map[string]bool{}
	for _, s := range stmts {
		if !seen[s.Table] {
			seen[s.Table] = true
			out = append(out, s.Table)
		}
	}
	return out
}

// InitResult says what Init did with one part.
type InitResult struct {
	Part    Part
	Created []string // tables created
	Present []string // tables that were already there
}

// Init creates the tables of the given parts that do not exist yet. A part
// whose tables are all present (say, made by Nova's own db sync) is left as
// it is; a part with only some of its tables is refused rather than patched,
// since that is a database rpctl does not understand. For Placement it then
// stamps the alembic revision and syncs the standard resource classes and
// traits, as placement-manage db sync and the API's first start do.
func Init(ctx context.Context, db *storage.DB, parts ...Part) ([]InitResult, error) {
	return InitRelease(ctx, db, release.Default, parts...)
}

// InitRelease is Init for release rel: the tables are created as rel's own
// db sync creates them (its columns and indexes: 2025.1's instances have
// compute_id, its Placement five indexes fewer), Placement is stamped with
// rel's alembic revision and given rel's standard traits (os-traits of that
// release). A part whose tables are all present is left as it is, whatever
// release made it.
func InitRelease(ctx context.Context, db *storage.DB, rel release.Name, parts ...Part) ([]InitResult, error) {
	var results []InitResult
	for _, part := range parts {
		res, err := initPart(ctx, db, part, rel)
		if err != nil {
			return results, err
		}
		results = append(results, res)
		if part == PartPlacement {
			if err := stampAlembic(ctx, db, rel); err != nil {
				return results, err
			}
			if err := SyncStandards(ctx, db, rel); err != nil {
				return results, err
			}
		}
	}
	return results, nil
}

func initPart(ctx context.Context, db *storage.DB, part Part, rel release.Name) (InitResult, error) {
	res := InitResult{Part: part}
	dialect := "sqlite"
	if db.IsMySQL() {
		dialect = "mysql"
	}
	for _, t := range Tables(part) {
		ok, err := db.TableExists(ctx, t)
		if err != nil {
			return res, err
		}
		if ok {
			res.Present = append(res.Present, t)
		}
	}
	if len(res.Present) == len(Tables(part)) {
		// Whichever release's db sync made them: a release rpctl knows by
		// its rules only (2023.1-2024.2) is accepted here too.
		return res, nil
	}
	stmts, err := SchemaStatementsOf(rel, part, dialect)
	if err != nil {
		return res, db.Errorf("%w; the %s tables %s are created by %s's own db sync", err, part,
			strings.Join(missing(Tables(part), res.Present), ", "), rel)
	}
	absent := missing(Tables(part), res.Present)
	if len(res.Present) > 0 && slices.Equal(absent, addedLater[part]) {
		// A database rpctl created before these tables were in its
		// schema: they are added, nothing else is touched.
		keep := stmts[:0:0]
		for _, st := range stmts {
			if slices.Contains(absent, st.Table) {
				keep = append(keep, st)
			}
		}
		stmts = keep
	} else if len(res.Present) > 0 {
		return res, db.Errorf("the %s schema is incomplete: tables %s exist but %s do not; rpctl init only creates a schema in an empty database",
			part, strings.Join(res.Present, ", "), strings.Join(missing(Tables(part), res.Present), ", "))
	}
	// DDL is not transactional in MySQL; one connection keeps the session
	// setting that lets tables reference each other in any order.
	conn, err := db.Connx(ctx)
	if err != nil {
		return res, db.Errorf("%w", storage.CleanError(err))
	}
	defer conn.Close()
	if db.IsMySQL() {
		if _, err := conn.ExecContext(ctx, "SET SESSION foreign_key_checks = 0"); err != nil {
			return res, db.Errorf("%w", storage.CleanError(err))
		}
		defer conn.ExecContext(context.WithoutCancel(ctx), "SET SESSION foreign_key_checks = 1")
	}
	seen := map[string]bool{}
	for _, s := range stmts {
		if _, err := conn.ExecContext(ctx, s.SQL); err != nil {
			return res, db.Errorf("create %s: %w", s.Table, storage.CleanError(err))
		}
		if !seen[s.Table] {
			seen[s.Table] = true
			res.Created = append(res.Created, s.Table)
		}
	}
	return res, nil
}

// addedLater are the tables a part gained after rpctl first created it, in
// schema order; Init adds them to a database that has the rest.
var addedLater = map[Part][]string{
	PartAPI:  {"aggregates", "aggregate_hosts", "aggregate_metadata"},
	PartCell: {"pci_devices"},
}

func missing(all, present []string) []string {
	have := map[string]bool{}
	for _, p := range present {
		have[p] = true
	}
	var out []string
	for _, t := range all {
		if !have[t] {
			out = append(out, t)
		}
	}
	return out
}

// stampAlembic records the revision rel's placement-manage db sync would
// leave, so that a later real db sync treats the database as current.
func stampAlembic(ctx context.Context, db *storage.DB, rel release.Name) error {
	dir, err := ddlDir(rel, PartPlacement)
	if err != nil {
		// A release without a schema here reached this point only with
		// every table present: its own db sync made them, and stamped.
		return nil
	}
	b, err := schemaFS.ReadFile(dir + "/placement_alembic_version.txt")
	if err != nil {
		return err
	}
	rev := strings.TrimSpace(string(b))
	var n int
	if err := db.GetContext(ctx, &n, `SELECT COUNT(*) FROM alembic_version`); err != nil {
		return db.Errorf("read alembic_version: %w", storage.CleanError(err))
	}
	if n > 0 {
		return nil
	}
	if _, err := db.ExecContext(ctx, db.Rebind(`INSERT INTO alembic_version (version_num) VALUES (?)`), rev); err != nil {
		return db.Errorf("stamp alembic_version: %w", storage.CleanError(err))
	}
	return nil
}

// CreateCell0 gives cell Nova's cell0 database beside it, with the cell
// schema, as nova-manage cell_v2 map_cell0 then db sync leave it (a
// complete schema there is left alone), and returns the URL its
// cell_mappings row holds.
func CreateCell0(ctx context.Context, cell *storage.DB) (string, error) {
	return CreateCell0Release(ctx, cell, release.Default)
}

// CreateCell0Release is CreateCell0 with release rel's cell schema.
func CreateCell0Release(ctx context.Context, cell *storage.DB, rel release.Name) (string, error) {
	db, err := storage.OpenCell0(ctx, cell)
	if err != nil {
		return "", err
	}
	defer db.Close()
	if _, err := InitRelease(ctx, db, rel, PartCell); err != nil {
		return "", err
	}
	return storage.CellConnectionURL(cell, true)
}
