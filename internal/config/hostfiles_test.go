package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestHostFiles: DIR/<host>.conf by host; other names, directories and
// a directory that does not exist.
func TestHostFiles(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"cmp1.conf", "cmp-2.example.org.conf", "README", "notes.conf.bak", ".conf"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("[DEFAULT]\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "sub.conf"), 0o700); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		dir  string
		want map[string]string
		err  string
	}{
		{"hosts by file name", dir, map[string]string{"cmp1": filepath.Join(dir, "cmp1.conf"), "cmp-2.example.org": filepath.Join(dir, "cmp-2.example.org.conf")}, ""},
		{"empty directory", t.TempDir(), map[string]string{}, ""},
		{"missing directory", filepath.Join(dir, "nope"), nil, "nope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := HostFiles(tt.dir)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

// TestHostFileOverGlobal: a compute host's own file read after the global
// ones wins for single values, and multi-valued [pci] device_spec adds up
// across the files (oslo.config's MultiStrOpt).
func TestHostFileOverGlobal(t *testing.T) {
	global := write(t, "nova.conf", `[DEFAULT]
reserved_host_memory_mb = 1024
reserved_host_disk_mb = 2048
cpu_allocation_ratio = 4.0
[pci]
device_spec = {"vendor_id": "8086"}
`)
	host := write(t, "cmp1.conf", `[DEFAULT]
reserved_host_memory_mb = 4096
initial_ram_allocation_ratio = 1.0
[pci]
report_in_placement = True
device_spec = {"vendor_id": "10de", "resource_class": "gpu"}
`)
	o, err := LoadFiles([]string{global, host})
	if err != nil {
		t.Fatal(err)
	}
	if o.Reserved != (Reserved{MemoryMB: 4096, DiskMB: 2048}) || *o.Ratios.CPU != 4 || o.Ratios.InitialRAM != 1 || !o.PCI.ReportInPlacement {
		t.Errorf("merged options %+v %+v %+v", o.Reserved, o.Ratios, o.PCI)
	}
	if want := []string{`{"vendor_id": "8086"}`, `{"vendor_id": "10de", "resource_class": "gpu"}`}; !reflect.DeepEqual(o.PCI.DeviceSpec, want) {
		t.Errorf("device_spec %q, want %q", o.PCI.DeviceSpec, want)
	}
	bad := write(t, "cmp2.conf", "[DEFAULT\nreserved_host_cpus = 1\n")
	if _, err := LoadFiles([]string{global, bad}); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("a file that does not parse: err = %v, want it named", err)
	}
}
