package placementdb_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/rpctl/rpctl/candidates"
	"github.com/rpctl/rpctl/internal/dsn"
	"github.com/rpctl/rpctl/internal/testdb"
	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/placementdb"
	"github.com/rpctl/rpctl/storage/schema"
)

// placementDBs returns an initialised, empty Placement database of each kind
// rpctl reads: the embedded SQLite file and MariaDB, the latter also opened
// as `rpctl candidates` opens it (storage.OpenReadScripts: each read's
// statements in one query, not a UNION).
func placementDBs(t *testing.T) map[string]*storage.DB {
	t.Helper()
	ctx := context.Background()
	out := map[string]*storage.DB{}
	lite, err := storage.Open(ctx, dsn.SQLiteFile(filepath.Join(t.TempDir(), "p.db")), storage.RolePlacement, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lite.Close() })
	out["sqlite"] = lite
	if testdb.MySQLWanted() {
		m := testdb.NewMySQL(t)
		out["mysql"] = testdb.Open(t, m.DSN, storage.RolePlacement)
		tg, err := dsn.Parse(testdb.NewMySQL(t).DSN)
		if err != nil {
			t.Fatal(err)
		}
		scripts, err := storage.OpenReadScripts(ctx, tg, storage.RolePlacement, "")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { scripts.Close() })
		if !scripts.ReadsScripts() {
			t.Fatal("OpenReadScripts: not ReadsScripts")
		}
		out["mysql scripts"] = scripts
	}
	for name, db := range out {
		if _, err := schema.Init(ctx, db, schema.PartPlacement); err != nil {
			t.Fatalf("%s: init: %v", name, err)
		}
	}
	return out
}

// TestLoadPlacementMatchesInput writes synthetic clouds (trees, sharing
// providers, custom classes, usages) with bulk INSERTs and checks that the
// model loaded back answers exactly like a model built from the input.
func TestLoadPlacementMatchesInput(t *testing.T) {
	ctx := context.Background()
	in := candidates.ScaleInput(400)
	// A custom class and a ratio that is not exact in float32 (MySQL stores
	// allocation_ratio as FLOAT).
	in.ResourceClasses = append(in.ResourceClasses, candidates.NamedRow{ID: 10000, Name: "CUSTOM_MAGIC"})
	in.Inventories = append(in.Inventories, candidates.InventoryRow{ProviderID: in.Providers[60].ID,
		ResourceClassID: 10000, Total: 10, MinUnit: 1, MaxUnit: 10, StepSize: 1, AllocationRatio: 1.1})
	want, err := candidates.NewModel(in)
	if err != nil {
		t.Fatal(err)
	}
	queries := []string{
		"resources=VCPU:2,MEMORY_MB:4096,DISK_GB:20&required=HW_CPU_X86_AVX2&limit=50",
		"resources=DISK_GB:20&resources_NET=SRIOV_NET_VF:1&required_NET=CUSTOM_PHYSNET1&group_policy=none&limit=20",
		"resources=CUSTOM_MAGIC:11",
		"resources=VCPU:1&member_of=" + candidates.SyntheticUUID(5, 3),
	}
	for name, db := range placementDBs(t) {
		t.Run(name, func(t *testing.T) {
			if err := placementdb.WriteSyntheticPlacement(ctx, db, in); err != nil {
				t.Fatal(err)
			}
			got, err := placementdb.LoadPlacement(ctx, db)
			if err != nil {
				t.Fatal(err)
			}
			if got.NumProviders() != want.NumProviders() {
				t.Fatalf("%d providers, want %d", got.NumProviders(), want.NumProviders())
			}
			for _, q := range queries {
				a, b := answer(t, want, q), answer(t, got, q)
				if a != b {
					t.Errorf("%s:\nloaded: %.300s\ninput:  %.300s", q, b, a)
				}
			}
			if err := placementdb.WriteSyntheticPlacement(ctx, db, in); err == nil || !strings.Contains(err.Error(), "already has") {
				t.Errorf("second write: %v", err)
			}
		})
	}
}

