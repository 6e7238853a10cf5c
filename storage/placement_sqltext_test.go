package storage

import (
	"context"
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/rpctl/rpctl/internal/dsn"
	"github.com/rpctl/rpctl/internal/testdb"
)

func openPlacement(t *testing.T, target dsn.Target) *DB {
	t.Helper()
	ctx := context.Background()
	db, err := Open(ctx, target, RolePlacement, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := Init(ctx, db, PartPlacement); err != nil {
		t.Fatal(err)
	}
	return db
}

func openSQLitePlacement(t *testing.T) *DB {
	return openPlacement(t, dsn.SQLiteFile(filepath.Join(t.TempDir(), "placement.db")))
}

func openMySQLPlacement(t *testing.T) *DB {
	target, err := dsn.Parse(testdb.NewMySQL(t).DSN)
	if err != nil {
		t.Fatal(err)
	}
	return openPlacement(t, target)
}

func TestAppendLiteral(t *testing.T) {
	for _, tc := range []struct {
		v    any
		want string
		ok   bool
	}{
		{nil, "NULL", true},
		{int64(-42), "-42", true},
		{7, "7", true},
		{1.5, "1.5e+00", true},
		{16.0, "1.6e+01", true},
		{0.1, "1e-01", true},
		{math.NaN(), "", false},
		{math.Inf(1), "", false},
		{"cmp1", "'cmp1'", true},
		{"o'hara", "'o''hara'", true},
		{`back\slash`, "", false},
		{"nul\x00", "", false},
		{time.Date(2024, 2, 3, 4, 5, 6, 0, time.UTC), "'2024-02-03 04:05:06'", true},
		{time.Date(2024, 2, 3, 4, 5, 6, 7000, time.UTC), "'2024-02-03 04:05:06.000007'", true},
		{[]byte("x"), "", false},
	} {
		got, ok := appendLiteral(nil, tc.v)
		if ok != tc.ok || (ok && string(got) != tc.want) {
			t.Errorf("appendLiteral(%#v) = %q, %v; want %q, %v", tc.v, got, ok, tc.want, tc.ok)
		}
	}
}

// TestRowInsertLiteralMatchesBound: rows written as literal SQL read back
// exactly as the same rows written with bound parameters (the FLOAT ratio
// included), on the real MariaDB and on SQLite, and the ids derived from
// LAST_INSERT_ID are the rows' ids.
func TestRowInsertLiteralMatchesBound(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		open func(*testing.T) *DB
	}{{"sqlite", openSQLitePlacement}, {"mysql", openMySQLPlacement}} {
		t.Run(tc.name, func(t *testing.T) {
			db := tc.open(t)
			ratios := []float64{16, 1.5, 0.1, 1.1, 3.3333333333, 1e-7, 123456.789}
			names := []string{"plain", "o'hara", `back\slash`, "ünïcode", "x", "y", "z"}
			write := func(lit bool) []int64 {
				var ids []int64
				err := db.Tx(ctx, func(tx *sqlx.Tx) error {
					w := newRowInsert(db, "resource_providers", "created_at", "uuid", "name", "generation")
					for i, n := range names {
						u := "00000000-0000-4000-8000-00000000000" + string(rune('0'+i))
						if !lit {
							u = "10000000-0000-4000-8000-00000000000" + string(rune('0'+i))
						}
						if lit || n != `back\slash` {
							w.add(db.now(), u, n+map[bool]string{true: "-l", false: "-b"}[lit], int64(i))
						}
					}
					var err error
					var chunks []insertChunk
					if lit {
						chunks, err = w.exec(ctx, tx)
					} else {
						_, err = w.execBoundForTest(ctx, tx)
					}
					if err != nil {
						return err
					}
					if step := autoIncStep(ctx, db); lit && step > 0 {
						for _, c := range chunks {
							for r := 0; r < c.rows; r++ {
								ids = append(ids, c.first+int64(r)*step)
							}
						}
					}
					inv := newRowInsert(db, "inventories", "resource_provider_id", "resource_class_id", "total", "reserved", "min_unit", "max_unit", "step_size", "allocation_ratio")
					base := map[bool]int64{true: 0, false: 100}[lit]
					for i, r := range ratios {
						inv.add(base+int64(i), int64(0), int64(10), int64(0), int64(1), int64(10), int64(1), r)
					}
					if lit {
						_, err = inv.exec(ctx, tx)
					} else {
						_, err = inv.execBoundForTest(ctx, tx)
					}
					return err
				})
				if err != nil {
					t.Fatal(err)
				}
				return ids
			}
			ids := write(true)
			write(false)
			if db.IsMySQL() {
				if len(ids) != len(names) {
					t.Fatalf("derived %d ids for %d rows", len(ids), len(names))
				}
				for i, id := range ids {
					var name string
					if err := db.GetContext(ctx, &name, "SELECT name FROM resource_providers WHERE id = ?", id); err != nil || name != names[i]+"-l" {
						t.Errorf("id %d: name %q (%v), want %q", id, name, err, names[i]+"-l")
					}
				}
			}
			for i := range ratios {
				var a, b float64
				q := db.Rebind("SELECT allocation_ratio FROM inventories WHERE resource_provider_id = ?")
				if err := db.GetContext(ctx, &a, q, int64(i)); err != nil {
					t.Fatal(err)
				}
				if err := db.GetContext(ctx, &b, q, int64(100+i)); err != nil {
					t.Fatal(err)
				}
				if a != b {
					t.Errorf("ratio %v: literal stored %v, bound %v", ratios[i], a, b)
				}
			}
			for _, n := range names {
				var got int
				if err := db.GetContext(ctx, &got, db.Rebind("SELECT COUNT(*) FROM resource_providers WHERE name = ?"), n+"-l"); err != nil || got != 1 {
					t.Errorf("name %q: %d rows (%v)", n, got, err)
				}
			}
		})
	}
}

