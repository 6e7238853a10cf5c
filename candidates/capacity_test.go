package candidates

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// oneInventory is a model of one root provider with one CUSTOM_VF_QUEUE
// inventory and usage, its ratio as a database of kind src hands it over.
func oneInventory(t *testing.T, src RatioSource, total, reserved, used, maxUnit int64, pyRatio, sqlRatio float64) *Model {
	t.Helper()
	in := &ModelInput{
		Ratios:          src,
		Providers:       []ProviderRow{{ID: 1, UUID: "00000000-0000-4000-8000-000000000001", Name: "pf"}},
		ResourceClasses: []NamedRow{{ID: FirstCustomResourceClassID, Name: "CUSTOM_VF_QUEUE"}},
		Inventories: []InventoryRow{{ProviderID: 1, ResourceClassID: FirstCustomResourceClassID, Total: total,
			Reserved: reserved, MinUnit: 1, MaxUnit: maxUnit, StepSize: 1, AllocationRatio: pyRatio, SQLRatio: sqlRatio}},
		Usages: []UsageRow{{ProviderID: 1, ResourceClassID: FirstCustomResourceClassID, Used: used}},
	}
	m, err := NewModel(in)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestCapacityPerBackend pins both of Placement's capacity checks at the
// boundary, per backend. The MySQL rows are what MariaDB 10.11 returned for
// a FLOAT column: the column as text ("1.3", "1.23456", six significant
// digits) and the column + 0E0 (the stored float32 widened); the wants are
// what Placement 8.0.0 answers on such a database (the 1.3 case is the
// issue's reproduction against the real placement-api).
func TestCapacityPerBackend(t *testing.T) {
	cases := []struct {
		name                       string
		src                        RatioSource
		total, reserved, used, max int64
		py, sql                    float64
		capacity                   int64 // provider_summaries
		room                       int64 // largest amount offered
	}{
		// SQL: 20 + 6 <= 25.999999046325684 fails; Python's 26 would pass.
		{"mysql 1.3", RatioMySQLFloat, 20, 0, 20, 20, 1.3, 1.2999999523162842, 26, 5},
		// The same row read from SQLite: one double, 26 both ways.
		{"sqlite 1.3", RatioDouble, 20, 0, 20, 20, 1.3, 0, 26, 6},
		{"mysql 0.7", RatioMySQLFloat, 10, 0, 0, 10, 0.7, 0.699999988079071, 7, 6},
		{"mysql 1.1", RatioMySQLFloat, 10, 0, 0, 20, 1.1, 1.100000023841858, 11, 11},
		{"mysql 3.3 reserved", RatioMySQLFloat, 12, 2, 30, 40, 3.3, 3.299999952316284, 33, 2},
		// 1.2345649 is stored as 1.2345649003982544 and printed "1.23456":
		// Python's capacity 1234560 is the stricter bound (SQL 1234564.9).
		{"mysql printed low", RatioMySQLFloat, 1000000, 0, 0, 2000000, 1.23456, 1.2345649003982544, 1234560, 1234560},
		// 1.2345651 is printed "1.23457": SQL (123456.51) is stricter than
		// Python's 123457.
		{"mysql printed high", RatioMySQLFloat, 100000, 0, 0, 200000, 1.23457, 1.2345651388168335, 123457, 123456},
		// reserved = total: no room, capacity 0.
		{"mysql reserved=total", RatioMySQLFloat, 8, 8, 0, 8, 1.3, 1.2999999523162842, 0, 0},
		// Over capacity (used beyond it after the ratio was lowered).
		{"mysql over capacity", RatioMySQLFloat, 10, 0, 12, 10, 1.1, 1.100000023841858, 11, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := oneInventory(t, c.src, c.total, c.reserved, c.used, c.max, c.py, c.sql)
			inv := &m.providers[0].Inventories[0]
			if inv.Capacity != c.capacity {
				t.Errorf("capacity %d, want %d", inv.Capacity, c.capacity)
			}
			for _, amount := range []int64{c.room, c.room + 1} {
				if amount < 1 {
					continue
				}
				q := "resources=CUSTOM_VF_QUEUE:" + itoa(amount)
				req, err := ParseQuery(q, 39)
				if err != nil {
					t.Fatal(err)
				}
				res, err := m.Search(context.Background(), req, Options{})
				if err != nil {
					t.Fatal(err)
				}
				want := 0
				if amount <= c.room {
					want = 1
				}
				if len(res.Candidates) != want {
					t.Errorf("%s: %d candidates, want %d", q, len(res.Candidates), want)
				}
				if want == 1 {
					var body struct {
						Summaries map[string]struct {
							Resources map[string]struct{ Capacity, Used int64 }
						} `json:"provider_summaries"`
					}
					b, _ := res.MarshalPlacement(39)
					if err := json.Unmarshal(b, &body); err != nil {
						t.Fatal(err)
					}
					if got := body.Summaries[m.providers[0].UUID].Resources["CUSTOM_VF_QUEUE"].Capacity; got != c.capacity {
						t.Errorf("summary capacity %d, want %d", got, c.capacity)
					}
				}
				if err := m.CheckExplain(req); err != nil {
					t.Errorf("%s: %v", q, err)
				}
				ex := m.explainAll(req)
				if want == 1 && len(ex) != 0 || want == 0 && (len(ex) != 1 || ex[0].Kind != ReasonCapacity) {
					t.Errorf("%s: explanations %+v", q, ex)
				}
			}
		})
	}
}

// TestExplainCapacityAtFloatBoundary: the reason for the issue's
// reproduction names the room the search really has, not capacity - used.
func TestExplainCapacityAtFloatBoundary(t *testing.T) {
	m := oneInventory(t, RatioMySQLFloat, 20, 0, 20, 20, 1.3, 1.2999999523162842)
	req, err := ParseQuery("resources=CUSTOM_VF_QUEUE:6", 39)
	if err != nil {
		t.Fatal(err)
	}
	ex := m.explainAll(req)
	if len(ex) != 1 {
		t.Fatalf("explanations %+v", ex)
	}
	for _, want := range []string{"with 6 free", "pf has 5 of 26 free", "(20 - 0) * 1.2999999523162842 = 25.999999046325684", "may reach only 25"} {
		if !strings.Contains(ex[0].Message, want) {
			t.Errorf("message %q lacks %q", ex[0].Message, want)
		}
	}
}

func itoa(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}
