package candidates

import "fmt"

// The gabbi fixtures of placement/tests/functional/fixtures/gabbits.py
// (placement 8.0.0), rebuilt as clouds, with queries taken from the gabbi
// files that use them. WantCount/WantSummaries/WantError are the gabbi
// files' documented answers; everything else is checked against the golden
// answers of the real Placement.

type res = map[string]int64

func grp(suffix string, r res) cloudGroup { return cloudGroup{Suffix: suffix, Resources: r} }

func (g cloudGroup) req(ts ...string) cloudGroup {
	for _, t := range ts {
		g.Required = append(g.Required, []string{t})
	}
	return g
}
func (g cloudGroup) anyOf(ts ...string) cloudGroup {
	g.Required = append(g.Required, ts)
	return g
}
func (g cloudGroup) forbid(ts ...string) cloudGroup {
	g.Forbidden = append(g.Forbidden, ts...)
	return g
}
func (g cloudGroup) member(aggs ...string) cloudGroup {
	g.MemberOf = append(g.MemberOf, aggs)
	return g
}
func (g cloudGroup) notIn(aggs ...string) cloudGroup {
	g.ForbiddenAggs = append(g.ForbiddenAggs, aggs...)
	return g
}
func (g cloudGroup) tree(rp string) cloudGroup { g.InTree = rp; return g }

func qq(name string, mv int, count int, groups ...cloudGroup) cloudQuery {
	return cloudQuery{Name: name, MV: mv, Groups: groups, WantCount: count}
}

func (q cloudQuery) policy(p string) cloudQuery { q.GroupPolicy = p; return q }
func (q cloudQuery) limit(n int) cloudQuery     { q.Limit = n; return q }
func (q cloudQuery) summaries(n int) cloudQuery { q.WantSummaries = n; return q }
func (q cloudQuery) err(msg string) cloudQuery  { q.WantError = msg; q.WantCount = -1; return q }
func (q cloudQuery) bug38() cloudQuery          { q.Bug38 = true; return q }
func (q cloudQuery) sharingAnchor() cloudQuery  { q.SharingAnchor = true; return q }
func (q cloudQuery) subtree(s ...string) cloudQuery {
	q.SameSubtree = append(q.SameSubtree, s)
	return q
}
func (q cloudQuery) rootReq(ts ...string) cloudQuery    { q.RootRequired = ts; return q }
func (q cloudQuery) rootForbid(ts ...string) cloudQuery { q.RootForbidden = ts; return q }

const unknown = -1

func gabbiClouds() []*cloud {
	return []*cloud{
		sharedStorageFixture(), nonSharedStorageFixture(), numaAggregateFixture(),
		numaNetworkFixture(false), numaNetworkFixture(true), granularFixture(),
		neutronQoSMultiSegmentFixture(),
	}
}

