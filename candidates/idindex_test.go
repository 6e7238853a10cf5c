package candidates

import "testing"

func TestIDIndex(t *testing.T) {
	for _, tc := range []struct {
		name  string
		ids   []int64
		dense bool
	}{
		{"empty", nil, true},
		{"from one", []int64{1, 2, 3, 5}, true},
		{"gaps within four times the rows", []int64{7, 3, 1030}, true},
		{"spread far", []int64{1, 1 << 40}, false},
		{"negative", []int64{-2, 4}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rows := make([]NamedRow, len(tc.ids))
			for i, id := range tc.ids {
				rows[i] = NamedRow{ID: id}
			}
			x := indexFor(rows, func(r *NamedRow) int64 { return r.ID })
			if got := x.m == nil; got != tc.dense {
				t.Fatalf("dense = %v, want %v", got, tc.dense)
			}
			for i, id := range tc.ids {
				if _, ok := x.get(id); ok {
					t.Fatalf("id %d found before it was set", id)
				}
				x.set(id, int32(i))
			}
			for i, id := range tc.ids {
				if got, ok := x.get(id); !ok || got != int32(i) {
					t.Fatalf("get(%d) = %d, %v; want %d", id, got, ok, i)
				}
			}
			for _, id := range []int64{0, -1, 6, 1 << 41} {
				if got, ok := x.get(id); ok && !contains(tc.ids, id) {
					t.Fatalf("get(%d) = %d for an id never set", id, got)
				}
			}
		})
	}
}

func contains(s []int64, v int64) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
