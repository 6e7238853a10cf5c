package samplecloud

import (
	"encoding/json"
	"fmt"
	"strings"
)

// The stored formats of compute_nodes.pci_stats, numa_topology and
// extra_resources that Generate produces. Each has a fixture in
// testdata/compute_nodes/ taken from Nova itself.
const (
	PCINull       = "null"              // column NULL (no PCI tracking)
	PCIOvo        = "ovo-1.1"           // PciDevicePoolList 1.1 with pools (Liberty+)
	PCIOvoEmpty   = "ovo-1.1-empty"     // PciDevicePoolList 1.1, no pools
	PCILegacyList = "legacy-list"       // pre-Liberty list of pool dicts, extra keys are tags
	PCILegacyDict = "legacy-dict"       // pre-Liberty single pool dict
	PCILegacyNone = "legacy-list-empty" // pre-Liberty "[]"

	NUMANull   = "null"         // column NULL (driver without NUMA support)
	NUMACell15 = "ovo-cell-1.5" // NUMATopology 1.2 / NUMACell 1.5 (Train+: pcpuset, socket)
	NUMACell14 = "ovo-cell-1.4" // pcpuset, no socket
	NUMACell13 = "ovo-cell-1.3" // network_metadata, no pcpuset
	NUMACell12 = "ovo-cell-1.2" // mempages (NUMAPagesTopology 1.0), no network_metadata
	NUMALegacy = "legacy"       // pre-Liberty {"cells": [{"id", "cpus", "mem": {...}}]}

	ExtraNull   = "null"
	ExtraEmpty  = "empty"  // "{}"
	ExtraCustom = "custom" // {"CUSTOM_...": total}
)

// PCIFormats, NUMAFormats and ExtraFormats list every format, in the order
// the first nodes of a cloud get them.
var (
	PCIFormats   = []string{PCIOvo, PCINull, PCIOvoEmpty, PCILegacyList, PCILegacyDict, PCILegacyNone}
	NUMAFormats  = []string{NUMACell15, NUMACell14, NUMACell13, NUMACell12, NUMALegacy, NUMANull}
	ExtraFormats = []string{ExtraNull, ExtraCustom, ExtraEmpty}
)

// ovo is an oslo.versionedobjects primitive; field order follows
// obj_to_primitive so generated rows look like Nova's.
type ovo[T any] struct {
	Name      string   `json:"nova_object.name"`
	Namespace string   `json:"nova_object.namespace"`
	Version   string   `json:"nova_object.version"`
	Data      T        `json:"nova_object.data"`
	Changes   []string `json:"nova_object.changes"`
}

func obj[T any](name, version string, data T, changes ...string) ovo[T] {
	return ovo[T]{Name: name, Namespace: "nova", Version: version, Data: data, Changes: changes}
}

// hardware is one host's CPU and memory layout, from which vcpus, memory_mb
// and the NUMA topology are all derived so that they agree.
type hardware struct {
	sockets, cores, threads int
	cellMemMB               []int64 // per NUMA cell (one cell per socket)
	dedicated               bool    // half the cores in [compute]cpu_dedicated_set
}

func (h hardware) vcpus() int64 { return int64(h.sockets * h.cores * h.threads) }

func (h hardware) memoryMB() int64 {
	var t int64
	for _, m := range h.cellMemMB {
		t += m
	}
	return t
}

// cellCPUs returns socket s's CPU ids the way Linux numbers them: thread 0 of
// every core first, then the hyperthread siblings.
func (h hardware) cellCPUs(s int) (cpus []int, siblings [][]int) {
	per := h.sockets * h.cores
	for c := 0; c < h.cores; c++ {
		id := s*h.cores + c
		sib := []int{id}
		for t := 1; t < h.threads; t++ {
			sib = append(sib, id+t*per)
		}
		siblings = append(siblings, sib)
		cpus = append(cpus, sib...)
	}
	return sortInts(cpus), siblings
}

type pagesData struct {
	SizeKB   int64  `json:"size_kb"`
	Total    int64  `json:"total"`
	Used     int64  `json:"used"`
	Reserved *int64 `json:"reserved,omitempty"` // NUMAPagesTopology 1.1
}

type netMeta struct {
	Physnets []string `json:"physnets"`
	Tunneled bool     `json:"tunneled"`
}

type numaCellData struct {
	ID              int              `json:"id"`
	CPUSet          []int            `json:"cpuset"`
	PCPUSet         *[]int           `json:"pcpuset,omitempty"` // 1.4
	Memory          int64            `json:"memory"`
	CPUUsage        int64            `json:"cpu_usage"`
	MemoryUsage     int64            `json:"memory_usage"`
	PinnedCPUs      []int            `json:"pinned_cpus"`
	Siblings        [][]int          `json:"siblings"`
	Mempages        []ovo[pagesData] `json:"mempages"`
	NetworkMetadata *ovo[netMeta]    `json:"network_metadata,omitempty"` // 1.3
	Socket          json.RawMessage  `json:"socket,omitempty"`           // 1.5, nullable
}

type numaTopoData struct {
	Cells []ovo[numaCellData] `json:"cells"`
}

