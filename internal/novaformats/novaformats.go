// Package novaformats reads the JSON blobs Nova keeps in compute_nodes
// (pci_stats, numa_topology, extra_resources) in every format a Nova release
// has stored them: oslo.versionedobjects primitives of any version and the
// pre-Liberty plain JSON. It returns plain values and never guesses: a blob
// it cannot read is an error naming the column, so that the migration can
// skip that one row and say why.
package novaformats

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// PCIPool is one pool of identical PCI devices.
type PCIPool struct {
	VendorID  string
	ProductID string
	NUMANode  *int64
	Count     int64
	// Tags are every other key: dev_type, physical_network,
	// resource_class, ...
	Tags map[string]string
}

// DevType returns the pool's dev_type tag ("type-PCI", "type-VF", ...).
func (p PCIPool) DevType() string { return p.Tags["dev_type"] }

const ovoName = "nova_object.name"

// ovo is an oslo.versionedobjects primitive; the changes list and key order
// vary between writers and are ignored.
type ovo struct {
	Name    string          `json:"nova_object.name"`
	Version string          `json:"nova_object.version"`
	Data    json.RawMessage `json:"nova_object.data"`
}

func isOVO(raw []byte) bool { return bytes.Contains(raw, []byte(`"`+ovoName+`"`)) }

func decodeOVO(raw []byte, want string) (ovo, error) {
	var o ovo
	if err := json.Unmarshal(raw, &o); err != nil {
		return o, err
	}
	if o.Name != want {
		return o, fmt.Errorf("expected a %s object, found %q", want, o.Name)
	}
	if len(o.Data) == 0 || string(o.Data) == "null" {
		return o, fmt.Errorf("%s object has no nova_object.data", want)
	}
	return o, nil
}

// blob trims a nullable column; "" and "null" mean no value.
func blob(s *string) []byte {
	if s == nil {
		return nil
	}
	b := bytes.TrimSpace([]byte(*s))
	if len(b) == 0 || string(b) == "null" {
		return nil
	}
	return b
}

// ParsePCIStats reads compute_nodes.pci_stats: NULL, a PciDevicePoolList
// primitive (Liberty+), or the legacy list of pool dicts or single dict in
// which vendor_id, product_id, numa_node and count are the pool's own keys
// and every other key is a tag (nova.objects.pci_device_pool.from_pci_stats).
func ParsePCIStats(s *string) ([]PCIPool, error) {
	raw := blob(s)
	if raw == nil {
		return nil, nil
	}
	pools, err := parsePCI(raw)
	if err != nil {
		return nil, fmt.Errorf("pci_stats: %w", err)
	}
	for i, p := range pools {
		if p.Count < 0 {
			return nil, fmt.Errorf("pci_stats: pool %d (%s:%s) has a negative count %d", i, p.VendorID, p.ProductID, p.Count)
		}
	}
	return pools, nil
}

func parsePCI(raw []byte) ([]PCIPool, error) {
	if isOVO(raw) {
		if pools, ok := fastPCI(raw); ok {
			return pools, nil
		}
	}
	return parsePCIGeneral(raw)
}

func parsePCIGeneral(raw []byte) ([]PCIPool, error) {
	if isOVO(raw) {
		o, err := decodeOVO(raw, "PciDevicePoolList")
		if err != nil {
			return nil, err
		}
		var d struct {
			Objects []json.RawMessage `json:"objects"`
		}
		if err := json.Unmarshal(o.Data, &d); err != nil {
			return nil, err
		}
		var out []PCIPool
		for i, r := range d.Objects {
			po, err := decodeOVO(r, "PciDevicePool")
			if err != nil {
				return nil, fmt.Errorf("pool %d: %w", i, err)
			}
			var pd struct {
				VendorID  string             `json:"vendor_id"`
				ProductID string             `json:"product_id"`
				NUMANode  *int64             `json:"numa_node"`
				Count     *int64             `json:"count"`
				Tags      map[string]*string `json:"tags"`
			}
			if err := json.Unmarshal(po.Data, &pd); err != nil {
				return nil, fmt.Errorf("pool %d: %w", i, err)
			}
			if pd.Count == nil {
				return nil, fmt.Errorf("pool %d has no count", i)
			}
			p := PCIPool{VendorID: pd.VendorID, ProductID: pd.ProductID, NUMANode: pd.NUMANode, Count: *pd.Count, Tags: map[string]string{}}
			for k, v := range pd.Tags {
				if v != nil {
					p.Tags[k] = *v
				}
			}
			out = append(out, p)
		}
		return out, nil
	}
	switch raw[0] {
	case '[':
		var list []map[string]json.RawMessage
		if err := json.Unmarshal(raw, &list); err != nil {
			return nil, err
		}
		var out []PCIPool
		for i, d := range list {
			p, err := legacyPool(d)
			if err != nil {
				return nil, fmt.Errorf("pool %d: %w", i, err)
			}
			out = append(out, p)
		}
		return out, nil
	case '{':
		var d map[string]json.RawMessage
		if err := json.Unmarshal(raw, &d); err != nil {
			return nil, err
		}
		p, err := legacyPool(d)
		if err != nil {
			return nil, err
		}
		return []PCIPool{p}, nil
	}
	return nil, fmt.Errorf("unknown format (neither a PciDevicePoolList nor a legacy pool list or dict): %.40q", raw)
}

