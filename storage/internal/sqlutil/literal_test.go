package sqlutil_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/rpctl/rpctl/internal/placementtest"
	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/internal/sqlutil"
)

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
		got, ok := sqlutil.AppendLiteral(nil, tc.v)
		if ok != tc.ok || (ok && string(got) != tc.want) {
			t.Errorf("AppendLiteral(%#v) = %q, %v; want %q, %v", tc.v, got, ok, tc.want, tc.ok)
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
		open func(testing.TB) *storage.DB
	}{{"sqlite", placementtest.SQLite}, {"mysql", placementtest.MySQL}} {
		t.Run(tc.name, func(t *testing.T) {
			db := tc.open(t)
			ratios := []float64{16, 1.5, 0.1, 1.1, 3.3333333333, 1e-7, 123456.789}
			names := []string{"plain", "o'hara", `back\slash`, "ünïcode", "x", "y", "z"}
			write := func(lit bool) []int64 {
				var ids []int64
				err := db.Tx(ctx, func(tx *sqlx.Tx) error {
					w := sqlutil.NewRowInsert(db, "resource_providers", "created_at", "uuid", "name", "generation")
					for i, n := range names {
						u := "00000000-0000-4000-8000-00000000000" + string(rune('0'+i))
						if !lit {
							u = "10000000-0000-4000-8000-00000000000" + string(rune('0'+i))
						}
						if lit || n != `back\slash` {
							w.Add(db.Now(), u, n+map[bool]string{true: "-l", false: "-b"}[lit], int64(i))
						}
					}
					var err error
					var chunks []sqlutil.InsertChunk
					if lit {
						chunks, err = w.Exec(ctx, tx)
					} else {
						_, err = w.ExecBound(ctx, tx)
					}
					if err != nil {
						return err
					}
					if step := sqlutil.AutoIncStep(ctx, db); lit && step > 0 {
						for _, c := range chunks {
							for r := 0; r < c.Rows; r++ {
								ids = append(ids, c.First+int64(r)*step)
							}
						}
					}
					inv := sqlutil.NewRowInsert(db, "inventories", "resource_provider_id", "resource_class_id", "total", "reserved", "min_unit", "max_unit", "step_size", "allocation_ratio")
					base := map[bool]int64{true: 0, false: 100}[lit]
					for i, r := range ratios {
						inv.Add(base+int64(i), int64(0), int64(10), int64(0), int64(1), int64(10), int64(1), r)
					}
					if lit {
						_, err = inv.Exec(ctx, tx)
					} else {
						_, err = inv.ExecBound(ctx, tx)
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
