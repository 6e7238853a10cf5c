package difftest

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/rpctl/rpctl/internal/testdb"
	"github.com/rpctl/rpctl/inventory"
)

// inv is one inventory as PUT /resource_providers/{uuid}/inventories takes it.
type inv = inventory.Inventory

type provider struct {
	name, uuid, parent string
	invs               map[string]inv
	traits             []string
	aggs               []string
	sharing            bool
	// written, when set, is what the inventories were before they were
	// pushed over capacity after the allocations; invs is what they are.
	written map[string]inv
}

// cloud is a random Placement deployment and what a query generator needs to
// know about it.
type cloud struct {
	rng       *rand.Rand
	providers []*provider
	aggs      []string
	allocs    []map[string]map[string]int64 // consumer -> provider uuid -> class -> amount
	used      map[string]int64              // "uuid/class" -> sum of allocs
	uuidN     int
}

// The vocabulary of the random clouds and queries.
var (
	hostTraits = []string{"HW_CPU_X86_AVX2", "HW_CPU_X86_SSE2", "STORAGE_DISK_SSD", "COMPUTE_VOLUME_MULTI_ATTACH", "CUSTOM_RACK_A", "CUSTOM_RACK_B"}
	pfTraits   = []string{"CUSTOM_PHYSNET_A", "CUSTOM_PHYSNET_B", "HW_NIC_SRIOV"}
	gpuTraits  = []string{"CUSTOM_GPU_X", "CUSTOM_GPU_Y"}
	numaTraits = []string{"HW_NUMA_ROOT", "CUSTOM_NUMA_FAST"}
	nicTraits  = []string{"CUSTOM_HW_NIC_ROOT", "CUSTOM_VNIC_TYPE_DIRECT"}
	allTraits  = append(append(append(append(append([]string{}, hostTraits...), pfTraits...), gpuTraits...), numaTraits...), nicTraits...)
	// Ratios 0.7, 1.1, 1.3, 2.2 and 3.3 are not exact in MySQL's 4-byte
	// FLOAT: Placement's SQL filter and its Python capacity then disagree
	// at the boundary (see the candidates package doc). 0.3333333 and
	// 1.2345649 have more digits than MariaDB prints ("0.333333",
	// "1.23456"), which makes Python's capacity the smaller one.
	ratios = []float64{1.0, 1.0, 1.5, 2.0, 4.0, 16.0, 0.5, 0.7, 1.1, 1.3, 2.2, 3.3, 0.3333333, 1.2345649}
	// inexactRatios are those a FLOAT does not hold exactly; "pushed over
	// capacity" lowers a ratio to half of one.
	inexactRatios = []float64{0.7, 1.1, 1.3, 2.2, 3.3, 0.3333333, 1.2345649}
)

func (c *cloud) newUUID(kind int) string {
	c.uuidN++
	return fmt.Sprintf("%08x-%04x-4%03x-8000-%012x", kind, c.uuidN, c.rng.IntN(4096), c.rng.Int64N(1<<40))
}

func (c *cloud) pick(list []string, maxN int) []string {
	n := c.rng.IntN(maxN + 1)
	perm := c.rng.Perm(len(list))
	var out []string
	for _, i := range perm[:min(n, len(list))] {
		out = append(out, list[i])
	}
	return out
}

func (c *cloud) add(name, parent string, invs map[string]inv, traits, aggs []string) *provider {
	p := &provider{name: name, uuid: c.newUUID(1), invs: invs, traits: traits, aggs: aggs}
	if parent != "" {
		for _, q := range c.providers {
			if q.name == parent {
				p.parent = q.uuid
			}
		}
	}
	c.providers = append(c.providers, p)
	return p
}

// mk returns an inventory with random but valid constraints: a fancy one may
// have a ratio a FLOAT cannot hold, reserved up to all of total, a max_unit
// below total, and min_unit/step_size other than 1.
func (c *cloud) mk(total int64, fancy bool) inv {
	iv := inv{Total: total, MinUnit: 1, MaxUnit: total, StepSize: 1, AllocationRatio: 1.0}
	if !fancy {
		return iv
	}
	r := c.rng
	iv.AllocationRatio = ratios[r.IntN(len(ratios))]
	switch r.IntN(8) {
	case 0, 1:
		iv.Reserved = r.Int64N(total/4 + 1)
	case 2:
		// Near or equal to total (capacity 0 is valid from 1.26).
		iv.Reserved = max(0, total-r.Int64N(3))
	}
	if slices.Contains(inexactRatios, iv.AllocationRatio) && r.IntN(2) == 0 {
		// total - reserved a multiple of 30 makes (total - reserved) *
		// ratio a whole number in decimal but not in FLOAT, where
		// Placement's SQL filter and Python capacity disagree by one.
		d := (iv.Total - iv.Reserved + 29) / 30 * 30
		iv.Total = iv.Reserved + d
		iv.MaxUnit = iv.Total
	}
	if r.IntN(5) == 0 {
		iv.MaxUnit = max(1, total/2)
	}
	if total >= 4 {
		switch r.IntN(6) {
		case 0:
			iv.StepSize = 2
			iv.MinUnit = 2
		case 1:
			iv.MinUnit = min(3, iv.MaxUnit)
		case 2:
			iv.StepSize = 3
			iv.MinUnit = 3
		}
		if iv.MaxUnit < iv.MinUnit {
			iv.MaxUnit = iv.MinUnit
		}
	}
	return iv
}