func sharedStorageFixture() *cloud {
	b := newCloud("SharedStorageFixture")
	b.rp("cn1", "", "agg")
	b.rp("cn2", "", "agg")
	b.rp("ss", "", "agg")
	b.rp("ss2", "", "agg")
	b.rp("numa1_1", "cn1")
	b.rp("numa1_2", "cn1")
	b.rp("numa2_1", "cn2")
	b.rp("numa2_2", "cn2")
	b.rp("pf1_1", "numa1_1")
	b.rp("pf1_2", "numa1_2")
	b.rp("pf2_1", "numa2_1")
	b.rp("pf2_2", "numa2_2")
	for _, cn := range []string{"cn1", "cn2"} {
		b.inv(cn, "VCPU", 24, ratio(16))
		b.inv(cn, "MEMORY_MB", 128*1024, ratio(1.5))
	}
	b.traits("cn1", "HW_CPU_X86_SSE", "HW_CPU_X86_SSE2")
	b.inv("cn2", "DISK_GB", 2000, reserved(100))
	for _, s := range []string{"ss", "ss2"} {
		b.inv(s, "DISK_GB", 2000, reserved(100))
		b.traits(s, "MISC_SHARES_VIA_AGGREGATE")
	}
	for _, pf := range []string{"pf1_1", "pf1_2", "pf2_1", "pf2_2"} {
		b.inv(pf, "SRIOV_NET_VF", 8)
	}
	base := res{"VCPU": 1, "MEMORY_MB": 1024, "DISK_GB": 100}
	for _, mv := range []int{10, 12, 17, 27, 29, 34} {
		b.q(qq("base", mv, 5, grp("", base)))
	}
	b.q(qq("limit", 16, 2, grp("", base)).limit(2))
	b.q(qq("limit-nested", 29, 1, grp("", res{"VCPU": 1})).limit(1).summaries(5))
	b.q(qq("required-sse", 17, 2, grp("", base).req("HW_CPU_X86_SSE")))
	b.q(qq("required-sse-sse2", 17, 2, grp("", base).req("HW_CPU_X86_SSE", "HW_CPU_X86_SSE2")))
	b.q(qq("required-avx", 17, 0, grp("", base).req("HW_CPU_X86_AVX")))
	b.q(qq("forbidden-sse", 22, 3, grp("", base).forbid("HW_CPU_X86_SSE")))
	b.q(qq("forbidden-sharing", 22, 1, grp("", base).forbid("MISC_SHARES_VIA_AGGREGATE")))
	b.q(qq("unknown-trait", 17, unknown, grp("", base).req("CUSTOM_NOPE")).err("No such trait(s): CUSTOM_NOPE."))
	b.q(qq("unknown-forbidden-trait", 22, unknown, grp("", base).forbid("CUSTOM_NOPE")).err("No such trait(s): CUSTOM_NOPE."))
	b.q(qq("unknown-class", 12, unknown, grp("", res{"VCPU": 1, "CUSTOM_NOPE": 1})).err(
		"Invalid resource class in resources parameter: No such resource class CUSTOM_NOPE."))
	b.q(qq("vcpu-only-1.29", 29, 2, grp("", res{"VCPU": 1})).summaries(10))
	b.q(qq("vcpu-only-1.28", 28, 2, grp("", res{"VCPU": 1})).summaries(2))
	b.q(qq("vf-1.28", 28, 0, grp("", res{"VCPU": 1, "SRIOV_NET_VF": 4})))
	b.q(qq("vf-1.29", 29, 4, grp("", res{"VCPU": 1, "SRIOV_NET_VF": 4})))
	b.q(qq("vf-only-1.28", 28, 4, grp("", res{"SRIOV_NET_VF": 4})))
	b.q(qq("vf-limit-1.28", 28, 1, grp("", res{"SRIOV_NET_VF": 4})).limit(1))
	b.q(qq("disk-only", 29, 3, grp("", res{"DISK_GB": 10})))
	b.q(qq("disk-only-1.26", 26, 3, grp("", res{"DISK_GB": 10})))
	b.q(qq("in-tree-cn1", 31, 1, grp("", res{"VCPU": 1}).tree("cn1")))
	b.q(qq("in-tree-pf", 31, 1, grp("", res{"VCPU": 1}).tree("pf1_1")))
	b.q(qq("in-tree-ss", 31, 0, grp("", res{"VCPU": 1, "DISK_GB": 10}).tree("cn1")))
	b.q(qq("in-tree-ss-disk", 31, 1, grp("", res{"DISK_GB": 10}).tree("ss")))
	b.q(qq("in-tree-unknown", 31, 0, grp("", res{"VCPU": 1}).tree("00000000-0000-4000-8000-000000000000")))
	b.q(qq("in-tree-granular", 31, 1, grp("", res{"VCPU": 1}).tree("cn1"), grp("1", res{"DISK_GB": 10}).tree("ss")))
	b.q(qq("in-tree-granular-2", 31, unknown, grp("", res{"VCPU": 1, "SRIOV_NET_VF": 1}), grp("1", res{"DISK_GB": 10}).tree("cn2")))
	b.q(qq("vf-granular-isolate", 29, unknown, grp("", res{"VCPU": 1}), grp("1", res{"SRIOV_NET_VF": 1}), grp("2", res{"SRIOV_NET_VF": 1})).policy("isolate"))
	b.q(qq("vf-granular-none", 34, unknown, grp("", res{"VCPU": 1}), grp("1", res{"SRIOV_NET_VF": 1}), grp("2", res{"SRIOV_NET_VF": 1})).policy("none"))
	b.q(qq("disk-granular-sharing", 34, unknown, grp("", res{"VCPU": 1}), grp("1", res{"DISK_GB": 100})))
	b.q(qq("sharing-only-with-granular", 34, unknown, grp("", res{"DISK_GB": 100}), grp("1", res{"VCPU": 1})).sharingAnchor())
	b.q(qq("member-of-agg", 24, 5, grp("", base).member("agg")))
	b.q(qq("forbidden-agg", 32, 0, grp("", base).notIn("agg")))
	b.q(qq("max-exceeded", 12, 0, grp("", res{"VCPU": 385})))
	b.q(qq("root-required", 35, 2, grp("", base)).rootReq("HW_CPU_X86_SSE"))
	b.q(qq("root-forbidden", 35, 3, grp("", base)).rootForbid("HW_CPU_X86_SSE"))
	b.q(qq("unknown-trait-later-group", 25, 0, grp("", res{"VCPU": 1000}), grp("1", res{"VCPU": 1}).req("CUSTOM_NOPE")))
	return b.c
}

