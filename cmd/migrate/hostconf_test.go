package migrate_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/cmd/internal/cmdtest"
)

// TestMigrateInventoryComputeConfigDir: --compute-config-dir DIR gives a
// node of host H the options of DIR/H.conf read over the global config
// (ratio flags winning over both); other hosts keep the global ones; a
// file of a host without a compute node is a warning naming it, a file
// that does not parse an error naming it, before anything is written.
func TestMigrateInventoryComputeConfigDir(t *testing.T) {
	db := filepath.Join(t.TempDir(), "rpctl.db")
	if _, errOut, code := cmdtest.Rpctl(t, "--db", db, "sample-cloud", "--seed", "1", "--nodes", "3"); code != 0 {
		t.Fatalf("sample-cloud: exit %d: %s", code, errOut)
	}
	global := filepath.Join(t.TempDir(), "nova.conf")
	if err := os.WriteFile(global, []byte("[DEFAULT]\nreserved_host_memory_mb = 1024\ninitial_cpu_allocation_ratio = 3.0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := func(files map[string]string) string {
		d := t.TempDir()
		for name, body := range files {
			if err := os.WriteFile(filepath.Join(d, name), []byte(body), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		return d
	}
	own := map[string]string{"cmp1-00001.conf": "[DEFAULT]\nreserved_host_memory_mb = 4096\ncpu_allocation_ratio = 8.0\n"}
	withGhost := map[string]string{"cmp1-00001.conf": own["cmp1-00001.conf"], "ghost.example.org.conf": "[DEFAULT]\n", "README": "not read"}
	tests := []struct {
		name  string
		dir   string
		args  []string
		code  int
		after map[string]string // provider/class -> part of the planned inventory
		err   string            // in stderr
	}{
		{"the host's own file, the others global", dir(own), nil, 0, map[string]string{
			"cmp1-00001.example.org/MEMORY_MB": "reserved=4096 ", "cmp1-00001.example.org/VCPU": "ratio=8.0",
			"cmp1-00002.example.org/MEMORY_MB": "reserved=1024 ", "cmp1-00002.example.org/VCPU": "ratio=3.0"}, ""},
		{"ratio flags win over the host's file", dir(own), []string{"--cpu-allocation-ratio", "2"}, 0, map[string]string{
			"cmp1-00001.example.org/VCPU": "ratio=2.0", "cmp1-00002.example.org/VCPU": "ratio=2.0", "cmp1-00001.example.org/MEMORY_MB": "reserved=4096 "}, ""},
		{"a host without a compute node: a warning", dir(withGhost), nil, 0, map[string]string{"cmp1-00001.example.org/MEMORY_MB": "reserved=4096 "},
			"Warning: no live compute node has host ghost.example.org: its config is not used ("},
		{"a file that does not parse", dir(map[string]string{"cmp1-00002.conf": "[DEFAULT\nreserved_host_cpus = 1\n"}), nil, 255, nil,
			"--compute-config-dir: host cmp1-00002: config file "},
		{"a bad value", dir(map[string]string{"cmp1-00002.conf": "[DEFAULT]\nreserved_host_cpus = many\n"}), nil, 255, nil,
			"cmp1-00002.conf:2: [DEFAULT] reserved_host_cpus: expected a non-negative integer"},
		{"a bad device_spec", dir(map[string]string{"cmp1-00002.conf": "[pci]\nreport_in_placement = True\ndevice_spec = {nope\n"}), nil, 255, nil,
			"cmp1-00002.conf:3: [pci] device_spec: invalid entry"},
		{"a directory that does not exist", filepath.Join(t.TempDir(), "none"), nil, 255, nil, "--compute-config-dir "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"--db", db, "--config-file", global, "migrate", "inventory", "--dry-run", "-f", "json", "--compute-config-dir", tt.dir}, tt.args...)
			out, errOut, code := cmdtest.Rpctl(t, args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d: %s", code, tt.code, errOut)
			}
			if tt.err != "" && !strings.Contains(errOut, tt.err) {
				t.Errorf("stderr lacks %q:\n%s", tt.err, errOut)
			}
			if tt.err != "" && tt.code != 0 && strings.Contains(errOut, "\n"+tt.err) {
				t.Errorf("not a one-line error:\n%s", errOut)
			}
			if tt.code != 0 {
				return
			}
			if tt.err == "" && strings.Contains(errOut, "Warning") {
				t.Errorf("unexpected warning:\n%s", errOut)
			}
			var rows []struct {
				Provider      string `json:"provider"`
				ResourceClass string `json:"resource_class"`
				After         string `json:"after"`
			}
			if err := json.Unmarshal([]byte(out), &rows); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			got := map[string]string{}
			for _, r := range rows {
				got[r.Provider+"/"+r.ResourceClass] = r.After
			}
			for k, want := range tt.after {
				if !strings.Contains(got[k], want) {
					t.Errorf("%s: %q, want %q", k, got[k], want)
				}
			}
		})
	}
	// A real run warns too, after planning.
	_, errOut, code := cmdtest.Rpctl(t, "--db", db, "--config-file", global, "migrate", "inventory", "--compute-config-dir", dir(withGhost))
	if code != 0 || !strings.Contains(errOut, "no live compute node has host ghost.example.org") {
		t.Errorf("run: exit %d, want 0 and the warning:\n%s", code, errOut)
	}
}