func (c *cloud) mem(total int64) inv {
	iv := c.mk(total, true)
	iv.MinUnit, iv.StepSize = 1, 1
	switch c.rng.IntN(3) {
	case 0:
		iv.MinUnit, iv.StepSize = 256, 256
	case 1:
		iv.MinUnit = 512
	}
	iv.MaxUnit = max(iv.MaxUnit, iv.MinUnit)
	if iv.Reserved < total-2 {
		iv.Reserved = 512 * c.rng.Int64N(2)
	}
	return iv
}

// capacity is Placement's int((total - reserved) * ratio) with the ratio as
// its Python code reads it from MariaDB (six significant digits).
func capacity(iv inv) int64 {
	return int64(float64(iv.Total-iv.Reserved) * mariadbText(iv.AllocationRatio))
}

// newCloud draws a deployment with every shape the issue names: flat compute
// nodes in up to three aggregates, NUMA trees with PF grandchildren, deep
// trees (compute → NUMA → resourceless NIC with traits → PF → VF group),
// sharing storage (in an aggregate, in none, and as a child of a compute
// node), GPU hosts, traits, aggregates (also on roots of trees, spanning
// them) and existing allocations: some inventories filled to capacity, some
// then pushed over it (reserved raised, ratio lowered).
func newCloud(seed uint64) *cloud {
	c := &cloud{rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), used: map[string]int64{}}
	for range 4 {
		c.aggs = append(c.aggs, c.newUUID(9))
	}
	r := c.rng
	nFlat, nNUMA, nDeep, nGPU, nShare := 2+r.IntN(3), 1+r.IntN(2), 1+r.IntN(2), r.IntN(2), 1+r.IntN(2)
	for i := range nFlat {
		invs := map[string]inv{"VCPU": c.mk(int64(4+r.IntN(28)), true), "MEMORY_MB": c.mem(int64(2048 * (1 + r.IntN(8))))}
		if r.IntN(3) > 0 {
			invs["DISK_GB"] = c.mk(int64(50+r.IntN(500)), true)
		}
		if r.IntN(6) == 0 {
			invs["CUSTOM_MAGIC"] = c.mk(int64(1+r.IntN(4)), false)
		}
		c.add(fmt.Sprintf("flat%d", i), "", invs, c.pick(hostTraits, 3), c.pick(c.aggs, 3))
	}
	for i := range nNUMA {
		cn := fmt.Sprintf("numa%d", i)
		invs := map[string]inv{}
		if r.IntN(3) > 0 {
			invs["DISK_GB"] = c.mk(int64(100+r.IntN(400)), true)
		}
		if r.IntN(4) == 0 {
			invs["VCPU"] = c.mk(int64(2+r.IntN(4)), false)
		}
		c.add(cn, "", invs, c.pick(hostTraits, 3), c.pick(c.aggs, 2))
		for k := range 1 + r.IntN(2) {
			nn := fmt.Sprintf("%s-n%d", cn, k)
			c.add(nn, cn, map[string]inv{"VCPU": c.mk(int64(2+r.IntN(14)), true), "MEMORY_MB": c.mem(int64(1024 * (1 + r.IntN(8))))},
				append([]string{"HW_NUMA_ROOT"}, c.pick(numaTraits[1:], 1)...), c.pick(c.aggs, 1))
			for j := range r.IntN(3) {
				pinv := map[string]inv{"SRIOV_NET_VF": c.mk(int64(1+r.IntN(8)), r.IntN(2) == 0)}
				if r.IntN(2) == 0 {
					pinv["NET_BW_EGR_KILOBIT_PER_SEC"] = c.mk(int64(1000*(1+r.IntN(10))), false)
				}
				c.add(fmt.Sprintf("%s-pf%d", nn, j), nn, pinv, c.pick(pfTraits, 2), nil)
			}
		}
	}
	for i := range nDeep {
		cn := fmt.Sprintf("deep%d", i)
		c.add(cn, "", map[string]inv{"DISK_GB": c.mk(int64(100+r.IntN(400)), true)}, c.pick(hostTraits, 2), c.pick(c.aggs, 2))
		if r.IntN(2) == 0 {
			// A sharing provider that is itself a child.
			p := c.add(cn+"-disk", cn, map[string]inv{"DISK_GB": c.mk(int64(200+r.IntN(800)), true)},
				[]string{"MISC_SHARES_VIA_AGGREGATE"}, c.pick(c.aggs, 2))
			p.sharing = true
		}
		for k := range 1 + r.IntN(2) {
			nn := fmt.Sprintf("%s-n%d", cn, k)
			c.add(nn, cn, map[string]inv{"VCPU": c.mk(int64(2+r.IntN(14)), true), "MEMORY_MB": c.mem(int64(1024 * (1 + r.IntN(4))))},
				append([]string{"HW_NUMA_ROOT"}, c.pick(numaTraits[1:], 1)...), nil)
			// Resourceless intermediate provider carrying traits.
			nic := fmt.Sprintf("%s-nic", nn)
			c.add(nic, nn, nil, c.pick(nicTraits, 2), c.pick(c.aggs, 1))
			for j := range 1 + r.IntN(2) {
				pf := fmt.Sprintf("%s-pf%d", nic, j)
				pinv := map[string]inv{"SRIOV_NET_VF": c.mk(int64(2+r.IntN(14)), true)}
				if r.IntN(2) == 0 {
					pinv["NET_BW_EGR_KILOBIT_PER_SEC"] = c.mk(int64(1000*(1+r.IntN(10))), true)
				}
				c.add(pf, nic, pinv, c.pick(pfTraits, 2), nil)
				for v := range r.IntN(3) {
					c.add(fmt.Sprintf("%s-vfg%d", pf, v), pf, map[string]inv{"CUSTOM_VF_QUEUE": c.mk(int64(4+r.IntN(28)), true)},
						c.pick(pfTraits[:2], 1), nil)
				}
			}
		}
	}
	for i := range nGPU {
		g := fmt.Sprintf("gpu%d", i)
		c.add(g, "", map[string]inv{"VCPU": c.mk(int64(8+r.IntN(24)), true), "MEMORY_MB": c.mem(8192), "DISK_GB": c.mk(200, false)},
			c.pick(hostTraits, 2), c.pick(c.aggs, 2))
		for k := range 1 + r.IntN(3) {
			ginv := map[string]inv{"VGPU": c.mk(int64(1+r.IntN(8)), r.IntN(2) == 0)}
			if r.IntN(3) == 0 {
				ginv["CUSTOM_MAGIC"] = c.mk(2, false)
			}
			c.add(fmt.Sprintf("%s-g%d", g, k), g, ginv, c.pick(gpuTraits, 1), nil)
		}
	}
	for i := range nShare {
		invs := map[string]inv{"DISK_GB": c.mk(int64(500+r.IntN(2000)), true)}
		if r.IntN(2) == 0 {
			invs["IPV4_ADDRESS"] = c.mk(int64(4+r.IntN(8)), false)
		}
		// The last one, sometimes, in no aggregate at all.
		aggs := []string{c.aggs[r.IntN(len(c.aggs))]}
		if i == nShare-1 && r.IntN(2) == 0 {
			aggs = nil
		} else if r.IntN(3) == 0 {
			aggs = c.pick(c.aggs, 3)
		}
		p := c.add(fmt.Sprintf("share%d", i), "", invs, append([]string{"MISC_SHARES_VIA_AGGREGATE"}, c.pick([]string{"STORAGE_DISK_SSD"}, 1)...), aggs)
		p.sharing = true
	}
	c.allocate()
	return c
}

