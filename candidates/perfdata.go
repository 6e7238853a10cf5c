package candidates

import "fmt"

// Synthetic clouds for benchmarks. They are plain ModelInputs so that a
// benchmark driver can also write the very same providers into a real
// Placement (rows map 1:1 onto POST /resource_providers, PUT inventories,
// traits and aggregates) and time both side by side.

// PerfloadAggregateA is the aggregate every placement-perfload provider is in.
const PerfloadAggregateA = "14a5c8a3-5a99-4e8f-88be-00d85fcb1c17"

// Aggregates B and C of placement-perfload (placeload generates random ones;
// fixed here for reproducibility).
const (
	PerfloadAggregateB = "14a5c8a3-5a99-4e8f-88be-00d85fcb1c18"
	PerfloadAggregateC = "14a5c8a3-5a99-4e8f-88be-00d85fcb1c19"
)

// PerfloadQuery is the query string the placement-perfload job times.
const PerfloadQuery = "resources=VCPU:1,DISK_GB:10,MEMORY_MB:256&member_of=" +
	PerfloadAggregateA + "&required=HW_CPU_X86_AVX2"

// NestedPerfloadQuery is the query string placement-nested-perfload times.
const NestedPerfloadQuery = "resources=DISK_GB:10&required=COMPUTE_VOLUME_MULTI_ATTACH" +
	"&resources_COMPUTE=VCPU:1,MEMORY_MB:256&required_COMPUTE=CUSTOM_FOO" +
	"&resources_FPGA=FPGA:1&group_policy=none&same_subtree=_COMPUTE,_FPGA"

// apiMaxUnit is the REST API's max_unit default (INVENTORY_DEFAULTS).
const apiMaxUnit = 2147483647

// SyntheticUUID is the deterministic provider UUID of the synthetic clouds.
func SyntheticUUID(kind, i int) string {
	return fmt.Sprintf("%08x-0000-4000-8000-%012x", kind, i)
}

type inputBuilder struct {
	in     *ModelInput
	traits map[string]int64
	aggs   map[string]int64
	rcs    map[string]int64
}

func newInputBuilder() *inputBuilder {
	b := &inputBuilder{in: &ModelInput{}, traits: map[string]int64{}, aggs: map[string]int64{}, rcs: map[string]int64{}}
	for i, n := range StandardResourceClasses() {
		b.rcs[n] = int64(i)
	}
	for _, t := range StandardTraits() {
		b.trait(t)
	}
	return b
}

// intern returns name's id in ids, else gives it the id first + len(*rows)
// and appends its row.
func intern(ids map[string]int64, rows *[]NamedRow, first int64, name string) int64 {
	if id, ok := ids[name]; ok {
		return id
	}
	id := first + int64(len(*rows))
	ids[name] = id
	*rows = append(*rows, NamedRow{ID: id, Name: name})
	return id
}

func (b *inputBuilder) trait(n string) int64 { return intern(b.traits, &b.in.Traits, 1, n) }

func (b *inputBuilder) agg(u string) int64 { return intern(b.aggs, &b.in.Aggregates, 1, u) }

func (b *inputBuilder) rc(n string) int64 {
	return intern(b.rcs, &b.in.ResourceClasses, FirstCustomResourceClassID, n)
}

func (b *inputBuilder) provider(uuid, name string, parent int64) int64 {
	id := int64(len(b.in.Providers) + 1)
	b.in.Providers = append(b.in.Providers, ProviderRow{ID: id, UUID: uuid, Name: name, Generation: 1, ParentID: parent})
	return id
}

// inv adds an inventory; zero min/max/step take the API defaults.
func (b *inputBuilder) inv(p int64, rc string, total, reserved, minU, maxU, step int64) {
	if minU == 0 {
		minU = 1
	}
	if maxU == 0 {
		maxU = apiMaxUnit
	}
	if step == 0 {
		step = 1
	}
	b.in.Inventories = append(b.in.Inventories, InventoryRow{ProviderID: p, ResourceClassID: b.rc(rc),
		Total: total, Reserved: reserved, MinUnit: minU, MaxUnit: maxU, StepSize: step, AllocationRatio: 1.0})
}

func (b *inputBuilder) traitsOf(p int64, ts ...string) {
	for _, t := range ts {
		b.in.ProviderTraits = append(b.in.ProviderTraits, LinkRow{ProviderID: p, OtherID: b.trait(t)})
	}
}