func nonSharedStorageFixture() *cloud {
	b := newCloud("NonSharedStorageFixture")
	b.agg("aggA", "aggB", "aggC")
	for _, cn := range []string{"cn1", "cn2", "cn3"} {
		b.rp(cn, "")
		b.inv(cn, "VCPU", 24)
		b.inv(cn, "MEMORY_MB", 128*1024)
		b.inv(cn, "DISK_GB", 2000)
	}
	// allocation-candidates-member-of.yaml attaches aggregates in its tests;
	// we use the state after "associate the first compute node with aggA" etc.
	b.get("cn1").Aggregates = []string{"aggA"}
	b.get("cn2").Aggregates = []string{"aggA", "aggB"}
	b.get("cn3").Aggregates = []string{"aggC"}
	base := res{"VCPU": 1}
	b.q(qq("no-member-of", 21, 3, grp("", base)))
	b.q(qq("member-of-aggA", 21, 2, grp("", base).member("aggA")))
	b.q(qq("member-of-in-aggA-aggC", 21, 3, grp("", base).member("aggA", "aggC")))
	b.q(qq("member-of-aggB", 21, 1, grp("", base).member("aggB")))
	b.q(qq("member-of-unknown", 21, 0, grp("", base).member("00000000-0000-4000-8000-00000000abcd")))
	b.q(qq("member-of-unknown-with-bad-trait", 21, 0, grp("", base).member("00000000-0000-4000-8000-00000000abcd").req("CUSTOM_NOPE")))
	b.q(qq("member-of-and", 24, 1, grp("", base).member("aggA").member("aggB")))
	b.q(qq("member-of-and-or", 24, 1, grp("", base).member("aggA", "aggC").member("aggB")))
	b.q(qq("member-of-and-empty", 24, 0, grp("", base).member("aggA").member("aggC")))
	b.q(qq("forbidden-aggA", 32, 1, grp("", base).notIn("aggA")))
	b.q(qq("forbidden-aggB-aggC", 32, 1, grp("", base).notIn("aggB", "aggC")))
	b.q(qq("same-agg-pos-neg", 32, 0, grp("", base).member("aggA").notIn("aggA")))
	b.q(qq("granular-member-of", 25, unknown, grp("", base), grp("1", res{"DISK_GB": 10}).member("aggB")).policy("none"))
	b.q(qq("granular-member-of-isolate", 25, unknown, grp("1", base).member("aggA"), grp("2", res{"DISK_GB": 10}).member("aggB")).policy("isolate"))
	b.q(qq("granular-forbidden", 32, unknown, grp("1", base).notIn("aggA"), grp("2", res{"DISK_GB": 10})).policy("none"))
	return b.c
}

func numaAggregateFixture() *cloud {
	b := newCloud("NUMAAggregateFixture")
	b.rp("cn1", "", "aggA")
	b.rp("cn2", "", "aggA", "aggB")
	b.rp("ss1", "", "aggA")
	b.rp("ss2", "", "aggC")
	b.rp("numa1_1", "cn1", "aggC")
	b.rp("numa1_2", "cn1")
	b.rp("numa2_1", "cn2")
	b.rp("numa2_2", "cn2")
	for _, n := range []string{"numa1_1", "numa1_2", "numa2_1", "numa2_2"} {
		b.inv(n, "VCPU", 24, ratio(16))
	}
	for _, s := range []string{"ss1", "ss2"} {
		b.inv(s, "DISK_GB", 2000, reserved(100))
		b.traits(s, "MISC_SHARES_VIA_AGGREGATE")
	}
	b.q(qq("vcpu", 29, 4, grp("", res{"VCPU": 1})))
	b.q(qq("member-of-aggA", 29, 4, grp("", res{"VCPU": 1}).member("aggA")))
	b.q(qq("member-of-aggB", 29, 2, grp("", res{"VCPU": 1}).member("aggB")))
	b.q(qq("member-of-aggC", 29, 1, grp("", res{"VCPU": 1}).member("aggC")))
	b.q(qq("granular-member-of-aggA", 29, 0, grp("1", res{"VCPU": 1}).member("aggA")))
	b.q(qq("granular-member-of-aggC", 29, 1, grp("1", res{"VCPU": 1}).member("aggC")))
	b.q(qq("vcpu-disk", 29, 6, grp("", res{"VCPU": 1, "DISK_GB": 1000})))
	b.q(qq("vcpu-disk-aggA", 29, unknown, grp("", res{"VCPU": 1, "DISK_GB": 1000}).member("aggA")))
	b.q(qq("vcpu-disk-aggC", 29, unknown, grp("", res{"VCPU": 1, "DISK_GB": 1000}).member("aggC")))
	b.q(qq("vcpu-disk-aggB", 29, unknown, grp("", res{"VCPU": 1, "DISK_GB": 1000}).member("aggB")))
	b.q(qq("vcpu-disk-not-aggC", 32, unknown, grp("", res{"VCPU": 1, "DISK_GB": 1000}).notIn("aggC")))
	b.q(qq("vcpu-disk-not-aggB", 32, unknown, grp("", res{"VCPU": 1, "DISK_GB": 1000}).notIn("aggB")))
	b.q(qq("vcpu-granular-disk", 29, unknown, grp("", res{"VCPU": 1}), grp("1", res{"DISK_GB": 1000})))
	b.q(qq("vcpu-disk-1.28", 28, unknown, grp("", res{"VCPU": 1, "DISK_GB": 1000})))
	return b.c
}

