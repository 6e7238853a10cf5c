package standards

import (
	"slices"
	"testing"
)

func TestLists(t *testing.T) {
	for _, tc := range []struct {
		name  string
		list  []string
		n     int
		first string
	}{
		{"resource classes", ResourceClasses(), 21, "VCPU"},
		{"traits", Traits(), 345, "COMPUTE_ACCELERATORS"},
	} {
		if len(tc.list) != tc.n || tc.list[0] != tc.first {
			t.Errorf("%s: %d entries starting %q, want %d starting %q", tc.name, len(tc.list), tc.list[0], tc.n, tc.first)
		}
	}
	if !slices.IsSorted(Traits()) {
		t.Error("traits are not sorted")
	}
	if !slices.Contains(Traits(), "MISC_SHARES_VIA_AGGREGATE") {
		t.Error("MISC_SHARES_VIA_AGGREGATE missing")
	}
}
