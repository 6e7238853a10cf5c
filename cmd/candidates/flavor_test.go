package candidates_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/cmd/internal/cmdtest"
)

func TestCandidatesFlavor(t *testing.T) {
	db := cmdtest.FlavorCloud(t)
	file := filepath.Join(t.TempDir(), "flavor.json")
	// What `openstack flavor show -f json` prints.
	os.WriteFile(file, []byte(`{"OS-FLV-DISABLED:disabled": false, "OS-FLV-EXT-DATA:ephemeral": 0, "access_project_ids": null,
 "description": null, "disk": 10, "id": "42", "name": "gpu.small", "os-flavor-access:is_public": true,
 "properties": {"resources1:VGPU": "1", "trait1:CUSTOM_A100": "required"}, "ram": 1024, "rxtx_factor": 1.0, "swap": "", "vcpus": 2}`), 0o600)
	yml := filepath.Join(t.TempDir(), "flavor.yaml")
	os.WriteFile(yml, []byte("name: y\nvcpus: 2\nram: 512\ndisk: 1\nswap: 1025\nextra_specs:\n  hw:cpu_policy: dedicated\n"), 0o600)
	cases := []struct {
		name     string
		args     []string
		code     int
		lastLine string
		stdout   []string
		stderr   string
	}{
		{name: "api db flavor", args: []string{"candidates", "--flavor", "m1.small", "--show-request"},
			lastLine: "limit=1000&resources=DISK_GB%3A20%2CMEMORY_MB%3A2048%2CVCPU%3A1&root_required=%21COMPUTE_STATUS_DISABLED"},
		{name: "pinned flavor and its fallback", args: []string{"candidates", "--flavor", "c1.pinned", "--show-request"},
			lastLine: "limit=1000&resources=DISK_GB%3A40%2CMEMORY_MB%3A8192%2CPCPU%3A5&root_required=%21COMPUTE_STATUS_DISABLED",
			stdout:   []string{"Nova also asks", "VCPU%3A4"}},
		{name: "osc json file", args: []string{"candidates", "--flavor", file, "--show-request", "--limit", "5"},
			lastLine: "limit=5&required1=CUSTOM_A100&resources=DISK_GB%3A10%2CMEMORY_MB%3A1024%2CVCPU%3A2&resources1=VGPU%3A1&root_required=%21COMPUTE_STATUS_DISABLED"},
		{name: "yaml file and image property", args: []string{"candidates", "--flavor", yml, "--show-request", "--image-property", "trait:HW_CPU_X86_AVX2=required"},
			lastLine: "limit=1000&required=HW_CPU_X86_AVX2&resources=DISK_GB%3A3%2CMEMORY_MB%3A512%2CPCPU%3A2&root_required=%21COMPUTE_STATUS_DISABLED"},
		{name: "json show-request", args: []string{"-f", "json", "candidates", "--flavor", "m1.tiny", "--show-request"},
			stdout: []string{`"query":"limit=1000&resources=DISK_GB%3A1%2CMEMORY_MB%3A512%2CVCPU%3A1&root_required=%21COMPUTE_STATUS_DISABLED"`, `"root_forbidden":["COMPUTE_STATUS_DISABLED"]`}},
		{name: "answers", args: []string{"candidates", "--flavor", "m1.small", "--limit", "2"}, stdout: []string{"2 allocation candidates"}},
		{name: "no such flavor", args: []string{"candidates", "--flavor", "nope", "--show-request"}, code: 2, stderr: `no flavor of that name`},
		{name: "nova refuses", args: []string{"candidates", "--flavor", "m1.tiny", "--image-property", "hw_cpu_policy=pinned", "--show-request"}, code: 2, stderr: "InvalidCPUAllocationPolicy"},
		// The release's Nova builds the request: 2025.1's requires the
		// vTPM model's trait too, Zed's refuses the igb VIF model.
		{name: "release 2025.1", args: []string{"candidates", "--flavor", "m1.tiny", "--image-property", "hw_tpm_version=2.0", "--image-property", "hw_vif_model=igb", "--image-metadata-prefilter", "--release", "2025.1", "--show-request"},
			lastLine: "limit=1000&required=COMPUTE_SECURITY_TPM_2_0%2CCOMPUTE_SECURITY_TPM_TIS&resources=DISK_GB%3A1%2CMEMORY_MB%3A512%2CVCPU%3A1&root_required=COMPUTE_NET_VIF_MODEL_IGB%2C%21COMPUTE_STATUS_DISABLED"},
		{name: "release zed refuses igb", args: []string{"candidates", "--flavor", "m1.tiny", "--image-property", "hw_vif_model=igb", "--show-request"}, code: 2, stderr: "ValueError): Field value igb is invalid"},
		{name: "unknown release", args: []string{"candidates", "--flavor", "m1.tiny", "--release", "2025.2", "--show-request"}, code: 2, stderr: `--release: rpctl knows the rules of zed, 2023.1, 2023.2, 2024.1, 2024.2, 2025.1, not "2025.2"`},
		{name: "show-request alone", args: []string{"candidates", "--show-request"}, code: 2, stderr: "--show-request needs --flavor"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, errOut, code := cmdtest.Rpctl(t, append([]string{"--db", db}, c.args...)...)
			if code != c.code {
				t.Fatalf("exit %d, want %d; stderr %s", code, c.code, errOut)
			}
			lines := strings.Split(strings.TrimSpace(out), "\n")
			if c.lastLine != "" && lines[len(lines)-1] != c.lastLine {
				t.Errorf("last line\n got %s\nwant %s", lines[len(lines)-1], c.lastLine)
			}
			for _, s := range c.stdout {
				if !strings.Contains(out, s) {
					t.Errorf("stdout lacks %q:\n%s", s, out)
				}
			}
			if c.stderr != "" && !strings.Contains(errOut, c.stderr) {
				t.Errorf("stderr lacks %q: %s", c.stderr, errOut)
			}
		})
	}
}