func answer(t *testing.T, m *candidates.Model, q string) string {
	t.Helper()
	req, err := candidates.ParseQuery(q, candidates.MaxMicroversion)
	if err != nil {
		t.Fatal(err)
	}
	return answerReq(t, m, req)
}

// TestLoadPlacementBadData: a database no Placement could have written is
// reported in one line naming the database, never half-loaded.
func TestLoadPlacementBadData(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name string
		sql  []string
		want string
	}{
		{"parent cycle", []string{
			`INSERT INTO resource_providers (id, uuid, name, generation, root_provider_id) VALUES (1, 'aaaaaaaa-0000-4000-8000-000000000001', 'a', 1, 1)`,
			`INSERT INTO resource_providers (id, uuid, name, generation, root_provider_id, parent_provider_id) VALUES (2, 'aaaaaaaa-0000-4000-8000-000000000002', 'b', 1, 1, 1)`,
			`UPDATE resource_providers SET parent_provider_id = 2 WHERE id = 1`,
		}, "parent cycle"},
		{"unknown class", []string{
			`INSERT INTO resource_providers (id, uuid, name, generation, root_provider_id) VALUES (1, 'aaaaaaaa-0000-4000-8000-000000000001', 'a', 1, 1)`,
			`INSERT INTO inventories (resource_provider_id, resource_class_id, total, reserved, min_unit, max_unit, step_size, allocation_ratio) VALUES (1, 12345, 1, 0, 1, 1, 1, 1.0)`,
		}, "unknown resource class id 12345"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for name, db := range placementDBs(t) {
				for _, s := range c.sql {
					if _, err := db.ExecContext(ctx, s); err != nil {
						t.Fatalf("%s: %v", name, err)
					}
				}
				_, err := placementdb.LoadPlacement(ctx, db)
				if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "Placement database") || strings.Contains(err.Error(), "\n") {
					t.Errorf("%s: %v, want one line with %q", name, err, c.want)
				}
			}
		})
	}
	t.Run("not a placement database", func(t *testing.T) {
		db, err := storage.Open(ctx, dsn.SQLiteFile(filepath.Join(t.TempDir(), "empty.db")), storage.RolePlacement, "")
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		_, err = placementdb.LoadPlacement(ctx, db)
		if err == nil || !strings.Contains(err.Error(), "no Placement table resource_providers") {
			t.Errorf("got %v", err)
		}
	})
}

// TestLoadPlacementRatioSource: the loader tells the model where its ratios
// came from. MariaDB's FLOAT column arrives twice, as the six-digit text
// PyMySQL hands Placement's Python code and as the exact widened float32
// Placement's SQL filter multiplies by; SQLite's REAL is one double.
// pymysqlRatios reads every inventory's allocation_ratio of db as Placement
// does, through PyMySQL, by provider id.
func pymysqlRatios(t *testing.T, db *storage.DB) map[int64]float64 {
	t.Helper()
	testdb.RequirePython(t, "pymysql")
	cfg, err := mysql.ParseDSN(db.Target.DSN)
	if err != nil {
		t.Fatal(err)
	}
	host, port, err := net.SplitHostPort(cfg.Addr)
	if err != nil {
		t.Fatal(err)
	}
	script := `import json, os, pymysql
c = pymysql.connect(host=os.environ["H"], port=int(os.environ["P"]), user=os.environ["U"], password=os.environ["W"], database=os.environ["D"])
cur = c.cursor()
cur.execute("SELECT resource_provider_id, allocation_ratio FROM inventories")
for pid, ratio in cur.fetchall():
    print(pid, repr(ratio))
`
	cmd := exec.Command(testdb.Python, "-c", script)
	cmd.Env = append(os.Environ(), "H="+host, "P="+port, "U="+cfg.User, "W="+cfg.Passwd, "D="+cfg.DBName)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("PyMySQL: %v", err)
	}
	got := map[int64]float64{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var id int64
		var repr string
		if _, err := fmt.Sscan(line, &id, &repr); err != nil {
			t.Fatalf("PyMySQL line %q: %v", line, err)
		}
		v, err := strconv.ParseFloat(repr, 64)
		if err != nil {
			t.Fatalf("PyMySQL line %q: %v", line, err)
		}
		got[id] = v
	}
	return got
}

