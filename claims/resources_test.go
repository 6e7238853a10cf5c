package claims

import (
	"reflect"
	"testing"
)

func TestResources(t *testing.T) {
	base := Flavor{Name: "m1", VCPUs: 4, MemoryMB: 2048, RootGB: 20, EphemeralGB: 5, Swap: 1500}
	with := func(specs map[string]string) Flavor {
		f := base
		f.ExtraSpecs = specs
		return f
	}
	cases := []struct {
		name string
		f    Flavor
		bfv  bool
		want map[string]int64
	}{
		{"plain: root + ephemeral + swap rounded up", base, false, map[string]int64{"VCPU": 4, "MEMORY_MB": 2048, "DISK_GB": 27}},
		{"boot from volume drops root", base, true, map[string]int64{"VCPU": 4, "MEMORY_MB": 2048, "DISK_GB": 7}},
		{"no disk at all", Flavor{VCPUs: 1, MemoryMB: 512}, true, map[string]int64{"VCPU": 1, "MEMORY_MB": 512}},
		{"resources override", with(map[string]string{"resources:VCPU": "2", "resources:DISK_GB": "0", "resources:CUSTOM_GOLD": "3"}), false,
			map[string]int64{"VCPU": 2, "MEMORY_MB": 2048, "CUSTOM_GOLD": 3}},
		{"suffixed groups add up", with(map[string]string{"resources1:CUSTOM_NIC": "1", "resources2:CUSTOM_NIC": "2"}), false,
			map[string]int64{"VCPU": 4, "MEMORY_MB": 2048, "DISK_GB": 27, "CUSTOM_NIC": 3}},
		{"unknown class and bad amounts skipped", with(map[string]string{"resources:BOGUS": "1", "resources:CUSTOM_X": "-1", "resources:CUSTOM_Y": "a", "resources:MEMORY_MB": " 1_024 "}), false,
			map[string]int64{"VCPU": 4, "MEMORY_MB": 1024, "DISK_GB": 27}},
		{"dedicated", with(map[string]string{"hw:cpu_policy": "dedicated"}), false, map[string]int64{"PCPU": 4, "MEMORY_MB": 2048, "DISK_GB": 27}},
		{"dedicated + isolated emulator thread", with(map[string]string{"hw:cpu_policy": "dedicated", "hw:emulator_threads_policy": "isolate"}), false,
			map[string]int64{"PCPU": 5, "MEMORY_MB": 2048, "DISK_GB": 27}},
		{"mixed", with(map[string]string{"hw:cpu_policy": "mixed", "hw:cpu_dedicated_mask": "^0-1"}), false,
			map[string]int64{"VCPU": 2, "PCPU": 2, "MEMORY_MB": 2048, "DISK_GB": 27}},
		{"pmem", with(map[string]string{"hw:pmem": "4GB, 4GB,SMALL"}), false,
			map[string]int64{"VCPU": 4, "MEMORY_MB": 2048, "DISK_GB": 27, "CUSTOM_PMEM_NAMESPACE_4GB": 2, "CUSTOM_PMEM_NAMESPACE_SMALL": 1}},
		{"traits ignored", with(map[string]string{"trait:HW_CPU_X86_AVX": "required"}), false, map[string]int64{"VCPU": 4, "MEMORY_MB": 2048, "DISK_GB": 27}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Resources(tc.f, tc.bfv)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestResourcesErrors(t *testing.T) {
	for _, specs := range []map[string]string{
		{"hw:cpu_policy": "bogus"},
		{"hw:emulator_threads_policy": "bogus"},
		{"hw:mem_encryption": "true"},
		{"hw:cpu_policy": "mixed", "hw:cpu_dedicated_mask": "0-3"},
	} {
		if _, err := Resources(Flavor{VCPUs: 4, MemoryMB: 1, ExtraSpecs: specs}, false); err == nil {
			t.Errorf("%v: no error", specs)
		}
	}
}

func TestCheckHealable(t *testing.T) {
	if err := CheckHealable("u", Flavor{ExtraSpecs: map[string]string{"resources:VGPU": "1"}}); err == nil {
		t.Error("vGPU accepted")
	}
	if err := CheckHealable("u", Flavor{ExtraSpecs: map[string]string{"accel:device_profile": "p"}}); err == nil {
		t.Error("device profile accepted")
	}
	if err := CheckHealable("u", Flavor{ExtraSpecs: map[string]string{"resources:VGPU": ""}}); err != nil {
		t.Error(err)
	}
}

func TestParseFlavor(t *testing.T) {
	s := `{"cur": {"nova_object.name": "Flavor", "nova_object.data": {"name": "m1", "vcpus": 2, "memory_mb": 512, "root_gb": 1, "ephemeral_gb": 0, "swap": 0, "extra_specs": {"resources:CUSTOM_A": "1"}}}, "old": null, "new": null}`
	f, err := ParseFlavor(&s)
	if err != nil {
		t.Fatal(err)
	}
	if f.VCPUs != 2 || f.MemoryMB != 512 || f.ExtraSpecs["resources:CUSTOM_A"] != "1" {
		t.Errorf("got %+v", f)
	}
	for _, bad := range []string{"", "{", `{"cur": null}`} {
		if _, err := ParseFlavor(&bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if _, err := ParseFlavor(nil); err == nil {
		t.Error("nil accepted")
	}
}