func numaNetworkFixture(deep bool) *cloud {
	name := "NUMANetworkFixture"
	if deep {
		name = "DeepNUMANetworkFixture"
	}
	b := newCloud(name)
	cn1Parent, cn2Parent := "", ""
	if deep {
		b.rp("gp1", "")
		b.rp("p1", "gp1")
		b.rp("p2", "gp1")
		b.rp("cn1", "p1")
		b.rp("cn2", "p2")
		cn1Parent, cn2Parent = "p1", "p2"
	}
	b.rp("ss1", "", "aggA")
	b.traits("ss1", "MISC_SHARES_VIA_AGGREGATE")
	b.inv("ss1", "DISK_GB", 2000)
	if !deep {
		b.rp("cn1", cn1Parent, "aggA")
	} else {
		b.get("cn1").Aggregates = []string{"aggA"}
	}
	b.traits("cn1", "COMPUTE_VOLUME_MULTI_ATTACH")
	for _, i := range []string{"0", "1"} {
		b.rp("numa"+i, "cn1")
		b.traits("numa"+i, "HW_NUMA_ROOT")
		if i == "1" {
			b.traits("numa1", "CUSTOM_FOO")
		}
		b.inv("numa"+i, "VCPU", 4)
	}
	b.inv("numa0", "MEMORY_MB", 2048, minUnit(512), stepSize(256))
	b.inv("numa1", "MEMORY_MB", 2048, minUnit(256), maxUnit(1024))
	b.alloc("numa0", res{"VCPU": 2})
	b.rp("fpga0", "numa0")
	b.inv("fpga0", "CUSTOM_FPGA", 1)
	b.rp("pgpu0", "numa0")
	b.inv("pgpu0", "VGPU", 8)
	for _, i := range []string{"0", "1"} {
		b.rp("fpga1_"+i, "numa1")
		b.inv("fpga1_"+i, "CUSTOM_FPGA", 1)
	}
	b.rp("sriov_agent", "cn1")
	b.traits("sriov_agent", "CUSTOM_VNIC_TYPE_DIRECT")
	b.rp("esn1", "sriov_agent")
	b.traits("esn1", "CUSTOM_PHYSNET1")
	b.inv("esn1", "NET_BW_EGR_KILOBIT_PER_SEC", 10000)
	b.rp("esn2", "sriov_agent")
	b.traits("esn2", "CUSTOM_PHYSNET2")
	b.inv("esn2", "NET_BW_EGR_KILOBIT_PER_SEC", 20000)
	b.rp("ovs_agent", "cn1")
	b.traits("ovs_agent", "CUSTOM_VNIC_TYPE_NORMAL")
	b.rp("br_int", "ovs_agent")
	b.traits("br_int", "CUSTOM_PHYSNET0")
	b.inv("br_int", "NET_BW_EGR_KILOBIT_PER_SEC", 1000)
	if !deep {
		b.rp("cn2", cn2Parent)
	}
	b.get("cn2").Aggregates = []string{"aggA"}
	b.inv("cn2", "VCPU", 8)
	b.alloc("cn2", res{"VCPU": 3})
	b.inv("cn2", "MEMORY_MB", 2048, minUnit(1024), stepSize(128))
	b.inv("cn2", "DISK_GB", 1000)
	b.traits("cn2", "CUSTOM_FOO")
	for _, i := range []string{"1", "2", "3"} {
		b.rp("nic"+i, "cn2")
		b.traits("nic"+i, "CUSTOM_HW_NIC_ROOT")
	}
	for i, pf := range []string{"pf1_1", "pf1_2"} {
		b.rp(pf, "nic1")
		b.traits(pf, []string{"CUSTOM_PHYSNET1", "CUSTOM_PHYSNET2"}[i])
		b.inv(pf, "CUSTOM_VF", 4)
	}
	for i, pf := range []string{"pf2_1", "pf2_2", "pf2_3", "pf2_4"} {
		b.rp(pf, "nic2")
		b.traits(pf, []string{"CUSTOM_PHYSNET1", "CUSTOM_PHYSNET2"}[i%2])
		b.inv(pf, "CUSTOM_VF", 2)
	}
	b.rp("pf3_1", "nic3")
	b.traits("pf3_1", "CUSTOM_PHYSNET1")
	b.inv("pf3_1", "CUSTOM_VF", 8)

	numaReq := grp("_NUMA", nil).req("HW_NUMA_ROOT")
	b.q(qq("vcpu-numa", 36, unknown, grp("", res{"VCPU": 1})))
	b.q(qq("same-subtree-fpga", 36, unknown, numaReq, grp("_ACCEL1", res{"CUSTOM_FPGA": 1}), grp("_ACCEL2", res{"CUSTOM_FPGA": 1})).policy("none").subtree("_NUMA", "_ACCEL1", "_ACCEL2"))
	b.q(qq("same-subtree-fpga-isolate", 36, unknown, numaReq, grp("_ACCEL1", res{"CUSTOM_FPGA": 1}), grp("_ACCEL2", res{"CUSTOM_FPGA": 1})).policy("isolate").subtree("_NUMA", "_ACCEL1", "_ACCEL2"))
	b.q(qq("same-subtree-compute", 36, unknown, grp("_COMPUTE", res{"VCPU": 1, "MEMORY_MB": 1024}), grp("_ACCEL", res{"CUSTOM_FPGA": 1})).policy("none").subtree("_COMPUTE", "_ACCEL"))
	b.q(qq("same-subtree-compute-1.34", 34, unknown, grp("_COMPUTE", res{"VCPU": 1, "MEMORY_MB": 1024}), grp("_ACCEL", res{"CUSTOM_FPGA": 1})).policy("none"))
	b.q(qq("nic-vf-physnet", 36, unknown, grp("_NIC", nil).req("CUSTOM_HW_NIC_ROOT"), grp("_PORT1", res{"CUSTOM_VF": 2}).req("CUSTOM_PHYSNET1"), grp("_PORT2", res{"CUSTOM_VF": 2}).req("CUSTOM_PHYSNET2")).policy("none").subtree("_NIC", "_PORT1", "_PORT2"))
	b.q(qq("nic-vf-physnet-isolate", 36, unknown, grp("_NIC", nil).req("CUSTOM_HW_NIC_ROOT"), grp("_PORT1", res{"CUSTOM_VF": 2}).req("CUSTOM_PHYSNET1"), grp("_PORT2", res{"CUSTOM_VF": 2}).req("CUSTOM_PHYSNET2")).policy("isolate").subtree("_NIC", "_PORT1", "_PORT2"))
	b.q(qq("resourceless-forbidden-only", 36, 0, grp("", res{"VCPU": 1}), grp("2", nil).forbid("CUSTOM_FOO")).policy("none").subtree("2"))
	b.q(qq("resourceless-in-tree-only", 36, 0, grp("", res{"VCPU": 1}), grp("2", nil).tree("cn2")).policy("none").subtree("2"))
	b.q(qq("resourceless-member-of", 36, unknown, grp("", res{"VCPU": 1}), grp("2", nil).member("aggA")).policy("none").subtree("2"))
	b.q(qq("resourceless-in-tree-and-trait", 36, unknown, grp("", res{"VCPU": 1}), grp("2", nil).req("CUSTOM_FOO").tree("cn1")).policy("none").subtree("2"))
	b.q(qq("mem-step", 29, unknown, grp("", res{"MEMORY_MB": 1024})))
	b.q(qq("mem-odd", 29, unknown, grp("", res{"MEMORY_MB": 768})))
	b.q(qq("mem-min", 29, unknown, grp("", res{"MEMORY_MB": 256})))
	b.q(qq("vcpu-split", 29, unknown, grp("", res{"VCPU": 5})))
	b.q(qq("vcpu-used", 29, unknown, grp("", res{"VCPU": 3})))
	b.q(qq("root-required-multiattach", 35, unknown, grp("", res{"VCPU": 1})).rootReq("COMPUTE_VOLUME_MULTI_ATTACH"))
	b.q(qq("root-forbidden-multiattach", 35, unknown, grp("", res{"VCPU": 1})).rootForbid("COMPUTE_VOLUME_MULTI_ATTACH"))
	b.q(qq("root-required-foo-disk", 35, unknown, grp("", res{"VCPU": 1, "DISK_GB": 10})).rootReq("CUSTOM_FOO"))
	b.q(qq("root-required-granular-sharing", 35, unknown, grp("", res{"VCPU": 1}), grp("1", res{"DISK_GB": 10})).rootReq("COMPUTE_VOLUME_MULTI_ATTACH"))
	b.q(qq("root-trait-not-contributing", 29, unknown, grp("", res{"VCPU": 1}).req("COMPUTE_VOLUME_MULTI_ATTACH")))
	b.q(qq("foo-required", 29, unknown, grp("", res{"VCPU": 1, "MEMORY_MB": 1024}).req("CUSTOM_FOO")))
	b.q(qq("foo-forbidden", 29, unknown, grp("", res{"VCPU": 1, "MEMORY_MB": 1024}).forbid("CUSTOM_FOO")))
	b.q(qq("bw-physnet", 29, unknown, grp("", res{"VCPU": 1}), grp("1", res{"NET_BW_EGR_KILOBIT_PER_SEC": 1000}).req("CUSTOM_PHYSNET1")))
	b.q(qq("vf-exceed-merged", 36, unknown, grp("1", res{"CUSTOM_VF": 2}), grp("2", res{"CUSTOM_VF": 2}), grp("3", res{"CUSTOM_VF": 1})).policy("none"))
	b.q(qq("vf-isolate-limit", 36, 3, grp("1", res{"CUSTOM_VF": 1}), grp("2", res{"CUSTOM_VF": 1}), grp("3", res{"CUSTOM_VF": 1})).policy("isolate").limit(3))
	b.q(qq("all-in-one-disk-sharing", 34, unknown, grp("", res{"VCPU": 1, "DISK_GB": 10}), grp("_NET", res{"CUSTOM_VF": 1}).req("CUSTOM_PHYSNET2")).policy("none"))
	b.q(qq("deep-subtree-gp", 36, unknown, grp("_CN", nil).req("COMPUTE_VOLUME_MULTI_ATTACH"), grp("_GPU", res{"VGPU": 1})).policy("none").subtree("_CN", "_GPU"))
	b.q(qq("same-subtree-two-sets", 36, unknown, grp("_A", res{"CUSTOM_FPGA": 1}), grp("_B", res{"CUSTOM_FPGA": 1}), grp("_C", res{"VGPU": 1}), grp("_N", nil).req("CUSTOM_FOO")).policy("isolate").subtree("_A", "_N").subtree("_B", "_C"))
	b.q(qq("bug-3.8-inflated-amounts", 34, unknown, grp("", res{"CUSTOM_VF": 1}), grp("1", res{"CUSTOM_VF": 1})).policy("isolate").bug38())
	b.q(qq("bug-3.8-none-is-fine", 34, unknown, grp("", res{"CUSTOM_VF": 1}), grp("1", res{"CUSTOM_VF": 1})).policy("none"))
	b.q(qq("in-tree-child", 31, unknown, grp("", res{"VCPU": 1, "DISK_GB": 10}).tree("numa1")))
	return b.c
}