func legacyPool(d map[string]json.RawMessage) (PCIPool, error) {
	p := PCIPool{Tags: map[string]string{}}
	cnt, ok := d["count"]
	if !ok {
		return p, errors.New("legacy pool has no count")
	}
	n, err := jsonInt(cnt)
	if err != nil {
		return p, fmt.Errorf("count: %w", err)
	}
	p.Count = n
	for k, v := range d {
		switch k {
		case "count":
		case "vendor_id":
			p.VendorID = jsonText(v)
		case "product_id":
			p.ProductID = jsonText(v)
		case "numa_node":
			if string(v) != "null" {
				n, err := jsonInt(v)
				if err != nil {
					return p, fmt.Errorf("numa_node: %w", err)
				}
				p.NUMANode = &n
			}
		default:
			p.Tags[k] = jsonText(v)
		}
	}
	return p, nil
}

// jsonInt reads an integer that may have been stored as a number or a string.
func jsonInt(v json.RawMessage) (int64, error) {
	var n json.Number
	if err := json.Unmarshal(v, &n); err != nil {
		var s string
		if err2 := json.Unmarshal(v, &s); err2 != nil {
			return 0, fmt.Errorf("not an integer: %s", v)
		}
		n = json.Number(s)
	}
	i, err := strconv.ParseInt(string(n), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("not an integer: %s", v)
	}
	return i, nil
}

func jsonText(v json.RawMessage) string {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s
	}
	return string(v)
}

// NUMACell is one host NUMA cell, reduced to what Placement inventories
// need.
type NUMACell struct {
	ID int64
	// CPUs usable by shared (VCPU) guests and dedicated (PCPU) ones; a
	// legacy or pre-Train cell has only CPUs.
	CPUs, PCPUs []int64
	// Cores is the number of sibling sets (physical cores); 0 when the
	// format does not say, and then each thread counts as a core.
	Cores    int64
	Socket   *int64
	MemoryMB int64
}

// Threads is the number of host CPUs of the cell, shared and dedicated.
func (c NUMACell) Threads() int64 {
	// A bit per CPU id on the stack: no map to build for each of 100,000
	// nodes' cells; larger ids (none on real hosts) take the map.
	var bits [64]uint64
	n := int64(0)
	small := true
	for _, l := range [2][]int64{c.CPUs, c.PCPUs} {
		for _, x := range l {
			if x < 0 || x >= 64*64 {
				small = false
				break
			}
			if bits[x/64]&(1<<(x%64)) == 0 {
				bits[x/64] |= 1 << (x % 64)
				n++
			}
		}
	}
	if small {
		return n
	}
	seen := map[int64]bool{}
	for _, x := range c.CPUs {
		seen[x] = true
	}
	for _, x := range c.PCPUs {
		seen[x] = true
	}
	return int64(len(seen))
}

// CoreCount is the number of physical cores, threads when unknown.
func (c NUMACell) CoreCount() int64 {
	if c.Cores > 0 {
		return c.Cores
	}
	return c.Threads()
}

// ParseNUMATopology reads compute_nodes.numa_topology: NULL, a NUMATopology
// primitive with NUMACell 1.0-1.5 cells, or the pre-Liberty
// {"cells": [{"id", "cpus": "0-3", "mem": {"total": MiB}}]}.
func ParseNUMATopology(s *string) ([]NUMACell, error) {
	raw := blob(s)
	if raw == nil {
		return nil, nil
	}
	cells, err := parseNUMA(raw)
	if err != nil {
		return nil, fmt.Errorf("numa_topology: %w", err)
	}
	ids := map[int64]bool{}
	for _, c := range cells {
		if ids[c.ID] {
			return nil, fmt.Errorf("numa_topology: cell id %d appears twice", c.ID)
		}
		ids[c.ID] = true
		if c.MemoryMB < 0 {
			return nil, fmt.Errorf("numa_topology: cell %d has negative memory %d", c.ID, c.MemoryMB)
		}
	}
	sort.Slice(cells, func(i, j int) bool { return cells[i].ID < cells[j].ID })
	return cells, nil
}

type numaCellData struct {
	ID       *int64    `json:"id"`
	CPUSet   []int64   `json:"cpuset"`
	PCPUSet  []int64   `json:"pcpuset"`
	Memory   *int64    `json:"memory"`
	Siblings [][]int64 `json:"siblings"`
	Socket   *int64    `json:"socket"`
}

func (cd *numaCellData) cell() NUMACell {
	c := NUMACell{ID: *cd.ID, CPUs: cd.CPUSet, PCPUs: cd.PCPUSet, MemoryMB: *cd.Memory, Socket: cd.Socket}
	for _, sib := range cd.Siblings {
		if len(sib) > 0 {
			c.Cores++
		}
	}
	return c
}