func (b *inputBuilder) aggsOf(p int64, us ...string) {
	for _, u := range us {
		b.in.ProviderAggregates = append(b.in.ProviderAggregates, LinkRow{ProviderID: p, OtherID: b.agg(u)})
	}
}

// PerfloadInput is the placement-perfload data set (placeload 0.3.0): n root
// providers with MEMORY_MB, DISK_GB and VCPU, aggregates cycling [A], [A,B],
// [A,B,C] and traits cycling [AVX2], [AVX2,SSE2], [AVX2,SSE2,SSD].
func PerfloadInput(n int) *ModelInput {
	b := newInputBuilder()
	aggs := [][]string{{PerfloadAggregateA}, {PerfloadAggregateA, PerfloadAggregateB},
		{PerfloadAggregateA, PerfloadAggregateB, PerfloadAggregateC}}
	traits := [][]string{{"HW_CPU_X86_AVX2"}, {"HW_CPU_X86_AVX2", "HW_CPU_X86_SSE2"},
		{"HW_CPU_X86_AVX2", "HW_CPU_X86_SSE2", "STORAGE_DISK_SSD"}}
	for i := 0; i < n; i++ {
		p := b.provider(SyntheticUUID(1, i), fmt.Sprintf("perfload-%d", i), 0)
		b.inv(p, "MEMORY_MB", 8192, 0, 128, 8192, 0)
		b.inv(p, "DISK_GB", 8192, 0, 5, 8192, 0)
		b.inv(p, "VCPU", 32, 0, 1, 16, 0)
		b.aggsOf(p, aggs[i%3]...)
		b.traitsOf(p, traits[i%3]...)
	}
	return b.in
}

// PerfloadRequest is PerfloadQuery, parsed, at microversion 1.39.
func PerfloadRequest() *Request {
	return &Request{Microversion: MaxMicroversion, Groups: []RequestGroup{{
		Resources:      map[string]int64{"VCPU": 1, "DISK_GB": 10, "MEMORY_MB": 256},
		MemberOf:       [][]string{{PerfloadAggregateA}},
		RequiredTraits: [][]string{{"HW_CPU_X86_AVX2"}},
	}}}
}

// NestedPerfloadInput is the placement-nested-perfload data set: n trees of
// 7 providers (compute node, two NUMA nodes, FPGAs and a pGPU).
func NestedPerfloadInput(n int) *ModelInput {
	b := newInputBuilder()
	for i := 0; i < n; i++ {
		u := func(k int) string { return SyntheticUUID(2, i*8+k) }
		cn := b.provider(u(0), fmt.Sprintf("cn%d", i), 0)
		b.inv(cn, "DISK_GB", 20480, 0, 0, 0, 0)
		b.traitsOf(cn, "COMPUTE_VOLUME_MULTI_ATTACH")
		numa0 := b.provider(u(1), fmt.Sprintf("cn%d-numa0", i), cn)
		b.traitsOf(numa0, "HW_NUMA_ROOT")
		b.inv(numa0, "VCPU", 4, 2, 0, 0, 0)
		b.inv(numa0, "MEMORY_MB", 2048, 0, 512, 0, 256)
		fpga0 := b.provider(u(2), fmt.Sprintf("cn%d-fpga0", i), numa0)
		b.inv(fpga0, "FPGA", 1, 0, 0, 0, 0)
		pgpu0 := b.provider(u(3), fmt.Sprintf("cn%d-pgpu0", i), numa0)
		b.inv(pgpu0, "VGPU", 8, 0, 0, 0, 0)
		numa1 := b.provider(u(4), fmt.Sprintf("cn%d-numa1", i), cn)
		b.traitsOf(numa1, "HW_NUMA_ROOT", "CUSTOM_FOO")
		b.inv(numa1, "VCPU", 4, 0, 0, 0, 0)
		b.inv(numa1, "MEMORY_MB", 2048, 0, 256, 1024, 0)
		for k := 0; k < 2; k++ {
			f := b.provider(u(5+k), fmt.Sprintf("cn%d-fpga1_%d", i, k), numa1)
			b.inv(f, "FPGA", 1, 0, 0, 0, 0)
		}
	}
	return b.in
}