func granularFixture() *cloud {
	b := newCloud("GranularFixture")
	b.rp("cn_left", "", "aggA")
	for rc, n := range (res{"VCPU": 8, "MEMORY_MB": 4096, "DISK_GB": 500, "VGPU": 8, "SRIOV_NET_VF": 8, "CUSTOM_NET_MBPS": 4000}) {
		b.inv("cn_left", rc, n)
	}
	b.traits("cn_left", "HW_CPU_X86_AVX", "HW_CPU_X86_AVX2", "HW_GPU_API_DXVA", "HW_NIC_DCB_PFC", "CUSTOM_FOO")
	b.rp("cn_middle", "", "aggA", "aggB")
	for rc, n := range (res{"VCPU": 8, "MEMORY_MB": 4096, "SRIOV_NET_VF": 8, "CUSTOM_NET_MBPS": 4000}) {
		b.inv("cn_middle", rc, n)
	}
	b.traits("cn_middle", "HW_CPU_X86_AVX", "HW_CPU_X86_AVX2", "HW_CPU_X86_SSE", "HW_NIC_ACCEL_TLS")
	b.rp("cn_right", "", "aggB", "aggC")
	b.inv("cn_right", "VCPU", 8)
	b.inv("cn_right", "MEMORY_MB", 4096)
	b.inv("cn_right", "DISK_GB", 500)
	b.inv("cn_right", "VGPU", 8, maxUnit(2))
	b.traits("cn_right", "HW_CPU_X86_MMX", "HW_GPU_API_DXVA", "CUSTOM_DISK_SSD")
	b.rp("shr_disk_1", "", "aggA")
	b.inv("shr_disk_1", "DISK_GB", 1000)
	b.traits("shr_disk_1", "MISC_SHARES_VIA_AGGREGATE", "CUSTOM_DISK_SSD")
	b.rp("shr_disk_2", "", "aggA", "aggB")
	b.inv("shr_disk_2", "DISK_GB", 1000)
	b.traits("shr_disk_2", "MISC_SHARES_VIA_AGGREGATE")
	b.rp("shr_net", "", "aggC")
	b.inv("shr_net", "SRIOV_NET_VF", 16)
	b.inv("shr_net", "CUSTOM_NET_MBPS", 40000)
	b.traits("shr_net", "MISC_SHARES_VIA_AGGREGATE")

	b.q(qq("simple", 25, unknown, grp("", res{"VCPU": 1}), grp("1", res{"VGPU": 1}), grp("2", res{"SRIOV_NET_VF": 1})).policy("isolate"))
	b.q(qq("resources-combine", 34, unknown, grp("", res{"VCPU": 3}), grp("1", res{"VCPU": 1}), grp("2", res{"VCPU": 2})).policy("none"))
	b.q(qq("combine-exceeds-capacity", 25, 0, grp("", res{"VCPU": 3}), grp("1", res{"VCPU": 4}), grp("2", res{"VCPU": 2})).policy("none"))
	b.q(qq("combine-exceeds-max-unit", 25, unknown, grp("1", res{"VGPU": 1}), grp("2", res{"VGPU": 2})).policy("none"))
	b.q(qq("isolate-vs-none", 25, unknown, grp("1", res{"VCPU": 1}), grp("2", res{"VCPU": 1})).policy("isolate"))
	b.q(qq("isolate-vs-none-none", 34, unknown, grp("1", res{"VCPU": 1}), grp("2", res{"VCPU": 1})).policy("none"))
	b.q(qq("sharing-disk", 34, unknown, grp("", res{"VCPU": 1, "DISK_GB": 10})))
	b.q(qq("sharing-disk-ssd", 34, unknown, grp("", res{"VCPU": 1, "DISK_GB": 10}).req("CUSTOM_DISK_SSD")))
	b.q(qq("sharing-disk-granular", 34, unknown, grp("", res{"VCPU": 1}), grp("1", res{"DISK_GB": 10}).req("CUSTOM_DISK_SSD")))
	b.q(qq("sharing-net", 34, unknown, grp("", res{"VCPU": 1}), grp("1", res{"SRIOV_NET_VF": 1, "CUSTOM_NET_MBPS": 100})).policy("isolate"))
	b.q(qq("member-of-granular", 25, unknown, grp("", res{"VCPU": 1}), grp("1", res{"DISK_GB": 10}).member("aggB")))
	b.q(qq("member-of-both", 25, unknown, grp("", res{"VCPU": 1}).member("aggA"), grp("1", res{"DISK_GB": 10}).member("aggB")))
	b.q(qq("traits-granular", 25, unknown, grp("", res{"VCPU": 1}).req("HW_CPU_X86_AVX"), grp("1", res{"VGPU": 1}).req("HW_GPU_API_DXVA"), grp("2", res{"SRIOV_NET_VF": 1}).forbid("HW_NIC_ACCEL_TLS")).policy("none"))
	b.q(qq("any-traits", 39, unknown, grp("", res{"VCPU": 1}).anyOf("HW_CPU_X86_SSE", "HW_CPU_X86_MMX")))
	b.q(qq("any-traits-and", 39, unknown, grp("", res{"VCPU": 1}).anyOf("HW_CPU_X86_SSE", "HW_CPU_X86_MMX").anyOf("CUSTOM_DISK_SSD", "HW_NIC_ACCEL_TLS")))
	b.q(qq("any-traits-granular", 39, unknown, grp("1", res{"VCPU": 1}).anyOf("HW_CPU_X86_AVX2", "HW_CPU_X86_MMX"), grp("2", res{"DISK_GB": 1}).anyOf("CUSTOM_DISK_SSD", "CUSTOM_FOO")).policy("none"))
	b.q(qq("any-traits-unknown", 39, unknown, grp("", res{"VCPU": 1}).anyOf("CUSTOM_NOPE", "HW_CPU_X86_SSE")).err("No such trait(s): CUSTOM_NOPE."))
	b.q(qq("mappings-sharing", 34, unknown, grp("", res{"VCPU": 1, "DISK_GB": 10}), grp("_NET", res{"SRIOV_NET_VF": 1})).policy("none"))
	b.q(qq("sharing-only-unsuffixed", 34, unknown, grp("", res{"DISK_GB": 100}), grp("1", res{"VCPU": 1})).sharingAnchor())
	b.q(qq("overlap-none", 34, unknown, grp("", res{"SRIOV_NET_VF": 1}), grp("1", res{"SRIOV_NET_VF": 1})).policy("none"))
	b.q(qq("overlap-isolate-bug-3.8", 34, unknown, grp("", res{"SRIOV_NET_VF": 1}), grp("1", res{"SRIOV_NET_VF": 1})).policy("isolate"))
	b.q(qq("limit-granular", 25, 2, grp("", res{"VCPU": 1}), grp("1", res{"VCPU": 1})).policy("none").limit(2))
	return b.c
}