func (w *rowInsert) execBoundForTest(ctx context.Context, tx *sqlx.Tx) ([]insertChunk, error) {
	return w.execBound(ctx, tx)
}

// TestLoadProvidersByOddName: the re-plan lookup finds providers whose
// names hold quotes and backslashes (hypervisor_hostname is free text), on
// both engines, with their trees.
func TestLoadProvidersByOddName(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		open func(*testing.T) *DB
	}{{"sqlite", openSQLitePlacement}, {"mysql", openMySQLPlacement}} {
		t.Run(tc.name, func(t *testing.T) {
			db := tc.open(t)
			ids, err := EnsurePlacementNames(ctx, db, nil, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			root := ProviderWrite{UUID: "00000000-0000-4000-8000-000000000001", Name: `rack\1 o'hara`, Create: true, Generation: 1,
				AddInventories: map[string]PInventory{"VCPU": {Total: 8, MinUnit: 1, MaxUnit: 8, StepSize: 1, AllocationRatio: 1.1}}}
			child := ProviderWrite{UUID: "00000000-0000-4000-8000-000000000002", Name: `rack\1 o'hara_NUMA0`, ParentUUID: root.UUID, Create: true}
			if errs := WriteNodes(ctx, db, ids, []NodeWrite{{Providers: []ProviderWrite{root, child}}}); errs[0] != nil {
				t.Fatal(errs[0])
			}
			for _, by := range []struct{ uuids, names []string }{{nil, []string{root.Name}}, {[]string{child.UUID}, nil}} {
				st, err := LoadProviders(ctx, db, by.uuids, by.names)
				if err != nil {
					t.Fatal(err)
				}
				r, c := st.Providers[root.UUID], st.Providers[child.UUID]
				if len(st.Providers) != 2 || r == nil || c == nil || st.ByName[root.Name] != root.UUID ||
					c.ParentUUID != root.UUID || r.Inventories["VCPU"].AllocationRatio != 1.1 {
					t.Errorf("LoadProviders(%q, %q) = %+v", by.uuids, by.names, st.Providers)
				}
			}
		})
	}
}