// NestedPerfloadRequest is NestedPerfloadQuery, parsed, at 1.39.
func NestedPerfloadRequest() *Request {
	return &Request{Microversion: MaxMicroversion, GroupPolicy: "none",
		SameSubtree: [][]string{{"_COMPUTE", "_FPGA"}},
		Groups: []RequestGroup{
			{Resources: map[string]int64{"DISK_GB": 10}, RequiredTraits: [][]string{{"COMPUTE_VOLUME_MULTI_ATTACH"}}},
			{Suffix: "_COMPUTE", Resources: map[string]int64{"VCPU": 1, "MEMORY_MB": 256}, RequiredTraits: [][]string{{"CUSTOM_FOO"}}},
			{Suffix: "_FPGA", Resources: map[string]int64{"FPGA": 1}},
		}}
}

// ExplosionInput is the wide-tree case of Placement bug 2070257: one root
// with `children` children of one SRIOV_NET_VF each.
func ExplosionInput(children int) *ModelInput {
	b := newInputBuilder()
	root := b.provider(SyntheticUUID(3, 0), "wide", 0)
	b.inv(root, "VCPU", 64, 0, 0, 0, 0)
	for i := 0; i < children; i++ {
		p := b.provider(SyntheticUUID(3, i+1), fmt.Sprintf("wide-vf%d", i), root)
		b.inv(p, "SRIOV_NET_VF", 1, 0, 0, 0, 0)
	}
	return b.in
}

// ExplosionRequest asks for `groups` suffixed groups of one SRIOV_NET_VF.
func ExplosionRequest(groups int, policy string, limit int) *Request {
	r := &Request{Microversion: MaxMicroversion, GroupPolicy: policy, Limit: limit}
	for i := 0; i < groups; i++ {
		r.Groups = append(r.Groups, RequestGroup{Suffix: fmt.Sprint(i + 1),
			Resources: map[string]int64{"SRIOV_NET_VF": 1}})
	}
	return r
}

// ScaleInput is a large mixed cloud of about n providers: compute nodes with
// two NUMA children and one PF grandchild each, a few sharing storage
// providers, 50 aggregates, traits and usages.
func ScaleInput(n int) *ModelInput {
	b := newInputBuilder()
	nAggs := 50
	aggs := make([]string, nAggs)
	for i := range aggs {
		aggs[i] = SyntheticUUID(5, i)
	}
	hostTraits := []string{"HW_CPU_X86_AVX2", "HW_CPU_X86_SSE2", "COMPUTE_VOLUME_MULTI_ATTACH", "CUSTOM_RACK_A", "CUSTOM_RACK_B"}
	for i := 0; i < nAggs && len(b.in.Providers) < n; i++ {
		s := b.provider(SyntheticUUID(6, i), fmt.Sprintf("shared-%d", i), 0)
		b.inv(s, "DISK_GB", 100000, 100, 0, 0, 0)
		b.traitsOf(s, "MISC_SHARES_VIA_AGGREGATE")
		b.aggsOf(s, aggs[i])
	}
	for i := 0; len(b.in.Providers) < n; i++ {
		cn := b.provider(SyntheticUUID(7, i*4), fmt.Sprintf("compute-%d", i), 0)
		b.inv(cn, "DISK_GB", 2000, 100, 0, 0, 0)
		b.traitsOf(cn, hostTraits[i%len(hostTraits)], hostTraits[(i+1)%len(hostTraits)])
		b.aggsOf(cn, aggs[i%nAggs])
		b.in.Usages = append(b.in.Usages, UsageRow{ProviderID: cn, ResourceClassID: b.rc("DISK_GB"), Used: int64(i % 500)})
		for k := 0; k < 2; k++ {
			numa := b.provider(SyntheticUUID(7, i*4+1+k), fmt.Sprintf("compute-%d-numa%d", i, k), cn)
			b.inv(numa, "VCPU", 32, 0, 0, 0, 0)
			b.inv(numa, "MEMORY_MB", 65536, 512, 0, 0, 0)
			b.traitsOf(numa, "HW_NUMA_ROOT")
			b.in.Usages = append(b.in.Usages, UsageRow{ProviderID: numa, ResourceClassID: b.rc("VCPU"), Used: int64(i % 30)})
		}
		pf := b.provider(SyntheticUUID(7, i*4+3), fmt.Sprintf("compute-%d-pf", i), cn+1)
		b.inv(pf, "SRIOV_NET_VF", 16, 0, 0, 0, 0)
		b.traitsOf(pf, "CUSTOM_PHYSNET1")
	}
	return b.in
}

