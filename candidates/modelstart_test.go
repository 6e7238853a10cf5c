package candidates

import (
	"bytes"
	"context"
	"slices"
	"testing"
)

// TestStartModel: a model begun on its providers and built from the rest
// answers as NewModel's does, also when Build gets other providers than
// StartModel did, and fails as NewModel fails.
func TestStartModel(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   *ModelInput
		req  *Request
	}{
		{"placement-perfload", PerfloadInput(300), PerfloadRequest()},
		{"placement-nested-perfload", NestedPerfloadInput(100), NestedPerfloadRequest()},
		{"explosion", ExplosionInput(6), ExplosionRequest(3, "none", 0)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := answer(t, mustModel(t, tc.in), tc.req)
			for name, start := range map[string][]ProviderRow{
				"same providers":  tc.in.Providers,
				"other providers": slices.Clone(tc.in.Providers[:len(tc.in.Providers)/2]),
			} {
				m, err := StartModel(start).Build(tc.in)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if got := answer(t, m, tc.req); !bytes.Equal(got, want) {
					t.Errorf("%s: the answer differs from NewModel's", name)
				}
			}
		})
	}
	bad := PerfloadInput(3)
	bad.Providers = append(bad.Providers, bad.Providers[0])
	_, want := NewModel(bad)
	if _, err := StartModel(bad.Providers).Build(bad); err == nil || want == nil || err.Error() != want.Error() {
		t.Errorf("duplicate provider: %v, want %v", err, want)
	}
}

func answer(t *testing.T, m *Model, req *Request) []byte {
	t.Helper()
	r, err := m.Search(context.Background(), req, Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := r.MarshalPlacement(req.Microversion)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
