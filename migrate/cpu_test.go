package migrate

import (
	"testing"

	"github.com/rpctl/rpctl/internal/novaformats"
)

func TestCPUSplit(t *testing.T) {
	cell := func(id int64, cpus, pcpus []int64) novaformats.NUMACell {
		return novaformats.NUMACell{ID: id, CPUs: cpus, PCPUs: pcpus}
	}
	tests := []struct {
		name  string
		cells []novaformats.NUMACell
		mode  cpuMode
		pcpus int64
	}{
		{"no NUMA topology", nil, cpuLegacy, 0},
		{"pre-Train cells: no pcpuset", []novaformats.NUMACell{cell(0, []int64{0, 1}, nil)}, cpuLegacy, 0},
		{"legacy fallback: pcpuset = cpuset", []novaformats.NUMACell{cell(0, []int64{0, 1}, []int64{1, 0}), cell(1, []int64{2, 3}, []int64{2, 3})}, cpuLegacy, 0},
		{"cpu_shared_set only", []novaformats.NUMACell{cell(0, []int64{0, 1}, []int64{}), cell(1, []int64{2, 3}, []int64{})}, cpuShared, 0},
		{"cpu_shared_set only, one cell without shared CPUs", []novaformats.NUMACell{cell(0, []int64{}, []int64{}), cell(1, []int64{2, 3}, []int64{})}, cpuShared, 0},
		{"cpu_dedicated_set and cpu_shared_set", []novaformats.NUMACell{cell(0, []int64{0, 1}, []int64{2, 3}), cell(1, []int64{4}, []int64{5, 6, 7})}, cpuDedicated, 5},
		{"cpu_dedicated_set only", []novaformats.NUMACell{cell(0, []int64{}, []int64{0, 1}), cell(1, []int64{}, []int64{2, 3})}, cpuDedicated, 4},
		{"dedicated CPUs in one cell only", []novaformats.NUMACell{cell(0, []int64{0, 1}, []int64{}), cell(1, []int64{2}, []int64{3})}, cpuDedicated, 1},
		{"overlap: no Nova config writes it", []novaformats.NUMACell{cell(0, []int64{0, 1}, []int64{1, 2})}, cpuBad, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mode, pcpus := cpuSplit(tt.cells)
			if mode != tt.mode || pcpus != tt.pcpus {
				t.Errorf("cpuSplit = %v, %d; want %v, %d", mode, pcpus, tt.mode, tt.pcpus)
			}
		})
	}
}
