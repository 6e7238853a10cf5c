package candidates

import (
	"context"
	"strings"
	"testing"
)

func TestExplain(t *testing.T) {
	nn := numaNetworkFixture(false)
	nm := nn.toModel(t)
	ss := sharedStorageFixture()
	sm := ss.toModel(t)
	gr := granularFixture()
	gm := gr.toModel(t)
	cases := []struct {
		c     *cloud
		m     *Model
		q     cloudQuery
		root  string
		kind  ReasonKind
		group string
		want  string // substring of the message
	}{
		{ss, sm, qq("vf", 29, -1, grp("_NET1", res{"SRIOV_NET_VF": 9})), "cn1", ReasonMaxUnit, "_NET1",
			`group "_NET1": SRIOV_NET_VF 9 is above max_unit 8 on pf1_1`},
		{nn, nm, qq("cap", 29, -1, grp("_X", res{"VCPU": 6})), "cn2", ReasonCapacity, "_X",
			`group "_X": no provider in tree has VCPU with 6 free (best: cn2 has 5 of 8 free)`},
		{ss, sm, qq("sse", 29, -1, grp("", res{"VCPU": 1}).req("HW_CPU_X86_SSE")), "cn2", ReasonMissingTrait, "", "HW_CPU_X86_SSE"},
		{ss, sm, qq("forbid", 29, -1, grp("", res{"VCPU": 1}).forbid("HW_CPU_X86_SSE")), "cn1", ReasonForbiddenTrait, "", "forbidden trait HW_CPU_X86_SSE"},
		{ss, sm, qq("rootreq", 35, -1, grp("", res{"VCPU": 1})).rootReq("HW_CPU_X86_SSE"), "cn2", ReasonRootRequired, "", "lacks HW_CPU_X86_SSE"},
		{ss, sm, qq("intree", 31, -1, grp("", res{"VCPU": 1}).tree("cn1")), "cn2", ReasonNotInTree, "", "in_tree=cn1"},
		{ss, sm, qq("noclass", 29, -1, grp("", res{"VCPU": 1, "VGPU": 1})), "cn1", ReasonMissingClass, "", "VGPU"},
		{nn, nm, qq("min", 29, -1, grp("", res{"MEMORY_MB": 128})), "cn1", ReasonMinUnit, "", "min_unit"},
		{nn, nm, qq("step", 29, -1, grp("", res{"MEMORY_MB": 1100})), "cn2", ReasonStepSize, "", "step_size"},
		{gr, gm, qq("agg", 29, -1, grp("", res{"VCPU": 1}).member("aggC")), "cn_left", ReasonNotInAggregate, "", "member_of"},
		{gr, gm, qq("notagg", 32, -1, grp("", res{"VCPU": 1}).notIn("aggA")), "cn_left", ReasonForbiddenAggregate, "", "forbidden aggregate"},
		{gr, gm, qq("merged", 25, -1, grp("", res{"VCPU": 3}), grp("1", res{"VCPU": 4}), grp("2", res{"VCPU": 2})).policy("none"), "cn_left", ReasonMergedCapacity, "", "exceed capacity"},
		{gr, gm, qq("isolate", 25, -1, grp("1", res{"VCPU": 1}), grp("2", res{"VCPU": 1})).policy("isolate"), "cn_right", ReasonIsolate, "", "isolated"},
		{nn, nm, qq("subtree", 36, -1, grp("_A", res{"CUSTOM_FPGA": 1}), grp("_B", res{"VGPU": 1})).policy("none").subtree("_A", "_B"), "cn1", ReasonSameSubtree, "", "same_subtree"},
		{nn, nm, qq("quirk", 36, -1, grp("", res{"VCPU": 1}), grp("2", nil).forbid("CUSTOM_FOO")).policy("none").subtree("2"), "cn2", ReasonResourceless, "2", "resourceless"},
	}
	for _, tc := range cases {
		t.Run(tc.q.Name, func(t *testing.T) {
			ex := tc.m.explainAll(tc.c.request(&tc.q))
			for _, e := range ex {
				if e.RootName != tc.root {
					continue
				}
				t.Logf("%s: [%s] %s", e.RootName, e.Kind, e.Message)
				if e.Kind != tc.kind || e.Group != tc.group || !strings.Contains(e.Message, tc.want) {
					t.Fatalf("got %+v, want kind %s group %q containing %q", e, tc.kind, tc.group, tc.want)
				}
				return
			}
			t.Fatalf("no explanation for %s in %+v", tc.root, ex)
		})
	}
}

// explainAll is Explain under the default bounds, which no test here
// reaches.
func (m *Model) explainAll(req *Request) []Explanation {
	ex, err := m.Explain(context.Background(), req, Options{})
	if err != nil {
		panic(err)
	}
	return ex
}