func TestLoadPlacementRatioSource(t *testing.T) {
	ctx := context.Background()
	ratios := []struct {
		written      float64
		py, mysqlSQL float64
	}{
		{1.3, 1.3, 1.2999999523162842},
		{0.7, 0.7, 0.699999988079071},
		{16, 16, 16},
		{1.2345649, 1.23456, 1.2345649003982544},
		// Edges of the float32 range: the smallest normal float32, a
		// subnormal one, the largest, and zero.
		{0x1p-126, 1.17549e-38, 0x1p-126},
		{1e-40, 9.99995e-41, float64(float32(1e-40))},
		{math.MaxFloat32, 3.40282e38, math.MaxFloat32},
		{0, 0, 0},
	}
	// And a sweep: the text protocol carries the float32 the server
	// computes with as CAST(... AS DOUBLE)'s print, which must read back
	// as exactly that float32 for any value (readPlacementRows).
	rng := rand.New(rand.NewPCG(35, 1))
	for range 2000 {
		x := rng.Float64() * math.Pow(10, float64(rng.IntN(9)-4))
		ratios = append(ratios, struct {
			written      float64
			py, mysqlSQL float64
		}{x, math.NaN(), float64(float32(x))})
	}
	in := &candidates.ModelInput{}
	for i, r := range ratios {
		id := int64(i + 1)
		in.Providers = append(in.Providers, candidates.ProviderRow{ID: id, UUID: candidates.SyntheticUUID(1, i), Name: fmt.Sprint("p", i)})
		in.Inventories = append(in.Inventories, candidates.InventoryRow{ProviderID: id, ResourceClassID: 0,
			Total: 20, MinUnit: 1, MaxUnit: 20, StepSize: 1, AllocationRatio: r.written})
	}
	for name, db := range placementDBs(t) {
		t.Run(name, func(t *testing.T) {
			if err := placementdb.WriteSyntheticPlacement(ctx, db, in); err != nil {
				t.Fatal(err)
			}
			got, err := placementdb.LoadPlacementModel(ctx, db)
			if err != nil {
				t.Fatal(err)
			}
			wantSrc := candidates.RatioDouble
			if db.IsMySQL() {
				wantSrc = candidates.RatioMySQLFloat
			}
			if got.Ratios != wantSrc {
				t.Errorf("ratio source %v, want %v", got.Ratios, wantSrc)
			}
			// What Placement's Python reads, for every row: PyMySQL's float
			// of the column.
			var pyOf map[int64]float64
			if db.IsMySQL() {
				pyOf = pymysqlRatios(t, db)
				if len(pyOf) != len(ratios) {
					t.Fatalf("PyMySQL read %d ratios, want %d", len(pyOf), len(ratios))
				}
			}
			for _, row := range got.Inventories {
				if py, ok := pyOf[row.ProviderID]; ok && math.Float64bits(row.AllocationRatio) != math.Float64bits(py) {
					t.Errorf("ratio %v read as %v (Python), PyMySQL reads %v", ratios[row.ProviderID-1].written, row.AllocationRatio, py)
				}
				r := ratios[row.ProviderID-1]
				py, sql := r.written, r.written
				if db.IsMySQL() {
					py, sql = r.py, r.mysqlSQL
				}
				if math.IsNaN(py) { // the sweep: the SQL value only
					if row.SQLRatio != sql {
						t.Errorf("ratio %v read as %v (SQL), want %v", r.written, row.SQLRatio, sql)
					}
					continue
				}
				if row.AllocationRatio != py || (got.Ratios == candidates.RatioMySQLFloat && row.SQLRatio != sql) {
					t.Errorf("ratio %v read as %v (Python) / %v (SQL), want %v / %v", r.written, row.AllocationRatio, row.SQLRatio, py, sql)
				}
			}
		})
	}
}