func parseNUMA(raw []byte) ([]NUMACell, error) {
	if isOVO(raw) {
		if cells, ok := fastNUMA(raw); ok {
			return cells, nil
		}
	}
	return parseNUMAGeneral(raw)
}

func parseNUMAGeneral(raw []byte) ([]NUMACell, error) {
	if isOVO(raw) {
		o, err := decodeOVO(raw, "NUMATopology")
		if err != nil {
			return nil, err
		}
		var d struct {
			Cells []json.RawMessage `json:"cells"`
		}
		if err := json.Unmarshal(o.Data, &d); err != nil {
			return nil, err
		}
		var out []NUMACell
		for i, r := range d.Cells {
			co, err := decodeOVO(r, "NUMACell")
			if err != nil {
				return nil, fmt.Errorf("cell %d: %w", i, err)
			}
			var cd numaCellData
			if err := json.Unmarshal(co.Data, &cd); err != nil {
				return nil, fmt.Errorf("cell %d: %w", i, err)
			}
			if cd.ID == nil || cd.Memory == nil {
				return nil, fmt.Errorf("cell %d: NUMACell %s without id or memory", i, co.Version)
			}
			out = append(out, cd.cell())
		}
		return out, nil
	}
	var legacy struct {
		Cells *[]struct {
			ID   *int64 `json:"id"`
			CPUs string `json:"cpus"`
			Mem  *struct {
				Total int64 `json:"total"`
			} `json:"mem"`
		} `json:"cells"`
	}
	if err := json.Unmarshal(raw, &legacy); err != nil {
		return nil, err
	}
	if legacy.Cells == nil {
		return nil, fmt.Errorf("unknown format (neither a NUMATopology nor the legacy {\"cells\": [...]}): %.40q", raw)
	}
	var out []NUMACell
	for i, lc := range *legacy.Cells {
		if lc.ID == nil || lc.Mem == nil {
			return nil, fmt.Errorf("legacy cell %d without id or mem", i)
		}
		cpus, err := ParseCPUSpec(lc.CPUs)
		if err != nil {
			return nil, fmt.Errorf("legacy cell %d: cpus: %w", i, err)
		}
		out = append(out, NUMACell{ID: *lc.ID, CPUs: cpus, MemoryMB: lc.Mem.Total})
	}
	return out, nil
}

// maxCPUSpecIDs bounds the ids one CPU list may name in all (ranges
// counted whole), so that a corrupt blob repeating "0-65536" cannot keep
// the parser busy for minutes; real hosts have a few thousand CPUs.
const maxCPUSpecIDs = 1 << 17

// ParseCPUSpec reads a CPU list such as "0-3,8-11,^2" the way Nova's
// parse_cpu_spec does (ranges, single ids, ^exclusions).
func ParseCPUSpec(spec string) ([]int64, error) {
	in, ex := map[int64]bool{}, map[int64]bool{}
	named := int64(0)
	for _, part := range strings.Split(spec, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		dst := in
		if strings.HasPrefix(part, "^") {
			dst, part = ex, part[1:]
		}
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.ParseInt(strings.TrimSpace(lo), 10, 64)
		if err != nil || a < 0 {
			return nil, fmt.Errorf("invalid CPU id %q", part)
		}
		b := a
		if isRange {
			if b, err = strconv.ParseInt(strings.TrimSpace(hi), 10, 64); err != nil || b < a {
				return nil, fmt.Errorf("invalid CPU range %q", part)
			}
		}
		if b-a > 65536 {
			return nil, fmt.Errorf("CPU range %q too large", part)
		}
		if named += b - a + 1; named > maxCPUSpecIDs {
			return nil, fmt.Errorf("CPU list names more than %d CPUs", maxCPUSpecIDs)
		}
		for x := a; x <= b; x++ {
			dst[x] = true
		}
	}
	var out []int64
	for x := range in {
		if !ex[x] {
			out = append(out, x)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out, nil
}

// ParseExtraResources reads compute_nodes.extra_resources, a JSON object of
// resource name to integer total (NULL and {} mean none).
func ParseExtraResources(s *string) (map[string]int64, error) {
	raw := blob(s)
	if raw == nil {
		return nil, nil
	}
	var d map[string]json.RawMessage
	if err := json.Unmarshal(raw, &d); err != nil {
		return nil, fmt.Errorf("extra_resources: not a JSON object of name to total: %v", err)
	}
	out := map[string]int64{}
	for _, k := range slices.Sorted(maps.Keys(d)) {
		n, err := jsonInt(d[k])
		if err != nil {
			return nil, fmt.Errorf("extra_resources: %q: %v", k, err)
		}
		if n < 0 {
			return nil, fmt.Errorf("extra_resources: %q has a negative total %d", k, n)
		}
		out[k] = n
	}
	return out, nil
}
