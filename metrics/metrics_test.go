package metrics

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/rpctl/rpctl/candidates"
	"github.com/rpctl/rpctl/capacity"
	"github.com/rpctl/rpctl/claims"
	"github.com/rpctl/rpctl/status"
)

func sampleResults() []*capacity.Result {
	ind := &capacity.Result{Mode: capacity.Independent, Flavors: []string{"small", "big"},
		Hosts: []capacity.Host{
			{UUID: "u2", Name: "h2", Aggregates: []string{"a1", "a2"}, Free: []int64{4, 0}},
			{UUID: "u1", Name: "h1", Aggregates: []string{"a1"}, Free: []int64{8, 1}},
		},
		Aggregates: []capacity.Aggregate{{UUID: "a1", Name: "rack1", Hosts: 2, Free: []int64{12, 1}}, {UUID: "a2", Hosts: 1, Free: []int64{4, 0}}},
		Total:      []int64{12, 1}}
	pack := &capacity.Result{Mode: capacity.Pack, Flavors: ind.Flavors, Hosts: ind.Hosts,
		Aggregates: []capacity.Aggregate{{UUID: "a1", Name: "rack1", Hosts: 2, Free: []int64{6, 1}}, {UUID: "a2", Hosts: 1, Free: []int64{2, 0}}},
		Total:      []int64{6, 1}}
	return []*capacity.Result{ind, pack}
}

func sampleNova() Nova {
	return Nova{Public: map[string]bool{"small": true},
		AggregateNames:    map[string]string{"a1": "rack1", "a2": "tenant-x"},
		AggregateMetadata: map[string]map[string]string{"a1": {"availability_zone": "az1"}, "a2": {"filter_tenant_id": "p1"}}}
}

func find(fams []*Family, name string) *Family {
	for _, f := range fams {
		if f.Name == name {
			return f
		}
	}
	return nil
}

func TestCapacityFamilies(t *testing.T) {
	fams := Capacity(sampleResults(), sampleNova())
	type sample struct {
		Values []string
		Value  float64
	}
	for _, tc := range []struct {
		family string
		want   []sample
	}{
		{"openstack_free_capacity_by_flavor_total", []sample{{[]string{"small", "True"}, 12}, {[]string{"big", ""}, 1}}},
		// Sorted by host name, zeros left out, as os-capacity does.
		{"openstack_free_capacity_hypervisor_by_flavor", []sample{
			{[]string{"h1", "small", "az1", ""}, 8}, {[]string{"h1", "big", "az1", ""}, 1},
			{[]string{"h2", "small", "az1", "tenant-x"}, 4}}},
		{"rpctl_capacity_free_slots", []sample{
			{[]string{"independent", "small"}, 12}, {[]string{"independent", "big"}, 1},
			{[]string{"pack", "small"}, 6}, {[]string{"pack", "big"}, 1}}},
		{"rpctl_capacity_aggregate_hosts", []sample{{[]string{"a1", "rack1"}, 2}, {[]string{"a2", ""}, 1}}},
	} {
		f := find(fams, tc.family)
		if f == nil {
			t.Fatalf("no family %s", tc.family)
		}
		if len(f.Samples) != len(tc.want) {
			t.Fatalf("%s: %v, want %v", tc.family, f.Samples, tc.want)
		}
		for i, s := range f.Samples {
			if strings.Join(s.Values, ",") != strings.Join(tc.want[i].Values, ",") || s.Value != tc.want[i].Value {
				t.Errorf("%s[%d]: %v, want %v", tc.family, i, s, tc.want[i])
			}
		}
	}
}