// allocate draws the existing allocations: some consumers take up to half
// of what is still free of random inventories; then some inventories are
// filled to exactly their capacity (in max_unit-sized consumers), and some
// of those pushed over it afterwards by raising reserved or lowering the
// ratio (Placement allows that; it only logs a warning).
func (c *cloud) allocate() {
	r := c.rng
	classes := func(p *provider) []string {
		// Sorted, so that a seed always draws the same cloud.
		rcs := make([]string, 0, len(p.invs))
		for rc := range p.invs {
			rcs = append(rcs, rc)
		}
		slices.Sort(rcs)
		return rcs
	}
	for range 3 + r.IntN(5) {
		a := map[string]map[string]int64{}
		for range 1 + r.IntN(3) {
			p := c.providers[r.IntN(len(c.providers))]
			if a[p.uuid] != nil {
				continue
			}
			for _, rc := range classes(p) {
				iv := p.invs[rc]
				if r.IntN(2) == 0 {
					continue
				}
				key := p.uuid + "/" + rc
				free := (capacity(iv) - c.used[key]) / 2
				amt := min(iv.MaxUnit, free)
				amt -= amt % iv.StepSize
				if amt < iv.MinUnit {
					continue
				}
				amt = iv.MinUnit + iv.StepSize*r.Int64N((amt-iv.MinUnit)/iv.StepSize+1)
				amt -= amt % iv.StepSize
				if amt < iv.MinUnit {
					continue
				}
				if a[p.uuid] == nil {
					a[p.uuid] = map[string]int64{}
				}
				a[p.uuid][rc] = amt
				c.used[key] += amt
			}
		}
		if len(a) > 0 {
			c.allocs = append(c.allocs, a)
		}
	}
	// Fill some inventories to the brim.
	for _, p := range c.providers {
		for _, rc := range classes(p) {
			if r.IntN(6) != 0 {
				continue
			}
			iv := p.invs[rc]
			key := p.uuid + "/" + rc
			for range 4 {
				amt := min(iv.MaxUnit, capacity(iv)-c.used[key])
				amt -= amt % iv.StepSize
				if amt < iv.MinUnit {
					break
				}
				c.allocs = append(c.allocs, map[string]map[string]int64{p.uuid: {rc: amt}})
				c.used[key] += amt
			}
			if c.used[key] > 0 && r.IntN(2) == 0 {
				// Push over capacity.
				if r.IntN(2) == 0 && iv.Reserved < iv.Total {
					iv.Reserved = min(iv.Total, iv.Reserved+1+r.Int64N(3))
				} else {
					lower := inexactRatios[r.IntN(len(inexactRatios))] / 2
					iv.AllocationRatio = min(iv.AllocationRatio, lower)
				}
				if p.written == nil {
					p.written = maps.Clone(p.invs)
				}
				p.invs[rc] = iv
			}
		}
	}
}

