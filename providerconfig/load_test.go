package providerconfig

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const goodYAML = `meta:
  schema_version: '1.0'
providers:
  - identification:
      name: 'gpu-host-1'
    inventories:
      additional:
        - CUSTOM_FPGA:
            total: 4
            reserved: 1
            min_unit: 1
            max_unit: 2
            step_size: 1
            allocation_ratio: 1.0
    traits:
      additional:
        - 'CUSTOM_FPGA_INTEL'
  - identification:
      uuid: '$COMPUTE_NODE'
    traits:
      additional:
        - 'CUSTOM_RACK_A'
`

func write(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadGood(t *testing.T) {
	dir := t.TempDir()
	cfg, err := Load([]string{write(t, dir, "p.yaml", goodYAML)})
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Providers) != 2 {
		t.Fatalf("%d providers", len(cfg.Providers))
	}
	p := cfg.Providers[0]
	inv := p.Inventories["CUSTOM_FPGA"]
	if p.ID != "gpu-host-1" || !p.ByName || inv.Total != 4 || *inv.Reserved != 1 || *inv.MaxUnit != 2 || p.Traits[0] != "CUSTOM_FPGA_INTEL" {
		t.Errorf("got %+v %+v", p, inv)
	}
	if cfg.Providers[1].ID != ComputeNode || cfg.Providers[1].ByName {
		t.Errorf("got %+v", cfg.Providers[1])
	}
}

// TestValidationRules has one case per rule of Nova's provider_config.py
// (and rpctl's refusal of managed classes); every message names the file,
// the provider entry and the field.
func TestValidationRules(t *testing.T) {
	head := "meta:\n  schema_version: '1.0'\nproviders:\n"
	entry := func(ident, rest string) string {
		return head + "  - identification:\n      " + ident + "\n" + rest
	}
	inv := func(body string) string {
		return "    inventories:\n      additional:\n        - " + body + "\n"
	}
	cases := []struct {
		rule string
		body string
		want []string // substrings of the one error line
	}{
		{"meta required", "providers: []\n", []string{"p.yaml", "meta.schema_version", "meta is required"}},
		{"schema_version a string", "meta:\n  schema_version: 1.0\n", []string{"meta.schema_version", "want a string"}},
		{"schema_version parses", "meta:\n  schema_version: 'one'\n", []string{"meta.schema_version", "Unable to detect schema version"}},
		{"major version 1", "meta:\n  schema_version: '2.0'\n", []string{"Unsupported schema major version: 2"}},
		{"source file reserved", "meta:\n  schema_version: '1.0'\n__source_file: x\n", []string{"__source_file", "reserved"}},
		{"providers a list", "meta:\n  schema_version: '1.0'\nproviders: {}\n", []string{"providers: want a list"}},
		{"identification required", head + "  - traits:\n      additional: [CUSTOM_A]\n", []string{"providers[0]", "identification: is required"}},
		{"exactly one identification", head + "  - identification:\n      uuid: '$COMPUTE_NODE'\n      name: x\n", []string{"providers[0]", "exactly one of uuid and name"}},
		{"identification key", entry("id: x", ""), []string{"identification.id", "unknown key"}},
		{"uuid format", entry("uuid: 'not-a-uuid'", ""), []string{"identification.uuid", "neither a UUID nor $COMPUTE_NODE"}},
		{"name length", entry("name: '"+strings.Repeat("n", 201)+"'", ""), []string{"identification.name", "1 to 200"}},
		{"custom traits only", entry("name: h", "    traits:\n      additional:\n        - HW_CPU_X86_AVX2\n"), []string{`providers[0] (name "h")`, "traits.additional[0]", "only custom traits"}},
		{"trait pattern", entry("name: h", "    traits:\n      additional:\n        - CUSTOM_lower\n"), []string{"traits.additional[0]", "does not match"}},
		{"trait a string", entry("name: h", "    traits:\n      additional:\n        - {a: 1}\n"), []string{"traits.additional[0]", "want a string"}},
		{"custom classes only", entry("name: h", inv("VGPU: {total: 1}")), []string{"inventories.additional[0].VGPU", "only custom resource classes"}},
		{"class pattern", entry("name: h", inv("CUSTOM_x: {total: 1}")), []string{"inventories.additional[0].CUSTOM_x", "does not match"}},
		{"total required", entry("name: h", inv("CUSTOM_X: {reserved: 1}")), []string{"inventories.additional[0].CUSTOM_X.total", "is required"}},
		{"integer fields", entry("name: h", inv("CUSTOM_X: {total: 1, max_unit: 'two'}")), []string{"CUSTOM_X.max_unit", "want an integer"}},
		{"ratio a number", entry("name: h", inv("CUSTOM_X: {total: 1, allocation_ratio: high}")), []string{"CUSTOM_X.allocation_ratio", "want a number"}},
		{"no other fields", entry("name: h", inv("CUSTOM_X: {total: 1, used: 0}")), []string{"CUSTOM_X.used", "unknown field"}},
		{"class given twice", entry("name: h", "    inventories:\n      additional:\n        - CUSTOM_X: {total: 1}\n        - CUSTOM_X: {total: 2}\n"), []string{"inventories.additional[1].CUSTOM_X", "twice"}},
		{"class managed by migrate inventory", entry("name: h", inv("CUSTOM_SRIOV_NET_PF: {total: 1}")), []string{"CUSTOM_SRIOV_NET_PF", "managed by rpctl migrate inventory"}},
		{"class reported by Nova", entry("name: h", inv("CUSTOM_PCI_8086_1563: {total: 1}")), []string{"CUSTOM_PCI_8086_1563", "reported by Nova itself"}},
		{"not yaml", "meta: [\n", []string{"p.yaml", "Unable to load yaml file"}},
	}
	for _, c := range cases {
		t.Run(c.rule, func(t *testing.T) {
			dir := t.TempDir()
			_, err := Load([]string{write(t, dir, "p.yaml", c.body)})
			if err == nil {
				t.Fatal("accepted")
			}
			msg := err.Error()
			if strings.Count(msg, "\n") != 0 {
				t.Errorf("want one error line, got:\n%s", msg)
			}
			for _, w := range append([]string{filepath.Join(dir, "p.yaml")}, c.want...) {
				if !strings.Contains(msg, w) {
					t.Errorf("error lacks %q: %s", w, msg)
				}
			}
		})
	}
}