func TestAuditFamilies(t *testing.T) {
	h := func(c, p string, res map[string]int64) claims.Orphan {
		return claims.Orphan{Holding: claims.Holding{Consumer: c, ProviderUUID: p, ProviderName: "n" + p, Resources: res}}
	}
	res := &claims.AuditResult{Orphans: []claims.Orphan{
		h("c1", "p1", map[string]int64{"VCPU": 2, "MEMORY_MB": 512}),
		h("c2", "p1", map[string]int64{"VCPU": 1}),
		h("c1", "p2", map[string]int64{"DISK_GB": 10}),
	}}
	fams := Audit(res)
	got := map[string]float64{}
	for _, s := range find(fams, "rpctl_claims_orphaned_allocations").Samples {
		got[strings.Join(s.Values, ",")] = s.Value
	}
	want := map[string]float64{"np1,p1,MEMORY_MB": 1, "np1,p1,VCPU": 2, "np2,p2,DISK_GB": 1}
	if len(got) != len(want) {
		t.Fatalf("%v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %v, want %v", k, got[k], v)
		}
	}
	if n := find(fams, "rpctl_claims_orphans").Samples[0].Value; n != 3 {
		t.Errorf("orphans %v, want 3", n)
	}
}

// TestPromtoolCheckMetrics runs Prometheus' own linter over every family
// rpctl writes.
func TestPromtoolCheckMetrics(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("RPCTL_INTEGRATION") != "" {
			t.Fatal("promtool not found (apt-get install prometheus)")
		}
		t.Skip("promtool not found")
	}
	fams := Capacity(sampleResults(), sampleNova())
	m, err := candidates.NewModel(candidates.CapacityInput(4))
	if err != nil {
		t.Fatal(err)
	}
	fams = append(fams, Usage(m)...)
	fams = append(fams, Projects([]ProjectUsage{{ProjectID: "p", Class: "VCPU", Used: 3}})...)
	fams = append(fams, Status([]status.Result{{Check: "A", Code: status.Warning}, {Check: "B", Code: status.Failure, Crashed: true, Elapsed: time.Second}})...)
	fams = append(fams, Drift([]status.Drift{{Cell: "cell1", Host: "h", ProviderUUID: "u", Provider: "h", Class: "VCPU", Legacy: 4, Placement: 8}})...)
	fams = append(fams, Missing([]status.Missing{{ProviderUUID: "u", Provider: "h", Class: "VCPU", Instances: 1, Amount: 2}})...)
	fams = append(fams, Audit(&claims.AuditResult{Orphans: []claims.Orphan{{Holding: claims.Holding{ProviderUUID: "u", Resources: map[string]int64{"VCPU": 1}}}}})...)
	var b bytes.Buffer
	if err := WriteText(&b, fams); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = &b
	if out, err := cmd.CombinedOutput(); err != nil || len(out) > 0 {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
}

// TestUsageFamilies: per inventory, used and Placement's capacity under
// os-capacity's names, reserved under rpctl's; nothing else per inventory.
func TestUsageFamilies(t *testing.T) {
	m, err := candidates.NewModel(candidates.CapacityInput(3))
	if err != nil {
		t.Fatal(err)
	}
	fams := Usage(m)
	if len(fams) != 3 {
		t.Fatalf("%d families, want 3", len(fams))
	}
	var invs int
	for i := range m.NumProviders() {
		invs += len(m.Provider(int32(i)).Inventories)
	}
	for _, f := range fams {
		if len(f.Samples) != invs {
			t.Errorf("%s: %d samples, want one per inventory (%d)", f.Name, len(f.Samples), invs)
		}
	}
	// compute-00001 (candidates.CapacityInput): 32 VCPU at ratio 16, 7 used;
	// 512 MB of memory reserved.
	want := map[string]struct {
		values []string
		v      float64
	}{
		"openstack_hypervisor_placement_allocated":            {[]string{"compute-00001", "VCPU"}, 7},
		"openstack_hypervisor_placement_allocatable_capacity": {[]string{"compute-00001", "VCPU"}, 32 * 16},
		"rpctl_placement_reserved":                            {[]string{"compute-00001", candidates.SyntheticUUID(10, 1), "MEMORY_MB"}, 512},
	}
	for name, w := range want {
		f := find(fams, name)
		if f == nil {
			t.Fatalf("no family %s", name)
		}
		found := false
		for _, s := range f.Samples {
			if strings.Join(s.Values, ",") == strings.Join(w.values, ",") {
				found = true
				if s.Value != w.v {
					t.Errorf("%s%v = %v, want %v", name, w.values, s.Value, w.v)
				}
			}
		}
		if !found {
			t.Errorf("%s: no sample %v", name, w.values)
		}
	}
}
