package candcompare

import (
	"strings"
	"testing"
)

func TestDiff(t *testing.T) {
	const (
		a = `{"allocations": {"A": {"resources": {"VCPU": 1}}}, "mappings": {"": ["A", "B"]}}`
		b = `{"allocations": {"B": {"resources": {"VCPU": 1}}}, "mappings": {"": ["B"]}}`
		s = `{"A": {"resources": {"VCPU": {"capacity": 4, "used": 0}}, "traits": ["X", "Y"]}}`
	)
	body := func(reqs, sums string) []byte {
		return []byte(`{"allocation_requests": [` + reqs + `], "provider_summaries": ` + sums + `}`)
	}
	for _, tc := range []struct {
		name string
		p, r Answer
		want []string
	}{
		{"same", Answer{200, body(a+","+b, s)}, Answer{200, body(b+","+a, s)}, nil},
		{"mapping and trait order do not count", Answer{200, body(a, s)},
			Answer{200, body(strings.Replace(a, `["A", "B"]`, `["B", "A"]`, 1), strings.Replace(s, `["X", "Y"]`, `["Y", "X"]`, 1))}, nil},
		{"list-form allocations in any order",
			Answer{200, body(`{"allocations": [{"resource_provider": {"uuid": "A"}, "resources": {"VCPU": 1}}, {"resource_provider": {"uuid": "B"}, "resources": {"DISK_GB": 1}}]}`, `{}`)},
			Answer{200, body(`{"allocations": [{"resource_provider": {"uuid": "B"}, "resources": {"DISK_GB": 1}}, {"resource_provider": {"uuid": "A"}, "resources": {"VCPU": 1}}]}`, `{}`)}, nil},
		{"a request missing", Answer{200, body(a+","+b, s)}, Answer{200, body(a, s)}, []string{"only from Placement (1x)"}},
		{"a duplicate", Answer{200, body(a, s)}, Answer{200, body(a+","+a, s)}, []string{"only from rpctl (1x)"}},
		{"summary differs", Answer{200, body(a, s)}, Answer{200, body(a, strings.Replace(s, `"used": 0`, `"used": 1`, 1))}, []string{"provider summary of A"}},
		{"status differs", Answer{200, body(a, s)}, Answer{400, []byte(`{"errors": [{"status": 400, "code": "placement.undefined_code", "detail": "bad"}]}`)},
			[]string{"status: Placement 200, rpctl 400"}},
		{"same error, other request id",
			Answer{400, []byte(`{"errors": [{"status": 400, "code": "c", "detail": "bad", "request_id": "req-1"}]}`)},
			Answer{400, []byte(`{"errors": [{"status": 400, "code": "c", "detail": "bad", "request_id": "req-2"}]}`)}, nil},
		{"other error", Answer{400, []byte(`{"errors": [{"status": 400, "code": "c", "detail": "bad"}]}`)},
			Answer{400, []byte(`{"errors": [{"status": 400, "code": "c", "detail": "worse"}]}`)}, []string{"error: Placement"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Diff(tc.p, tc.r)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("diff %q, want %d lines like %q", got, len(tc.want), tc.want)
			}
			for i := range got {
				if !strings.Contains(got[i], tc.want[i]) {
					t.Errorf("line %q, want %q", got[i], tc.want[i])
				}
			}
		})
	}
}
