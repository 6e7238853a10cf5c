package novaformats

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func sp(s string) *string { return &s }

// checkParse fails t unless a parser returned want, or an error containing
// wantErr when that is set.
func checkParse[T any](t *testing.T, got T, err error, want T, wantErr string) {
	t.Helper()
	if wantErr != "" {
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Fatalf("err = %v, want %q", err, wantErr)
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

func TestParsePCIStats(t *testing.T) {
	zero := int64(0)
	tests := []struct {
		name    string
		in      *string
		want    []PCIPool
		wantErr string
	}{
		{"NULL", nil, nil, ""},
		{"empty string", sp(""), nil, ""},
		{"legacy empty list", sp("[]"), nil, ""},
		{"ovo empty", sp(`{"nova_object.version": "1.1", "nova_object.changes": ["objects"], "nova_object.name": "PciDevicePoolList", "nova_object.data": {"objects": []}, "nova_object.namespace": "nova"}`), nil, ""},
		{"ovo 1.1 (nova unit test)", sp(`{"nova_object.name": "PciDevicePoolList", "nova_object.namespace": "nova", "nova_object.version": "1.1", "nova_object.data": {"objects": [{"nova_object.name": "PciDevicePool", "nova_object.namespace": "nova", "nova_object.version": "1.1", "nova_object.data": {"product_id": "foo", "vendor_id": "bar", "numa_node": 0, "tags": {"t1": "v1", "t2": "v2"}, "count": 5}, "nova_object.changes": ["tags"]}]}, "nova_object.changes": ["objects"]}`),
			[]PCIPool{{VendorID: "bar", ProductID: "foo", NUMANode: &zero, Count: 5, Tags: map[string]string{"t1": "v1", "t2": "v2"}}}, ""},
		{"ovo 1.0 without numa_node, null tag", sp(`{"nova_object.name": "PciDevicePoolList", "nova_object.version": "1.0", "nova_object.data": {"objects": [{"nova_object.name": "PciDevicePool", "nova_object.version": "1.0", "nova_object.data": {"product_id": "1", "vendor_id": "2", "tags": {"dev_type": "type-VF", "x": null}, "count": 3}}]}}`),
			[]PCIPool{{VendorID: "2", ProductID: "1", Count: 3, Tags: map[string]string{"dev_type": "type-VF"}}}, ""},
		{"legacy list", sp(`[{"vendor_id": "8086", "product_id": "1515", "numa_node": 0, "count": 7, "dev_type": "type-VF", "physical_network": "physnet1"}]`),
			[]PCIPool{{VendorID: "8086", ProductID: "1515", NUMANode: &zero, Count: 7, Tags: map[string]string{"dev_type": "type-VF", "physical_network": "physnet1"}}}, ""},
		{"legacy dict, count as string", sp(`{"vendor_id": "10de", "product_id": "1db6", "count": "2", "dev_type": "type-PCI"}`),
			[]PCIPool{{VendorID: "10de", ProductID: "1db6", Count: 2, Tags: map[string]string{"dev_type": "type-PCI"}}}, ""},
		{"truncated", sp(`{"nova_object.name": "PciDevicePoolList", "nova_object.data": {"objects": [`), nil, "pci_stats: unexpected end"},
		{"a number", sp(`42`), nil, "pci_stats: unknown format"},
		{"negative count", sp(`[{"vendor_id": "1", "product_id": "2", "count": -1}]`), nil, "negative count"},
		{"pool without count", sp(`[{"vendor_id": "1"}]`), nil, "no count"},
		{"wrong object", sp(`{"nova_object.name": "NUMATopology", "nova_object.data": {}}`), nil, "expected a PciDevicePoolList"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParsePCIStats(tt.in)
			checkParse(t, got, err, tt.want, tt.wantErr)
		})
	}
}

func i64(v int64) *int64 { return &v }

func TestParseNUMATopology(t *testing.T) {
	tests := []struct {
		name    string
		in      *string
		want    []NUMACell
		wantErr string
	}{
		{"NULL", nil, nil, ""},
		{"legacy", sp(`{"cells": [{"id": 1, "cpus": "4-7", "mem": {"total": 512, "used": 0}, "cpu_usage": 0}, {"id": 0, "cpus": "0-3,^2", "mem": {"total": 256}}]}`),
			[]NUMACell{{ID: 0, CPUs: []int64{0, 1, 3}, MemoryMB: 256}, {ID: 1, CPUs: []int64{4, 5, 6, 7}, MemoryMB: 512}}, ""},
		{"NUMACell 1.5 with pcpuset and socket", sp(`{"nova_object.name": "NUMATopology", "nova_object.version": "1.2", "nova_object.data": {"cells": [{"nova_object.name": "NUMACell", "nova_object.version": "1.5", "nova_object.data": {"id": 0, "cpuset": [0, 1, 2, 3], "pcpuset": [4, 5, 6, 7], "memory": 64310, "siblings": [[0, 4], [1, 5], [2, 6], [3, 7]], "socket": 0}}]}}`),
			[]NUMACell{{ID: 0, CPUs: []int64{0, 1, 2, 3}, PCPUs: []int64{4, 5, 6, 7}, Cores: 4, Socket: i64(0), MemoryMB: 64310}}, ""},
		{"NUMACell 1.2 (no pcpuset, unsorted siblings)", sp(`{"nova_object.version": "1.2", "nova_object.name": "NUMATopology", "nova_object.data": {"cells": [{"nova_object.version": "1.2", "nova_object.name": "NUMACell", "nova_object.data": {"cpuset": [0, 1, 16, 17], "siblings": [[17, 1], [0, 16]], "memory": 64383, "id": 0, "pinned_cpus": [1]}}]}}`),
			[]NUMACell{{ID: 0, CPUs: []int64{0, 1, 16, 17}, Cores: 2, MemoryMB: 64383}}, ""},
		{"NUMACell 1.5 unit test (no siblings info beyond singles)", sp(`{"nova_object.name": "NUMATopology", "nova_object.version": "1.2", "nova_object.data": {"cells": [{"nova_object.name": "NUMACell", "nova_object.version": "1.5", "nova_object.data": {"id": 0, "cpuset": [1, 2], "pcpuset": [], "memory": 512, "siblings": [[1], [2]], "mempages": []}}]}}`),
			[]NUMACell{{ID: 0, CPUs: []int64{1, 2}, PCPUs: []int64{}, Cores: 2, MemoryMB: 512}}, ""},
		{"truncated", sp(`{"nova_object.name": "NUMATopology", "nova_object.data": {"cells": [{"id": 0, "cpuset": [0, 1`), nil, "numa_topology: unexpected end"},
		{"unknown format", sp(`{"sockets": [{"socket_id": 0}]}`), nil, "unknown format"},
		{"cell that is not a NUMACell", sp(`{"nova_object.name": "NUMATopology", "nova_object.data": {"cells": [{"nova_object.name": "NUMATopology", "nova_object.data": {"cells": []}}]}}`), nil, "expected a NUMACell"},
		{"duplicate cell id", sp(`{"cells": [{"id": 0, "cpus": "0", "mem": {"total": 1}}, {"id": 0, "cpus": "1", "mem": {"total": 1}}]}`), nil, "appears twice"},
		{"bad cpu list", sp(`{"cells": [{"id": 0, "cpus": "3-1", "mem": {"total": 1}}]}`), nil, "invalid CPU range"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseNUMATopology(tt.in)
			checkParse(t, got, err, tt.want, tt.wantErr)
		})
	}
}

