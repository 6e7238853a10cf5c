package sqlutil

import "testing"

func TestFoldUUID(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"52302ca3-8af9-44c0-afea-39a97523e21a", "52302ca3-8af9-44c0-afea-39a97523e21a"},
		{"52302CA3-8AF9-44C0-AFEA-39A97523E21A", "52302ca3-8af9-44c0-afea-39a97523e21a"},
		{"52302ca3-8AF9-44c0-afea-39A97523E21A", "52302ca3-8af9-44c0-afea-39a97523e21a"},
		// Not the canonical form: left for the row checks to name.
		{"{52302CA3-8AF9-44C0-AFEA-39A97523E21A}", "{52302CA3-8AF9-44C0-AFEA-39A97523E21A}"},
		{"52302CA38AF944C0AFEA39A97523E21A", "52302CA38AF944C0AFEA39A97523E21A"},
		{"52302CA3-8AF9-44C0-AFEA-39A97523E21G", "52302CA3-8AF9-44C0-AFEA-39A97523E21G"},
		{"52302CA3_8AF9-44C0-AFEA-39A97523E21A", "52302CA3_8AF9-44C0-AFEA-39A97523E21A"},
		{"", ""},
	} {
		if got := FoldUUID(tc.in); got != tc.want {
			t.Errorf("FoldUUID(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if FoldUUIDPtr(nil) != nil {
		t.Error("FoldUUIDPtr(nil) is not nil")
	}
}
