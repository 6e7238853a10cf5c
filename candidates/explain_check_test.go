package candidates

import (
	"fmt"
	"testing"
)

// TestExplainConsistentGabbi runs CheckExplain on every gabbi fixture query:
// the roots Explain names are exactly those without a candidate, and each
// reason is backed by the model.
func TestExplainConsistentGabbi(t *testing.T) {
	n := 0
	for _, c := range gabbiClouds() {
		m := c.toModel(t)
		for i := range c.Queries {
			q := &c.Queries[i]
			if q.WantError != "" {
				continue
			}
			n++
			if err := m.CheckExplain(c.request(q)); err != nil {
				t.Errorf("%s/%s@1.%d: %v", c.Name, q.Name, q.MV, err)
			}
		}
	}
	t.Logf("%d gabbi queries explained consistently", n)
}

// TestCheckExplainCatchesLies makes sure the checker is not vacuous: a
// wrong kind or a missing root is reported.
func TestCheckExplainCatchesLies(t *testing.T) {
	ss := sharedStorageFixture()
	m := ss.toModel(t)
	q := qq("sse", 29, -1, grp("", res{"VCPU": 1}).req("HW_CPU_X86_SSE"))
	req := ss.request(&q)
	ex := m.explainAll(req)
	if len(ex) == 0 {
		t.Fatal("expected an explanation")
	}
	r, _ := m.ProviderIndex(ex[0].RootUUID)
	bad := ex[0]
	for _, k := range []ReasonKind{ReasonCapacity, ReasonMissingClass, ReasonNotInAggregate, ReasonRootRequired, ReasonIsolate} {
		bad.Kind = k
		if err := m.checkReason(req, r, &bad); err == nil {
			t.Errorf("kind %s accepted for %s", k, fmt.Sprint(ex[0].Message))
		}
	}
}