func neutronQoSMultiSegmentFixture() *cloud {
	b := newCloud("NeutronQoSMultiSegmentFixture")
	physnets := map[string][]string{
		"compute0": {"CUSTOM_PHYSNET_OTHER"},
		"compute1": {"CUSTOM_PHYSNET_MSN_S1"},
		"compute2": {"CUSTOM_PHYSNET_MSN_S2"},
		"compute3": {"CUSTOM_PHYSNET_MSN_S1", "CUSTOM_PHYSNET_MSN_S2"},
	}
	direct := []string{"CUSTOM_VNIC_TYPE_DIRECT", "CUSTOM_VNIC_TYPE_DIRECT_PHYSICAL", "CUSTOM_VNIC_TYPE_MACVTAP"}
	for _, cn := range []string{"compute0", "compute1", "compute2", "compute3"} {
		b.rp(cn, "")
		b.inv(cn, "VCPU", 8)
		b.inv(cn, "MEMORY_MB", 4096)
		b.inv(cn, "DISK_GB", 500)
		ovs := cn + ":Open vSwitch agent"
		b.rp(ovs, cn)
		b.inv(ovs, "NET_PACKET_RATE_KILOPACKET_PER_SEC", 1000)
		b.traits(ovs, "CUSTOM_VNIC_TYPE_NORMAL")
		bw := int64(5000)
		if cn == "compute3" {
			bw = 1000
		}
		for i, pn := range physnets[cn] {
			br := ovs + ":br-ex"
			if i > 0 {
				br += "2"
			}
			b.rp(br, ovs)
			b.inv(br, "NET_BW_EGR_KILOBIT_PER_SEC", bw)
			b.inv(br, "NET_BW_IGR_KILOBIT_PER_SEC", bw)
			b.traits(br, "CUSTOM_VNIC_TYPE_NORMAL", pn)
		}
		sriov := cn + ":NIC Switch agent"
		b.rp(sriov, cn)
		b.traits(sriov, direct...)
		pbw := int64(10000)
		if cn == "compute3" {
			pbw = 1000
		}
		for i, pn := range physnets[cn] {
			pf := fmt.Sprintf("%s:enp129s0f%d", sriov, i)
			b.rp(pf, sriov)
			b.inv(pf, "NET_BW_EGR_KILOBIT_PER_SEC", pbw)
			b.inv(pf, "NET_BW_IGR_KILOBIT_PER_SEC", pbw)
			b.traits(pf, append(append([]string{}, direct...), pn)...)
		}
	}
	seg := func(s string, vnic string) cloudGroup {
		return grp(s, res{"NET_BW_EGR_KILOBIT_PER_SEC": 1000, "NET_BW_IGR_KILOBIT_PER_SEC": 1000}).
			req(vnic).anyOf("CUSTOM_PHYSNET_MSN_S1", "CUSTOM_PHYSNET_MSN_S2")
	}
	pps := func(s string) cloudGroup {
		return grp(s, res{"NET_PACKET_RATE_KILOPACKET_PER_SEC": 1000}).anyOf("CUSTOM_VNIC_TYPE_NORMAL", "CUSTOM_VNIC_TYPE_DIRECT")
	}
	compute := grp("", res{"VCPU": 1, "MEMORY_MB": 1024, "DISK_GB": 10})
	b.q(qq("one-port-normal", 39, unknown, compute, seg("port1", "CUSTOM_VNIC_TYPE_NORMAL"), pps("port1pps")).policy("none"))
	b.q(qq("one-port-direct", 39, unknown, compute, seg("port1", "CUSTOM_VNIC_TYPE_DIRECT")).policy("none"))
	b.q(qq("two-ports-normal-isolate", 39, unknown, compute, seg("port1", "CUSTOM_VNIC_TYPE_NORMAL"), seg("port2", "CUSTOM_VNIC_TYPE_NORMAL")).policy("isolate"))
	b.q(qq("two-ports-normal-none", 39, unknown, compute, seg("port1", "CUSTOM_VNIC_TYPE_NORMAL"), seg("port2", "CUSTOM_VNIC_TYPE_NORMAL")).policy("none"))
	b.q(qq("two-ports-mixed", 39, unknown, compute, seg("port1", "CUSTOM_VNIC_TYPE_NORMAL"), seg("port2", "CUSTOM_VNIC_TYPE_DIRECT")).policy("none"))
	b.q(qq("pre-1.29", 28, unknown, grp("", res{"VCPU": 1, "NET_BW_EGR_KILOBIT_PER_SEC": 1000})))
	b.q(qq("pre-1.27", 26, unknown, grp("", res{"VCPU": 1})))
	return b.c
}
