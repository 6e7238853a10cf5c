package flavors

import (
	"reflect"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	cases := []struct {
		name  string
		in    string
		vcpus int64
		ram   int64
		disk  int64
		eph   int64
		swap  int64
		specs map[string]string
		props map[string]string
		err   string
	}{
		{name: "osc json", in: `{"OS-FLV-EXT-DATA:ephemeral": 5, "disk": 20, "name": "a", "properties": {"hw:cpu_policy": "dedicated"}, "ram": 2048, "swap": "", "vcpus": 2}`,
			vcpus: 2, ram: 2048, disk: 20, eph: 5, specs: map[string]string{"hw:cpu_policy": "dedicated"}},
		{name: "old osc properties string", in: `{"disk": 1, "name": "a", "properties": "hw:cpu_policy='dedicated', resources1:VGPU='1'", "ram": 512, "vcpus": 1}`,
			vcpus: 1, ram: 512, disk: 1, specs: map[string]string{"hw:cpu_policy": "dedicated", "resources1:VGPU": "1"}},
		{name: "plain json", in: `{"name": "b", "vcpus": 4, "ram": 4096, "disk": 40, "ephemeral": 0, "swap": 1024, "extra_specs": {"resources:VGPU": 1, "hw:mem_encryption": true}}`,
			vcpus: 4, ram: 4096, disk: 40, swap: 1024, specs: map[string]string{"resources:VGPU": "1", "hw:mem_encryption": "true"}},
		{name: "yaml with image", in: "name: c\nvcpus: 2\nram: 1024\ndisk: 10\nimage:\n  disk_format: qcow2\n  properties:\n    hw_firmware_type: uefi\n    trait:HW_CPU_X86_AVX2: required\n",
			vcpus: 2, ram: 1024, disk: 10, specs: map[string]string{}, props: map[string]string{"hw_firmware_type": "uefi", "trait:HW_CPU_X86_AVX2": "required"}},
		{name: "image_properties map", in: `{"vcpus": 1, "ram": 1, "image_properties": {"hw_tpm_version": "2.0"}}`,
			vcpus: 1, ram: 1, specs: map[string]string{}, props: map[string]string{"hw_tpm_version": "2.0"}},
		{name: "missing vcpus", in: `{"ram": 1}`, err: `field "vcpus" is missing`},
		{name: "missing ram", in: `{"vcpus": 1}`, err: `field "ram" is missing`},
		{name: "bad number", in: `{"vcpus": "two", "ram": 1}`, err: `field "vcpus": "two" is not a number`},
		{name: "fraction", in: `{"vcpus": 1.5, "ram": 1}`, err: `field "vcpus": 1.5 is not a whole number`},
		{name: "nested spec", in: `{"vcpus": 1, "ram": 1, "extra_specs": {"a": {"b": 1}}}`, err: `field "extra_specs": key "a": want a string`},
		{name: "not yaml", in: "{[", err: "not a JSON or YAML flavor"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, img, err := Parse([]byte(c.in))
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if f.VCPUs != c.vcpus || f.MemoryMB != c.ram || f.RootGB != c.disk || f.EphemeralGB != c.eph || f.Swap != c.swap {
				t.Errorf("got %+v", f)
			}
			if !reflect.DeepEqual(f.ExtraSpecs, c.specs) {
				t.Errorf("specs %v, want %v", f.ExtraSpecs, c.specs)
			}
			if c.props != nil && (img == nil || !reflect.DeepEqual(img.Properties, c.props)) {
				t.Errorf("image %+v, want %v", img, c.props)
			}
		})
	}
}

// TestImageTraitsGoToUnsuffixedGroup: image trait:NAME=required properties
// are required traits of the unsuffixed group; other values are ignored
// (ImageMetaProps only collects "required").
func TestImageTraitsGoToUnsuffixedGroup(t *testing.T) {
	f, img, err := Parse([]byte(`{"vcpus": 1, "ram": 512, "image": {"properties": {"trait:CUSTOM_A": "required", "trait:CUSTOM_B": "forbidden"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	r, err := Build(f, img, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if g := r.Group(""); g == nil || !reflect.DeepEqual(g.Required, []string{"CUSTOM_A"}) || len(g.Forbidden) != 0 {
		t.Errorf("unsuffixed group %+v", g)
	}
	if q := r.QueryString(); q != "required=CUSTOM_A&resources=MEMORY_MB%3A512%2CVCPU%3A1&root_required=%21COMPUTE_STATUS_DISABLED" {
		t.Errorf("query %s", q)
	}
	if _, err := r.Candidates(); err != nil {
		t.Errorf("Placement would reject %s: %v", r.QueryString(), err)
	}
}
