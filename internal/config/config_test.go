package config

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func write(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadFiles(t *testing.T) {
	nova := write(t, "nova.conf", `
[DEFAULT]
# comment
cpu_allocation_ratio = 4.0
initial_ram_allocation_ratio: 1.0
reserved_host_memory_mb = 2048
reserved_host_disk_mb = 1500
[database]
connection = mysql+pymysql://nova:pw@db/nova?charset=utf8
[api_database]
connection = mysql+pymysql://nova:pw@db/nova_api
`)
	placement := write(t, "placement.conf", `
[placement_database]
connection = "mysql+pymysql://placement:pw@db/placement"
[DEFAULT]
cpu_allocation_ratio = 8.0
`)
	o, err := LoadFiles([]string{nova, placement})
	if err != nil {
		t.Fatal(err)
	}
	if o.Ratios.CPU == nil || *o.Ratios.CPU != 8.0 {
		t.Errorf("later file must win: cpu ratio %v", o.Ratios.CPU)
	}
	if o.Ratios.RAM != nil || o.Ratios.Disk != nil {
		t.Errorf("unset ratios must stay nil: %v %v", o.Ratios.RAM, o.Ratios.Disk)
	}
	if o.Ratios.InitialCPU != 16.0 || o.Ratios.InitialRAM != 1.0 || o.Ratios.InitialDisk != 1.0 {
		t.Errorf("initial ratios %+v", o.Ratios)
	}
	// Only the option the file sets has a source: the others are Nova's
	// default, which the release decides (migrate.RatiosFor).
	if o.Ratios.InitialCPUSource != "" || !strings.HasSuffix(o.Ratios.InitialRAMSource, "nova.conf:5") || o.Ratios.InitialDiskSource != "" {
		t.Errorf("initial ratio sources %q %q %q", o.Ratios.InitialCPUSource, o.Ratios.InitialRAMSource, o.Ratios.InitialDiskSource)
	}
	if o.Reserved.MemoryMB != 2048 || o.Reserved.DiskMB != 1500 || o.Reserved.CPUs != 0 {
		t.Errorf("reserved %+v", o.Reserved)
	}
	if o.PlacementDB.Value != "mysql+pymysql://placement:pw@db/placement" || !strings.HasSuffix(o.PlacementDB.Source, "placement.conf:3") {
		t.Errorf("placement db %+v", o.PlacementDB)
	}
	if o.CellDB.Value == "" || o.APIDB.Value == "" {
		t.Errorf("db options missing: %+v", o)
	}
}

func TestDefaults(t *testing.T) {
	o, err := LoadFiles(nil)
	if err != nil {
		t.Fatal(err)
	}
	if o.Reserved.MemoryMB != 512 || o.Ratios.InitialCPU != 16 || o.Ratios.InitialRAM != 1.5 || o.Ratios.InitialDisk != 1 {
		t.Errorf("defaults %+v", o)
	}
}

func TestBadInput(t *testing.T) {
	tests := []struct{ name, body, want string }{
		{"no section", "connection = x\n", "nova.conf:1: option"},
		{"bad header", "[DEFAULT\n", "nova.conf:1: malformed section header"},
		{"no equals", "[DEFAULT]\njust words\n", "nova.conf:2: expected \"key = value\""},
		{"stray continuation", "[DEFAULT]\n\n  indented\n", "nova.conf:3: continuation line"},
		{"ratio not a number", "[DEFAULT]\ncpu_allocation_ratio = lots\n", "[DEFAULT] cpu_allocation_ratio: expected a number, got \"lots\""},
		{"negative ratio", "[DEFAULT]\ndisk_allocation_ratio = -1\n", "[DEFAULT] disk_allocation_ratio: must be >= 0.0"},
		{"negative initial", "[DEFAULT]\ninitial_ram_allocation_ratio = -0.5\n", "initial_ram_allocation_ratio: must be >= 0.0"},
		{"bad reserved", "[DEFAULT]\nreserved_host_memory_mb = 1GB\n", "reserved_host_memory_mb: expected a non-negative integer"},
		{"negative reserved", "[DEFAULT]\nreserved_host_cpus = -1\n", "reserved_host_cpus: expected a non-negative integer"},
		// Issue 37 row 7: beyond what Placement holds as reserved.
		{"reserved cpus beyond MAX_INT", "[DEFAULT]\nreserved_host_cpus = 99999999999\n", "[DEFAULT] reserved_host_cpus: 99999999999 is more than Placement can hold as an inventory's reserved (at most 2147483647)"},
		{"reserved memory beyond MAX_INT", "[DEFAULT]\nreserved_host_memory_mb = 2147483648\n", "reserved_host_memory_mb: 2147483648 is more than"},
		{"reserved disk beyond MAX_INT GiB", "[DEFAULT]\nreserved_host_disk_mb = 2199023254529\n", "reserved_host_disk_mb: 2199023254529 is more than Placement can hold as an inventory's reserved (at most 2199023254528)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadFiles([]string{write(t, "nova.conf", tc.body)})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}
	if _, err := LoadFiles([]string{"/nonexistent/nova.conf"}); err == nil || !strings.Contains(err.Error(), "/nonexistent/nova.conf") {
		t.Errorf("missing file: %v", err)
	}
}

// TestReservedAtTheLimit: the largest reserved_host_* Placement can hold
// are accepted.
func TestReservedAtTheLimit(t *testing.T) {
	o, err := LoadFiles([]string{write(t, "nova.conf", "[DEFAULT]\nreserved_host_cpus = 2147483647\nreserved_host_memory_mb = 2147483647\nreserved_host_disk_mb = 2199023254528\n")})
	if err != nil {
		t.Fatal(err)
	}
	if o.Reserved != (Reserved{CPUs: 2147483647, MemoryMB: 2147483647, DiskMB: 2199023254528}) {
		t.Errorf("reserved %+v", o.Reserved)
	}
}

func TestZeroRatioIsSet(t *testing.T) {
	// An explicit 0.0 is a set option (status flags it), not "unset".
	o, err := LoadFiles([]string{write(t, "nova.conf", "[DEFAULT]\nram_allocation_ratio = 0.0\n")})
	if err != nil {
		t.Fatal(err)
	}
	if o.Ratios.RAM == nil || *o.Ratios.RAM != 0 {
		t.Errorf("ram ratio %v", o.Ratios.RAM)
	}
}

// TestPCIOptions: [pci] report_in_placement is an oslo.config boolean, and
// device_spec a MultiStrOpt: every line of every file, in order; its
// deprecated names count only when it is not set.
func TestPCIOptions(t *testing.T) {
	tests := []struct {
		name   string
		files  []string
		report bool
		specs  []string
		err    string
	}{
		{"defaults", []string{"[DEFAULT]\n"}, false, nil, ""},
		{"lines and files gathered", []string{
			"[pci]\nreport_in_placement = True\ndevice_spec = {\"vendor_id\": \"8086\"}\ndevice_spec = [{\"product_id\": \"1eb8\",\n  \"resource_class\": \"gpu\"}]\n",
			"[pci]\ndevice_spec = {\"address\": \"*:81:*.*\"}\n"},
			true, []string{`{"vendor_id": "8086"}`, "[{\"product_id\": \"1eb8\",\n\"resource_class\": \"gpu\"}]", `{"address": "*:81:*.*"}`}, ""},
		{"deprecated name", []string{"[pci]\nreport_in_placement = yes\npassthrough_whitelist = {\"vendor_id\": \"10de\"}\n"}, true, []string{`{"vendor_id": "10de"}`}, ""},
		{"new name wins", []string{"[DEFAULT]\npci_passthrough_whitelist = {\"vendor_id\": \"10de\"}\n[pci]\ndevice_spec = {}\nreport_in_placement = off\n"}, false, []string{`{}`}, ""},
		{"not a boolean", []string{"[pci]\nreport_in_placement = maybe\n"}, false, nil, "[pci] report_in_placement: expected a boolean"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var paths []string
			for i, body := range tt.files {
				paths = append(paths, write(t, string(rune('a'+i))+".conf", body))
			}
			o, err := LoadFiles(paths)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if o.PCI.ReportInPlacement != tt.report || !slices.Equal(o.PCI.DeviceSpec, tt.specs) {
				t.Errorf("got %v %q, want %v %q", o.PCI.ReportInPlacement, o.PCI.DeviceSpec, tt.report, tt.specs)
			}
		})
	}
}

// TestNovaRelease: [rpctl] nova_release is read as written, the later file
// winning, with its file and line (cmdutil.NovaRelease parses it); no
// section, no release.
func TestNovaRelease(t *testing.T) {
	a := write(t, "nova.conf", "[rpctl]\nnova_release = 2024.1\n")
	b := write(t, "placement.conf", "[DEFAULT]\n[rpctl]\n\nnova_release = 2025.1\n")
	for _, tc := range []struct {
		files []string
		want  string
		src   string
	}{
		{[]string{a}, "2024.1", "nova.conf:2"},
		{[]string{a, b}, "2025.1", "placement.conf:4"},
		{[]string{write(t, "empty.conf", "[DEFAULT]\n")}, "", ""},
	} {
		o, err := LoadFiles(tc.files)
		if err != nil {
			t.Fatal(err)
		}
		if o.NovaRelease.Value != tc.want || !strings.HasSuffix(o.NovaRelease.Source, tc.src) {
			t.Errorf("%v: %+v, want %q from %s", tc.files, o.NovaRelease, tc.want, tc.src)
		}
	}
}
