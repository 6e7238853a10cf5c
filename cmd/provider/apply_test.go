package provider_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/cmd/internal/cmdtest"
)

func TestProviderApplyCommand(t *testing.T) {
	db := cmdtest.FlavorCloud(t)
	dir := t.TempDir()
	good := filepath.Join(dir, "10-good.yaml")
	os.WriteFile(good, []byte("meta:\n  schema_version: '1.0'\nproviders:\n  - identification:\n      uuid: '$COMPUTE_NODE'\n    inventories:\n      additional:\n        - CUSTOM_LICENSE: {total: 4}\n    traits:\n      additional: [CUSTOM_RACK_A]\n"), 0o600)
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(bad, []byte("meta:\n  schema_version: '1.0'\nproviders:\n  - identification:\n      name: h\n    traits:\n      additional: [HW_CPU_X86_AVX2]\n    inventories:\n      additional:\n        - VCPU: {total: 1}\n"), 0o600)
	// Records Placement (or any allocation) would refuse, found before
	// anything is written, with --dry-run too.
	record := func(name, rec string) string {
		p := filepath.Join(t.TempDir(), name+".yaml")
		os.WriteFile(p, []byte("meta:\n  schema_version: '1.0'\nproviders:\n  - identification:\n      uuid: '$COMPUTE_NODE'\n    inventories:\n      additional:\n        - CUSTOM_LICENSE: {total: 4}\n        - CUSTOM_SEAT: "+rec+"\n"), 0o600)
		return p
	}
	nan, reserved, minMax, step := record("nan", "{total: 4, allocation_ratio: .nan}"), record("reserved", "{total: 4, reserved: 5}"),
		record("minmax", "{total: 4, min_unit: 3, max_unit: 2}"), record("step", "{total: 8, min_unit: 5, max_unit: 7, step_size: 4}")
	cases := []struct {
		name   string
		args   []string
		code   int
		stdout []string
		stderr []string
	}{
		{name: "nan dry run", args: []string{"provider", "apply", "-f", nan, "--dry-run"}, code: 2, stderr: []string{"CUSTOM_SEAT: allocation_ratio = NaN is not a finite number"}},
		{name: "nan", args: []string{"provider", "apply", "-f", nan}, code: 2, stderr: []string{"CUSTOM_SEAT: allocation_ratio = NaN is not a finite number"}},
		{name: "reserved above total", args: []string{"provider", "apply", "-f", reserved, "--dry-run"}, code: 2, stderr: []string{"CUSTOM_SEAT: reserved 5 is greater than total 4"}},
		{name: "min above max", args: []string{"provider", "apply", "-f", minMax}, code: 2, stderr: []string{"CUSTOM_SEAT: min_unit 3 is greater than max_unit 2"}},
		{name: "no multiple of step", args: []string{"provider", "apply", "-f", step}, code: 2, stderr: []string{"CUSTOM_SEAT: no amount from min_unit 5 to max_unit 7 is a multiple of step_size 4"}},
		// Nothing of the refused files was written: the whole good file is
		// still to add.
		{name: "dry run", args: []string{"provider", "apply", "-f", good, "--dry-run"}, stdout: []string{"Dry run: 6 provider(s)", "[CUSTOM_LICENSE]", "| add "}},
		{name: "apply dir", args: []string{"provider", "apply", "-f", dir}, stdout: []string{"6 provider(s) written, 0 unchanged", "created 1 resource class(es), 1 trait(s)"}},
		{name: "again", args: []string{"provider", "apply", "--file", good}, stdout: []string{"0 provider(s) written, 6 unchanged"}},
		{name: "json", args: []string{"-f", "json", "provider", "apply", "-f", good}, stdout: []string{`"action": "unchanged"`, `"kind": "trait"`}},
		{name: "invalid", args: []string{"provider", "apply", "-f", bad}, code: 2, stderr: []string{
			bad + `: providers[0] (name "h"): inventories.additional[0].VCPU: Invalid resource class, only custom resource classes are allowed: VCPU`,
			bad + `: providers[0] (name "h"): traits.additional[0]: Invalid traits, only custom traits are allowed: HW_CPU_X86_AVX2`}},
		{name: "no file", args: []string{"provider", "apply"}, code: 2, stderr: []string{"give at least one -f"}},
		{name: "missing file", args: []string{"provider", "apply", "-f", filepath.Join(dir, "nope.yaml")}, code: 2, stderr: []string{"rpctl: -f " + filepath.Join(dir, "nope.yaml") + ": no such file or directory"}},
		{name: "directory without yaml", args: []string{"provider", "apply", "-f", t.TempDir()}, code: 2, stderr: []string{": no *.yaml provider config file in it", "rpctl: -f "}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, errOut, code := cmdtest.Rpctl(t, append([]string{"--db", db}, c.args...)...)
			if code != c.code {
				t.Fatalf("exit %d, want %d; stdout %s stderr %s", code, c.code, out, errOut)
			}
			for _, s := range c.stdout {
				if !strings.Contains(out, s) {
					t.Errorf("stdout lacks %q:\n%s", s, out)
				}
			}
			for _, s := range c.stderr {
				if !strings.Contains(errOut, s) {
					t.Errorf("stderr lacks %q:\n%s", s, errOut)
				}
			}
		})
	}
}
