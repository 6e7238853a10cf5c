package schema_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/internal/release"
	"github.com/rpctl/rpctl/storage/schema"
)

// TestEveryReleaseHasItsSchema: every release has its db sync's DDL, for
// both dialects and every part, with the tables of the default release
// (the tables rpctl reads and writes exist in each), and the versions in
// the header of the dump its cell schema is read from: its own for the
// releases proven by running them and for 2023.1's cell, the release whose
// dumps they share for the others (ddlShared; proven against their own
// migrations by TestMySQLSchemaMatchesRealDBSyncRulesOnly).
func TestEveryReleaseHasItsSchema(t *testing.T) {
	var proven []string
	for _, rel := range release.Names() {
		proven = append(proven, string(rel))
	}
	if got := schema.DDLReleases(); !slices.Equal(got, proven) {
		t.Fatalf("releases with a schema %v, want every release %v", got, proven)
	}
	wantNova := map[release.Name]string{release.Zed: "26.2.2", release.R2023_1: "27.0.0", release.R2023_2: "31.0.0",
		release.R2024_1: "31.0.0", release.R2024_2: "31.0.0", release.R2025_1: "31.0.0"}
	for _, name := range proven {
		rel := release.Name(name)
		if nova, pl := schema.SchemaReleasesOf(rel); nova != wantNova[rel] || pl == "" {
			t.Errorf("%s: schema dumped from nova %q, placement %q; want nova %s", rel, nova, pl, wantNova[rel])
		}
		for _, part := range []schema.Part{schema.PartCell, schema.PartAPI, schema.PartPlacement} {
			for _, dialect := range []string{"mysql", "sqlite"} {
				stmts, err := schema.SchemaStatementsOf(rel, part, dialect)
				if err != nil {
					t.Fatalf("%s %s %s: %v", rel, part, dialect, err)
				}
				var tables []string
				for _, s := range stmts {
					if !slices.Contains(tables, s.Table) {
						tables = append(tables, s.Table)
					}
				}
				if !slices.Equal(tables, schema.Tables(part)) {
					t.Errorf("%s %s %s: tables %v, want %v", rel, part, dialect, tables, schema.Tables(part))
				}
			}
		}
	}
	// 2025.1's row shapes: the columns Nova 31 added.
	cell, _ := schema.SchemaStatementsOf(release.R2025_1, schema.PartCell, "mysql")
	zed, _ := schema.SchemaStatementsOf(release.Zed, schema.PartCell, "mysql")
	has := func(stmts []schema.Statement, table, col string) bool {
		for _, s := range stmts {
			if s.Table == table && strings.Contains(s.SQL, "`"+col+"` bigint") {
				return true
			}
		}
		return false
	}
	for _, c := range [][2]string{{"instances", "compute_id"}, {"migrations", "dest_compute_id"}} {
		if !has(cell, c[0], c[1]) || has(zed, c[0], c[1]) {
			t.Errorf("%s.%s: in 2025.1's schema %v (want true), in Zed's %v (want false)", c[0], c[1], has(cell, c[0], c[1]), has(zed, c[0], c[1]))
		}
	}
	if _, err := schema.SchemaStatementsOf("2025.2", schema.PartCell, "mysql"); err == nil || !strings.Contains(err.Error(), "2025.1") {
		t.Errorf("a release without a schema: %v", err)
	}
	// 2023.1's cell: Zed's without instances' duplicate uuid index
	// (960aac0e09ea), no compute_id yet.
	r23, _ := schema.SchemaStatementsOf(release.R2023_1, schema.PartCell, "mysql")
	uuidIndex := func(stmts []schema.Statement) bool {
		for _, s := range stmts {
			if s.Table == "instances" && strings.Contains(s.SQL, "UNIQUE KEY `uuid` (`uuid`)") {
				return true
			}
		}
		return false
	}
	if !uuidIndex(zed) || uuidIndex(r23) || uuidIndex(cell) || has(r23, "instances", "compute_id") {
		t.Errorf("instances' uuid index: Zed %v (want true), 2023.1 %v, 2025.1 %v (want false); 2023.1 compute_id %v (want false)",
			uuidIndex(zed), uuidIndex(r23), uuidIndex(cell), has(r23, "instances", "compute_id"))
	}
}