// write creates the cloud through the real placement-api's REST API, as
// nova-compute and neutron would.
func (c *cloud) write(t *testing.T, base string) {
	t.Helper()
	do := func(method, path, mv string, body any, want ...int) map[string]any {
		t.Helper()
		b := ""
		if body != nil {
			raw, err := json.Marshal(body)
			if err != nil {
				t.Fatal(err)
			}
			b = string(raw)
		}
		status, resp := testdb.PlacementDo(t, method, base, path, mv, b)
		ok := false
		for _, w := range want {
			ok = ok || status == w
		}
		if !ok {
			t.Fatalf("%s %s: %d %s\nbody %s", method, path, status, resp, b)
		}
		var out map[string]any
		_ = json.Unmarshal(resp, &out)
		return out
	}
	made := map[string]bool{}
	for _, p := range c.providers {
		body := map[string]any{"name": p.name, "uuid": p.uuid}
		if p.parent != "" {
			body["parent_provider_uuid"] = p.parent
		}
		do("POST", "/resource_providers", "1.39", body, 200)
		gen := 0.0
		if len(p.invs) > 0 {
			for rc := range p.invs {
				if len(rc) > 7 && rc[:7] == "CUSTOM_" && !made[rc] {
					do("PUT", "/resource_classes/"+rc, "1.7", nil, 201, 204)
					made[rc] = true
				}
			}
			invs := p.invs
			if p.written != nil {
				invs = p.written
			}
			out := do("PUT", "/resource_providers/"+p.uuid+"/inventories", "1.39",
				map[string]any{"resource_provider_generation": gen, "inventories": invs}, 200)
			gen = out["resource_provider_generation"].(float64)
		}
		if len(p.traits) > 0 {
			for _, tr := range p.traits {
				if len(tr) > 7 && tr[:7] == "CUSTOM_" && !made[tr] {
					do("PUT", "/traits/"+tr, "1.39", nil, 201, 204)
					made[tr] = true
				}
			}
			out := do("PUT", "/resource_providers/"+p.uuid+"/traits", "1.39",
				map[string]any{"resource_provider_generation": gen, "traits": p.traits}, 200)
			gen = out["resource_provider_generation"].(float64)
		}
		if len(p.aggs) > 0 {
			do("PUT", "/resource_providers/"+p.uuid+"/aggregates", "1.39",
				map[string]any{"resource_provider_generation": gen, "aggregates": p.aggs}, 200)
		}
	}
	for i, a := range c.allocs {
		allocs := map[string]any{}
		for u, res := range a {
			allocs[u] = map[string]any{"resources": res}
		}
		do("PUT", fmt.Sprintf("/allocations/%s", c.newUUID(7)), "1.28", map[string]any{
			"allocations": allocs, "project_id": fmt.Sprintf("project-%d", i%2), "user_id": "user",
			"consumer_generation": nil}, 204)
	}
	for _, p := range c.providers {
		if p.written == nil {
			continue
		}
		rp := do("GET", "/resource_providers/"+p.uuid, "1.39", nil, 200)
		do("PUT", "/resource_providers/"+p.uuid+"/inventories", "1.39",
			map[string]any{"resource_provider_generation": rp["generation"], "inventories": p.invs}, 200)
	}
}
