package candidates

import "testing"

// TestCapacityOfMatchesCPython backs capacityOf's claim: the wants are
// int((total - reserved) * allocation_ratio) as /usr/bin/python3 (the
// interpreter Placement 8.0.0 runs on) printed them, chosen where the
// product lands just below or above an integer.
func TestCapacityOfMatchesCPython(t *testing.T) {
	for _, c := range []struct {
		total, reserved int64
		ratio           float64
		want            int64
	}{
		{7, 0, 1.1, 7},               // 7.700000000000001
		{100, 0, 0.29, 28},           // 28.999999999999996
		{100, 0, 1.13, 112},          // 112.99999999999999
		{49, 0, 0.57, 27},            // 27.929999999999996
		{10, 0, 0.7, 7},              // 7.0
		{3, 0, 1.1, 3},               // 3.3000000000000003
		{1000, 3, 0.1, 99},           // 99.7
		{8, 1, 16.0, 112},            // 112.0
		{1<<53 + 1, 0, 1.0, 1 << 53}, // float() rounds the integer first
	} {
		if got := capacityOf(c.total, c.reserved, c.ratio); got != c.want {
			t.Errorf("capacityOf(%d, %d, %v) = %d, CPython %d", c.total, c.reserved, c.ratio, got, c.want)
		}
	}
}

func TestResolveProvider(t *testing.T) {
	const known = "8a7f2b9c-1d2e-4f3a-9b8c-7d6e5f4a3b2c"
	m, err := NewModel(&ModelInput{Providers: []ProviderRow{{ID: 1, UUID: known, Name: "cn1"}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{known, known, true},
		{"cn1", known, true},
		// Forms Placement accepts as UUIDs pass through even when unknown:
		// Placement answers them with an empty result, not an error.
		{"{11111111-2222-3333-4444-555555555555}", "{11111111-2222-3333-4444-555555555555}", true},
		{"urn:uuid:11111111222233334444555555555555", "urn:uuid:11111111222233334444555555555555", true},
		{"cn2", "", false},
	} {
		got, ok := m.ResolveProvider(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("ResolveProvider(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}
