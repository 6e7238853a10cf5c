package claims

import (
	"reflect"
	"testing"
)

func TestDiff(t *testing.T) {
	c := func(consumer, prov, node string, res map[string]int64) Claim {
		return Claim{InstanceUUID: consumer, ProviderUUID: prov, Host: node, Node: node, Resources: res}
	}
	small := map[string]int64{"VCPU": 1}
	big := map[string]int64{"VCPU": 2}
	before := []Claim{c("a", "p1", "n1", small), c("b", "p1", "n1", small), c("c", "p1", "n1", small), c("d", "p1", "n1", small),
		c("f", "", "n1", small)}
	after := []Claim{c("b", "p1", "n1", big), c("c", "p2", "n2", small), c("d", "p1", "n1", small), c("e", "p2", "n2", small),
		c("f", "p1", "n1", small)}
	got := Diff(before, after)
	want := []Change{
		{ChangeReleased, "a", "n1: VCPU=1", ""},
		{ChangeResized, "b", "n1: VCPU=1", "n1: VCPU=2"},
		{ChangeMoved, "c", "n1: VCPU=1", "n2: VCPU=1"},
		{ChangeNew, "e", "", "n2: VCPU=1"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
}