// numaTopology renders h in one of the NUMA formats.
func numaTopology(h hardware, format string, shuffleSiblings func([][]int)) *string {
	if format == NUMANull {
		return nil
	}
	if format == NUMALegacy {
		type mem struct {
			Total int64 `json:"total"`
			Used  int64 `json:"used"`
		}
		type cell struct {
			ID       int    `json:"id"`
			CPUs     string `json:"cpus"`
			Mem      mem    `json:"mem"`
			CPUUsage int64  `json:"cpu_usage"`
		}
		var cells []cell
		for s := 0; s < h.sockets; s++ {
			cpus, _ := h.cellCPUs(s)
			cells = append(cells, cell{ID: s, CPUs: cpuSpec(cpus), Mem: mem{Total: h.cellMemMB[s]}})
		}
		return jsonString(map[string]any{"cells": cells})
	}
	version := strings.TrimPrefix(format, "ovo-cell-")
	var cells []ovo[numaCellData]
	for s := 0; s < h.sockets; s++ {
		cpus, siblings := h.cellCPUs(s)
		d := numaCellData{ID: s, Memory: h.cellMemMB[s], PinnedCPUs: []int{}, Siblings: siblings}
		d.CPUSet = cpus
		changes := []string{"cpu_usage", "cpuset", "id", "memory", "memory_usage", "mempages", "pinned_cpus", "siblings"}
		if version >= "1.4" {
			pcpus := []int{}
			if h.dedicated {
				// The upper half of each socket's cores, with their siblings,
				// is dedicated; libvirt splits cpuset and pcpuset this way.
				var shared []int
				for i, sib := range siblings {
					if i >= len(siblings)/2 {
						pcpus = append(pcpus, sib...)
					} else {
						shared = append(shared, sib...)
					}
				}
				d.CPUSet, pcpus = sortInts(shared), sortInts(pcpus)
			}
			d.PCPUSet = &pcpus
			changes = append(changes, "pcpuset")
		}
		pagesVersion := "1.1"
		if version == "1.2" {
			// Pre-Rocky computes wrote NUMAPagesTopology 1.0 (no reserved)
			// and did not sort siblings.
			pagesVersion = "1.0"
			shuffleSiblings(d.Siblings)
		}
		for _, size := range []int64{4, 2048, 1048576} {
			p := pagesData{SizeKB: size}
			if size == 4 {
				p.Total = h.cellMemMB[s] * 1024 / 4
			}
			if pagesVersion == "1.1" {
				zero := int64(0)
				p.Reserved = &zero
			}
			d.Mempages = append(d.Mempages, obj("NUMAPagesTopology", pagesVersion, p, "reserved", "size_kb", "total", "used"))
		}
		if version >= "1.3" {
			nm := obj("NetworkMetadata", "1.0", netMeta{Physnets: []string{}}, "physnets", "tunneled")
			d.NetworkMetadata = &nm
			changes = append(changes, "network_metadata")
		}
		if version >= "1.5" {
			d.Socket = json.RawMessage(fmt.Sprint(s))
			changes = append(changes, "socket")
		}
		cells = append(cells, obj("NUMACell", version, d, changes...))
	}
	return jsonString(obj("NUMATopology", "1.2", numaTopoData{Cells: cells}, "cells"))
}

// pciPool is one pool of identical devices.
type pciPool struct {
	vendor, product string
	numaNode        *int
	count           int
	tags            map[string]string
}

type pciPoolData struct {
	ProductID string            `json:"product_id"`
	VendorID  string            `json:"vendor_id"`
	NUMANode  *int              `json:"numa_node"`
	Tags      map[string]string `json:"tags"`
	Count     int               `json:"count"`
}

type pciPoolListData struct {
	Objects []ovo[pciPoolData] `json:"objects"`
}

// pciStats renders pools in one of the pci_stats formats.
func pciStats(pools []pciPool, format string) *string {
	switch format {
	case PCINull:
		return nil
	case PCILegacyNone:
		s := "[]"
		return &s
	case PCIOvo, PCIOvoEmpty:
		objs := []ovo[pciPoolData]{}
		if format == PCIOvo {
			for _, p := range pools {
				objs = append(objs, obj("PciDevicePool", "1.1",
					pciPoolData{ProductID: p.product, VendorID: p.vendor, NUMANode: p.numaNode, Tags: p.tags, Count: p.count},
					"count", "numa_node", "product_id", "tags", "vendor_id"))
			}
		}
		return jsonString(obj("PciDevicePoolList", "1.1", pciPoolListData{Objects: objs}, "objects"))
	}
	// Legacy: the pool's own keys plus its tags flattened into one dict.
	var dicts []map[string]any
	for _, p := range pools {
		d := map[string]any{"vendor_id": p.vendor, "product_id": p.product, "count": p.count}
		if p.numaNode != nil && format == PCILegacyList {
			d["numa_node"] = *p.numaNode
		}
		for k, v := range p.tags {
			d[k] = v
		}
		dicts = append(dicts, d)
	}
	if format == PCILegacyDict {
		return jsonString(dicts[0])
	}
	return jsonString(dicts)
}

func jsonString(v any) *string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only generator-built values reach here
	}
	s := string(b)
	return &s
}

// cpuSpec formats CPU ids as Nova's parse_cpu_spec reads them: "0-3,8-11".
func cpuSpec(cpus []int) string {
	cpus = sortInts(cpus)
	var parts []string
	for i := 0; i < len(cpus); {
		j := i
		for j+1 < len(cpus) && cpus[j+1] == cpus[j]+1 {
			j++
		}
		if j == i {
			parts = append(parts, fmt.Sprint(cpus[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", cpus[i], cpus[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}