func TestNUMACellCounts(t *testing.T) {
	c := NUMACell{CPUs: []int64{0, 1, 2}, PCPUs: []int64{2, 3}}
	if c.Threads() != 4 || c.CoreCount() != 4 {
		t.Errorf("threads %d cores %d, want 4 4 (cores = threads without siblings)", c.Threads(), c.CoreCount())
	}
	c.Cores = 2
	if c.CoreCount() != 2 {
		t.Errorf("cores %d", c.CoreCount())
	}
}

func TestParseExtraResources(t *testing.T) {
	tests := []struct {
		in      *string
		want    map[string]int64
		wantErr string
	}{
		{nil, nil, ""},
		{sp("{}"), map[string]int64{}, ""},
		{sp(`{"CUSTOM_FPGA": 2, "nvme slot": "4"}`), map[string]int64{"CUSTOM_FPGA": 2, "nvme slot": 4}, ""},
		{sp(`{"not a class!": "lots"}`), nil, "not an integer"},
		{sp(`{"CUSTOM_OK": -3}`), nil, "negative"},
		{sp(`[1]`), nil, "not a JSON object"},
	}
	for _, tt := range tests {
		name := "NULL"
		if tt.in != nil {
			name = *tt.in
		}
		t.Run(name, func(t *testing.T) {
			got, err := ParseExtraResources(tt.in)
			checkParse(t, got, err, tt.want, tt.wantErr)
		})
	}
}

// TestFixtures reads every stored-format fixture (taken from Nova itself)
// that the sample cloud generator is checked against.
func TestFixtures(t *testing.T) {
	files, _ := filepath.Glob("../../testdata/compute_nodes/*.json")
	if len(files) == 0 {
		t.Skip("no fixtures in testdata/compute_nodes")
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		base := filepath.Base(f)
		switch {
		case strings.HasPrefix(base, "pci_stats."):
			_, err = ParsePCIStats(&s)
		case strings.HasPrefix(base, "numa_topology."):
			_, err = ParseNUMATopology(&s)
		}
		if err != nil {
			t.Errorf("%s: %v", base, err)
		}
	}
}

// TestParseCPUSpecBounded: a list naming more CPUs than any host has is an
// error, not minutes of work.
func TestParseCPUSpecBounded(t *testing.T) {
	spec := strings.Repeat("0-65535,", 3)
	if _, err := ParseCPUSpec(spec); err == nil || !strings.Contains(err.Error(), "more than") {
		t.Fatalf("err = %v", err)
	}
	if got, err := ParseCPUSpec(strings.Repeat("0-65535,", 2)); err != nil || len(got) != 65536 {
		t.Fatalf("%d CPUs, %v", len(got), err)
	}
}

// TestThreads: CPUs shared and dedicated are counted once each, whatever
// their ids (the small-id bitset and the map for the rest agree).
func TestThreads(t *testing.T) {
	for _, tc := range []struct {
		cpus, pcpus []int64
		want        int64
	}{
		{nil, nil, 0},
		{[]int64{0, 1, 2, 3}, nil, 4},
		{[]int64{0, 1}, []int64{1, 2}, 3},
		{[]int64{5, 5, 5}, []int64{5}, 1},
		{[]int64{0, 63, 64, 4095}, []int64{4095}, 4},
		{[]int64{0, 4096}, []int64{4096, 70000}, 3},
		{[]int64{-1, 0}, []int64{-1}, 2},
	} {
		c := NUMACell{CPUs: tc.cpus, PCPUs: tc.pcpus}
		if got := c.Threads(); got != tc.want {
			t.Errorf("CPUs %v, PCPUs %v: %d threads, want %d", tc.cpus, tc.pcpus, got, tc.want)
		}
	}
}
