package migrate

import (
	"github.com/rpctl/rpctl/internal/novaformats"
)

// cpuMode is how a host's nova.conf split its CPUs, as the row's
// numa_topology shows it. Nova 26's LibvirtDriver._get_host_numa_topology
// sets each cell's cpuset = cell CPUs & _get_vcpu_available() and pcpuset =
// cell CPUs & _get_pcpu_available(), except that with no
// cpu_dedicated_set (and not cpu_shared_set alone) it falls back to
// pcpuset = cpuset (the Train upgrade's legacy rule). So:
//
//	row (every cell)               nova.conf had                         VCPU  PCPU         VCPU reserved
//	pcpuset = cpuset, or no NUMA   nothing, or vcpu_pin_set              vcpus none         reserved_host_cpus
//	pcpuset empty, cpuset not      [compute] cpu_shared_set only         vcpus none         0
//	disjoint, pcpuset not empty    [compute] cpu_dedicated_set (± shared) vcpus Σ |pcpuset| 0
//	overlapping, not equal         nothing Nova can write: a bad row
//
// VCPU and PCPU totals follow LibvirtDriver.update_provider_tree: VCPU total
// = len(_get_vcpu_available()), which is the row's vcpus column
// (get_available_resource writes the same value), and PCPU total =
// len(_get_pcpu_available()) = the dedicated set, every CPU of which is
// online and so in one cell's pcpuset; PCPU has reserved 0 and ratio 1.
// VCPU reserved is CONF.reserved_host_cpus, which
// LibvirtDriver._check_cpu_set_configuration refuses to be anything but 0
// once cpu_shared_set or cpu_dedicated_set is set (without vcpu_pin_set):
// a nova-compute on such a host writes 0 whatever rpctl's nova.conf says.
type cpuMode int

const (
	cpuLegacy    cpuMode = iota // no CPU sets (or vcpu_pin_set): no PCPU
	cpuShared                   // cpu_shared_set only: no PCPU, VCPU reserved 0
	cpuDedicated                // cpu_dedicated_set: PCPU, VCPU reserved 0
	cpuBad                      // a row Nova cannot have written
)

// cpuModes is the table above: what each mode reports.
var cpuModes = [...]struct {
	name string
	// pcpu: PCPU inventory = Σ |pcpuset|; zeroReserved: VCPU reserved 0.
	pcpu, zeroReserved bool
}{
	cpuLegacy:    {"no CPU sets (pcpuset = cpuset)", false, false},
	cpuShared:    {"[compute] cpu_shared_set only (empty pcpuset)", false, true},
	cpuDedicated: {"[compute] cpu_dedicated_set (pcpuset disjoint from cpuset)", true, true},
}

// cpuSplit reads the host's CPU mode from its NUMA cells (see cpuMode).
// Cells without a pcpuset (legacy and pre-Train formats) are Nova's
// pcpuset = cpuset.
func cpuSplit(cells []novaformats.NUMACell) (mode cpuMode, pcpus int64) {
	var dedicated, overlap, differ bool
	for _, c := range cells {
		if c.PCPUs == nil {
			continue
		}
		in := make(map[int64]bool, len(c.CPUs))
		for _, x := range c.CPUs {
			in[x] = true
		}
		both := 0
		for _, x := range c.PCPUs {
			if in[x] {
				both++
			}
		}
		if both > 0 {
			overlap = true
		}
		if both != len(c.PCPUs) || both != len(in) {
			differ = true
		}
		dedicated = dedicated || len(c.PCPUs) > 0
		pcpus += int64(len(c.PCPUs))
	}
	switch {
	case !differ:
		return cpuLegacy, 0
	case overlap:
		return cpuBad, 0
	case dedicated:
		return cpuDedicated, pcpus
	default:
		return cpuShared, 0
	}
}