// TestReservedAboveTotal (issue 37 row 7): a reserved_host_* Placement could
// never hold is refused naming the option, as a negative one is; one above
// some nodes' totals is written as the total (reserved = total, as
// documented) with one warning per option naming it, in the dry run and
// the run.
func TestReservedAboveTotal(t *testing.T) {
	db := filepath.Join(t.TempDir(), "rpctl.db")
	if _, errOut, code := cmdtest.Rpctl(t, "--db", db, "sample-cloud", "--seed", "1", "--nodes", "3"); code != 0 {
		t.Fatalf("sample-cloud: exit %d: %s", code, errOut)
	}
	conf := func(body string) string {
		p := filepath.Join(t.TempDir(), "nova.conf")
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	negative := conf("[DEFAULT]\nreserved_host_cpus = -1\n")
	_, negErr, negCode := cmdtest.Rpctl(t, "--db", db, "--config-file", negative, "migrate", "inventory", "--dry-run")
	for _, tt := range []struct {
		name, body string
		args       []string
		code       int
		err        []string
		noErr      string
	}{
		{"beyond MAX_INT: refused as a negative value is", "[DEFAULT]\nreserved_host_cpus = 99999999999\n", []string{"--dry-run"}, negCode,
			[]string{"nova.conf:2: [DEFAULT] reserved_host_cpus: 99999999999 is more than Placement can hold as an inventory's reserved (at most 2147483647)"}, "Warning"},
		{"above every node's total: warned in the dry run", "[DEFAULT]\nreserved_host_cpus = 100000\nreserved_host_memory_mb = 100000000\n", []string{"--dry-run"}, 0,
			// cmp1-00001 and 00002 have CPU sets: their VCPU reserved is 0.
			[]string{"Warning: [DEFAULT] reserved_host_cpus is above the VCPU total of 1 compute node (cmp1-00003.example.org first): their VCPU reserved is set to the total",
				"Warning: [DEFAULT] reserved_host_memory_mb is above the MEMORY_MB total of 3 compute nodes"}, "reserved_host_disk_mb"},
		{"within the totals: no warning", "[DEFAULT]\nreserved_host_cpus = 2\n", nil, 0, nil, "Warning"},
		{"and in the run", "[DEFAULT]\nreserved_host_cpus = 100000\n", nil, 0,
			[]string{"Warning: [DEFAULT] reserved_host_cpus is above the VCPU total of 1 compute node (cmp1-00003.example.org first)"}, "reserved_host_memory_mb"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"--db", db, "--config-file", conf(tt.body), "migrate", "inventory"}, tt.args...)
			_, errOut, code := cmdtest.Rpctl(t, args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d: %s", code, tt.code, errOut)
			}
			for _, w := range tt.err {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr lacks %q:\n%s", w, errOut)
				}
			}
			if tt.noErr != "" && strings.Contains(errOut, tt.noErr) {
				t.Errorf("stderr has %q:\n%s", tt.noErr, errOut)
			}
		})
	}
	if negCode == 0 || !strings.Contains(negErr, "reserved_host_cpus: expected a non-negative integer") {
		t.Errorf("a negative reserved_host_cpus: exit %d: %s", negCode, negErr)
	}
	out, errOut, code := cmdtest.Rpctl(t, "--db", db, "inventory", "show", "cmp1-00003.example.org", "VCPU", "-f", "json")
	if code != 0 || !strings.Contains(out, `"capacity": 0`) {
		t.Errorf("after reserved_host_cpus = 100000: %d %s %s", code, out, errOut)
	}
}

// TestMigrateAllocationsComputeConfigDir: migrate allocations alone reads
// the hosts' own files too (their [pci] puts the device providers its PCI
// allocations go to), with the same checks as migrate inventory.
func TestMigrateAllocationsComputeConfigDir(t *testing.T) {
	db := filepath.Join(t.TempDir(), "rpctl.db")
	if _, errOut, code := cmdtest.Rpctl(t, "--db", db, "sample-cloud", "--seed", "1", "--nodes", "3"); code != 0 {
		t.Fatalf("sample-cloud: exit %d: %s", code, errOut)
	}
	if _, errOut, code := cmdtest.Rpctl(t, "--db", db, "migrate", "inventory"); code != 0 {
		t.Fatalf("migrate inventory: exit %d: %s", code, errOut)
	}
	for _, tt := range []struct {
		name, file string
		code       int
		err        string
	}{
		{"a bad device_spec", "[pci]\nreport_in_placement = True\ndevice_spec = {nope\n", 255, "cmp1-00002.conf:3: [pci] device_spec: invalid entry"},
		{"a good file", "[pci]\nreport_in_placement = True\n", 0, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := t.TempDir()
			if err := os.WriteFile(filepath.Join(d, "cmp1-00002.conf"), []byte(tt.file), 0o600); err != nil {
				t.Fatal(err)
			}
			for _, dry := range [][]string{{"--dry-run"}, nil} {
				_, errOut, code := cmdtest.Rpctl(t, append([]string{"--db", db, "migrate", "allocations", "--compute-config-dir", d}, dry...)...)
				if code != tt.code || !strings.Contains(errOut, tt.err) {
					t.Errorf("%v: exit %d, want %d and %q:\n%s", dry, code, tt.code, tt.err, errOut)
				}
			}
		})
	}
}