func TestProviderNamedTwiceAcrossFiles(t *testing.T) {
	dir := t.TempDir()
	a := write(t, dir, "a.yaml", goodYAML)
	b := write(t, dir, "b.yaml", "meta:\n  schema_version: '1.0'\nproviders:\n  - identification:\n      name: 'gpu-host-1'\n    traits:\n      additional: [CUSTOM_X]\n")
	_, err := Load([]string{a, b})
	if err == nil || !strings.Contains(err.Error(), `b.yaml: providers[0] (name "gpu-host-1"): identification: Provider gpu-host-1 has multiple definitions in source file(s): `+a+", "+b) {
		t.Errorf("got %v", err)
	}
	// Also within one file.
	_, err = Load([]string{write(t, dir, "c.yaml", goodYAML+"  - identification:\n      uuid: '$COMPUTE_NODE'\n    traits:\n      additional: [CUSTOM_B]\n")})
	if err == nil || !strings.Contains(err.Error(), "providers[2] (uuid \"$COMPUTE_NODE\"): identification: Provider $COMPUTE_NODE has multiple definitions") {
		t.Errorf("got %v", err)
	}
}

func TestWarningsAndDirectoryOrder(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "20-b.yaml", "meta:\n  schema_version: '1.3'\nproviders:\n  - identification:\n      name: b\n    traits:\n      additional: [CUSTOM_B]\n")
	write(t, dir, "10-a.yaml", "meta:\n  schema_version: '1.0'\nproviders:\n  - identification:\n      name: empty\n  - identification:\n      name: a\n    traits:\n      additional: [CUSTOM_A]\n")
	write(t, dir, "notes.txt", "not a provider config")
	cfg, err := Load([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Files) != 2 || filepath.Base(cfg.Files[0]) != "10-a.yaml" || cfg.Providers[0].ID != "a" || cfg.Providers[1].ID != "b" {
		t.Errorf("files %v providers %v, %v", cfg.Files, cfg.Providers[0].ID, cfg.Providers[1].ID)
	}
	if len(cfg.Warnings) != 2 || !strings.Contains(cfg.Warnings[0], "Provider empty defined in") || !strings.Contains(cfg.Warnings[1], "schema version 1.3") {
		t.Errorf("warnings %q", cfg.Warnings)
	}
	if _, err := Load([]string{t.TempDir()}); err == nil || !strings.Contains(err.Error(), "no *.yaml") {
		t.Errorf("empty directory: %v", err)
	}
}

// TestAllErrorsReported: several bad entries in several files give one
// line each, nothing stops at the first.
func TestAllErrorsReported(t *testing.T) {
	dir := t.TempDir()
	a := write(t, dir, "a.yaml", "meta:\n  schema_version: '1.0'\nproviders:\n  - identification:\n      name: h\n    traits:\n      additional: [HW_X, CUSTOM_ok, CUSTOM_OK]\n")
	b := write(t, dir, "b.yaml", "meta:\n  schema_version: '3.0'\n")
	_, err := Load([]string{a, b})
	errs, ok := err.(Errors)
	if !ok || len(errs) != 3 {
		t.Fatalf("got %v", err)
	}
}
