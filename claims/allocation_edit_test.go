package claims

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestUnset(t *testing.T) {
	cur := Allocations{ProjectID: "p", UserID: "u", Allocations: map[string]ProviderAllocation{
		"a": {Resources: map[string]int64{"VCPU": 2, "MEMORY_MB": 512}},
		"b": {Resources: map[string]int64{"DISK_GB": 10}},
	}}
	for _, tc := range []struct {
		name               string
		providers, classes []string
		want               map[string]map[string]int64
		bad                bool
	}{
		{"provider", []string{"b"}, nil, map[string]map[string]int64{"a": {"VCPU": 2, "MEMORY_MB": 512}}, false},
		{"class everywhere", nil, []string{"VCPU"}, map[string]map[string]int64{"a": {"MEMORY_MB": 512}, "b": {"DISK_GB": 10}}, false},
		{"class on a provider", []string{"a"}, []string{"MEMORY_MB", "VCPU"}, map[string]map[string]int64{"b": {"DISK_GB": 10}}, false},
		{"unknown provider", []string{"c"}, nil, nil, true},
		{"class not held there", []string{"b"}, []string{"VCPU"}, nil, true},
	} {
		got, err := Unset(cur, tc.providers, tc.classes)
		if tc.bad {
			if !errors.Is(err, ErrBadInput) {
				t.Errorf("%s: err %v, want bad input", tc.name, err)
			}
			continue
		}
		res := map[string]map[string]int64{}
		for rp, pa := range got.Allocations {
			res[rp] = pa.Resources
		}
		if err != nil || !reflect.DeepEqual(res, tc.want) || got.ProjectID != "p" {
			t.Errorf("%s: %v %v, want %v", tc.name, res, err, tc.want)
		}
	}
	if _, _, err := ParseAllocation("rp=x,VCPU=0"); !errors.Is(err, ErrBadInput) {
		t.Errorf("VCPU=0: %v", err)
	}
	if p, r, err := ParseAllocation("rp=x,VCPU=2,MEMORY_MB=512"); err != nil || p != "x" || r["VCPU"] != 2 || r["MEMORY_MB"] != 512 {
		t.Errorf("parse: %q %v %v", p, r, err)
	}
}

func TestCheckConsumerType(t *testing.T) {
	for _, tc := range []struct {
		in string
		ok bool
	}{
		{"INSTANCE", true}, {"MIGRATION", true}, {"CUSTOM_2", true},
		{"", false}, {"migration", false}, {"unknown", false}, {"A-B", false}, {"Ü", false},
		{strings.Repeat("A", 255), true}, {strings.Repeat("A", 256), false},
	} {
		err := CheckConsumerType(tc.in)
		if (err == nil) != tc.ok || (err != nil && !errors.Is(err, ErrBadInput)) {
			t.Errorf("CheckConsumerType(%q) = %v, want ok=%v", tc.in, err, tc.ok)
		}
	}
}