// CapacityInput is a cloud of n hosts as `migrate inventory` leaves them
// (VCPU at ratio 16, MEMORY_MB at 1.5 with 512 reserved, DISK_GB), with
// usage, ten aggregates, some hosts disabled (COMPUTE_STATUS_DISABLED), some
// with dedicated CPUs (PCPU) or GPUs (CUSTOM_GPU in steps of 2, max_unit 2),
// and every fifth host's disk on a sharing storage pool of its aggregate
// instead of local.
func CapacityInput(n int) *ModelInput {
	b := newInputBuilder()
	ratio := func(r float64) { b.in.Inventories[len(b.in.Inventories)-1].AllocationRatio = r }
	use := func(p int64, rc string, used int64) {
		if used > 0 {
			b.in.Usages = append(b.in.Usages, UsageRow{ProviderID: p, ResourceClassID: b.rc(rc), Used: used})
		}
	}
	const nAggs = 10
	for a := 0; a < nAggs; a++ {
		s := b.provider(SyntheticUUID(8, a), fmt.Sprintf("shared-storage-%d", a), 0)
		b.inv(s, "DISK_GB", 20000, 100, 0, 0, 0)
		b.traitsOf(s, "MISC_SHARES_VIA_AGGREGATE")
		b.aggsOf(s, SyntheticUUID(9, a))
	}
	for i := 0; i < n; i++ {
		cn := b.provider(SyntheticUUID(10, i), fmt.Sprintf("compute-%05d", i), 0)
		vcpus := int64(16 << (i % 3)) // 16, 32, 64
		b.inv(cn, "VCPU", vcpus, 0, 0, vcpus, 0)
		ratio(16)
		use(cn, "VCPU", int64(i*7)%(vcpus*4))
		mem := vcpus * 4096
		b.inv(cn, "MEMORY_MB", mem, 512, 0, mem, 0)
		ratio(1.5)
		use(cn, "MEMORY_MB", int64(i*2048)%(mem/2))
		if i%5 != 0 {
			b.inv(cn, "DISK_GB", 1000+int64(i%4)*500, 1, 0, 0, 0)
			use(cn, "DISK_GB", int64(i*20)%800)
		}
		if i%4 == 1 {
			b.inv(cn, "PCPU", 8, 0, 0, 8, 0)
			use(cn, "PCPU", int64(i%3)*2)
		}
		if i%10 == 3 {
			b.inv(cn, "CUSTOM_GPU", 4, 0, 1, 2, 2)
			b.traitsOf(cn, "CUSTOM_GPU_A100")
		}
		b.traitsOf(cn, "COMPUTE_NODE")
		if i%17 == 5 {
			b.traitsOf(cn, "COMPUTE_STATUS_DISABLED")
		}
		if i%3 == 0 {
			b.traitsOf(cn, "HW_CPU_X86_AVX2")
		}
		b.aggsOf(cn, SyntheticUUID(9, i%nAggs))
	}
	return b.in
}

// GranularInput is a nested cloud of n hosts as `migrate inventory
// --layout nested` leaves them: each root has two NUMA children of 64 VCPU,
// so that a host holds 128 one-VCPU groups and not 129.
func GranularInput(n int) *ModelInput {
	b := newInputBuilder()
	for i := range n {
		cn := b.provider(SyntheticUUID(11, i*3), fmt.Sprintf("node-%03d", i), 0)
		b.inv(cn, "DISK_GB", 1000, 0, 0, 0, 0)
		for k := range 2 {
			numa := b.provider(SyntheticUUID(11, i*3+1+k), fmt.Sprintf("node-%03d-numa%d", i, k), cn)
			b.inv(numa, "VCPU", 64, 0, 0, 0, 0)
			b.traitsOf(numa, "HW_NUMA_ROOT")
		}
	}
	return b.in
}

// GranularRequest asks for `groups` suffixed groups of one VCPU each, with
// group_policy none: the flavor of the issue whose answers grow as 2^groups
// per host on GranularInput.
func GranularRequest(groups, limit int) *Request {
	r := &Request{Microversion: MaxMicroversion, GroupPolicy: "none", Limit: limit}
	for i := range groups {
		r.Groups = append(r.Groups, RequestGroup{Suffix: fmt.Sprint(i + 1), Resources: map[string]int64{"VCPU": 1}})
	}
	return r
}
