package difftest

import (
	"context"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/candidates"
	"github.com/rpctl/rpctl/internal/testdb"
	"github.com/rpctl/rpctl/storage/placementdb"
)

// TestPlacementCrashSharingChild pins the Placement 8.0.0 crash docs/candidates.md
// documents: a sharing provider that is the child of another tree, anchored
// through an aggregate to a host whose tree is the only one with every
// class. Placement builds summaries only for the trees that survive, looks
// up the sharing child's anyway and answers 500 (KeyError); rpctl answers
// with the candidate, and the oracle agrees with it.
func TestPlacementCrashSharingChild(t *testing.T) {
	ctx := context.Background()
	my, db := newPlacementDB(t)
	base := testdb.PlacementAPI(t, my.URL)
	c := &cloud{used: map[string]int64{}}
	agg := "aaaaaaaa-0000-4000-8000-00000000000a"
	c.aggs = []string{agg}
	c.providers = []*provider{
		{name: "storage-host", uuid: "11111111-0000-4000-8000-000000000001"},
		{name: "storage-host-disk", uuid: "11111111-0000-4000-8000-000000000002", parent: "11111111-0000-4000-8000-000000000001",
			invs:   map[string]inv{"DISK_GB": {Total: 1000, MinUnit: 1, MaxUnit: 1000, StepSize: 1, AllocationRatio: 1}},
			traits: []string{"MISC_SHARES_VIA_AGGREGATE"}, aggs: []string{agg}, sharing: true},
		{name: "compute", uuid: "11111111-0000-4000-8000-000000000003",
			invs: map[string]inv{"VCPU": {Total: 8, MinUnit: 1, MaxUnit: 8, StepSize: 1, AllocationRatio: 1}},
			aggs: []string{agg}},
	}
	c.write(t, base)
	in, err := placementdb.LoadPlacementModel(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	m, err := candidates.NewModel(in)
	if err != nil {
		t.Fatal(err)
	}
	const q = "resources=VCPU:1,DISK_GB:10"
	status, body := testdb.PlacementGet(t, base, "/allocation_candidates?"+q, "1.39")
	if status != 500 {
		t.Fatalf("Placement answered %d (%s): the crash this test documents is gone", status, body)
	}
	if sig := crashSignature(testdb.PlacementLog(base)); sig != knownCrash {
		t.Fatalf("Placement crashed with %q, want %q", sig, knownCrash)
	}
	req, err := candidates.ParseQuery(q, 39)
	if err != nil {
		t.Fatal(err)
	}
	got, err := searchAnswer(m, req)
	if err != nil || len(got) != 1 || !strings.Contains(got[0], "11111111-0000-4000-8000-000000000002:DISK_GB=10") ||
		!strings.Contains(got[0], "11111111-0000-4000-8000-000000000003:VCPU=1") {
		t.Fatalf("rpctl: %v %v, want compute's VCPU with the sharing child's DISK_GB", got, err)
	}
	if err := agreeWithOracle(in, m, req); err != nil {
		t.Fatal(err)
	}
}
