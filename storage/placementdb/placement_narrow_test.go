package placementdb_test

import (
	"context"
	"testing"

	"github.com/rpctl/rpctl/candidates"
	"github.com/rpctl/rpctl/storage/placementdb"
)

// TestLoadPlacementNarrowed: the narrowed read answers every query exactly
// as the full one (body, summaries, errors), on SQLite and MariaDB, and
// leaves providers out where the query allows it; LoadPlacementFor, below
// NarrowFrom providers, reads everything in the same transaction and
// answers the same. The cloud has trees, sharing providers (DISK_GB, in
// one aggregate each) and usage.
func TestLoadPlacementNarrowed(t *testing.T) {
	ctx := context.Background()
	in := candidates.ScaleInput(400)
	full, err := candidates.NewModel(in)
	if err != nil {
		t.Fatal(err)
	}
	tree := candidates.SyntheticUUID(7, 8) // compute-2's root
	for _, tc := range []struct {
		name, query string
		narrowed    bool
	}{
		{"trait on some hosts", "resources=VCPU:2,MEMORY_MB:4096&required=CUSTOM_RACK_A", true},
		{"trait any-of", "resources=VCPU:1&required=in:CUSTOM_RACK_A,CUSTOM_RACK_B", true},
		{"member_of", "resources=VCPU:1&member_of=" + candidates.SyntheticUUID(5, 3), true},
		{"member_of any-of", "resources=VCPU:1&member_of=in:" + candidates.SyntheticUUID(5, 3) + "," + candidates.SyntheticUUID(5, 4), true},
		{"in_tree", "resources=VCPU:1&in_tree=" + tree, true},
		// A later group's new class must not take the number of an
		// earlier group's member_of condition.
		{"member_of, then a class of a later group", "resources=VCPU:1&member_of=" + candidates.SyntheticUUID(5, 3) + "&resources1=SRIOV_NET_VF:1&group_policy=none", true},
		{"in_tree granular", "resources1=SRIOV_NET_VF:1&in_tree1=" + tree + "&resources=VCPU:1&group_policy=none", true},
		{"capacity", "resources=VCPU:31", true},
		// One class in two groups: the larger amount narrows, whichever
		// group asks it.
		{"capacity of a class in two groups", "resources1=VCPU:1&resources2=VCPU:31&group_policy=none", true},
		{"capacity of a class in two groups, larger first", "resources1=VCPU:31,MEMORY_MB:512&resources2=VCPU:1&group_policy=isolate", true},
		{"summaries keep whole trees", "resources=SRIOV_NET_VF:1&required=CUSTOM_PHYSNET1&resources1=VCPU:2&required1=HW_NUMA_ROOT&group_policy=isolate&limit=5", false},
		{"same_subtree", "resources_A=VCPU:20&resources_B=SRIOV_NET_VF:1&same_subtree=_A,_B&group_policy=none&required_A=HW_NUMA_ROOT", true},
		{"sharing class not narrowed", "resources=DISK_GB:50000", false},
		{"sharing and own", "resources=DISK_GB:500,VCPU:1&required=CUSTOM_RACK_A", true},
		{"old microversion", "resources=VCPU:1&required=CUSTOM_RACK_A", true},
		{"unknown trait: full read, same 400", "resources=VCPU:1&required=CUSTOM_NOPE", false},
		{"unknown class: full read, same 400", "resources=CUSTOM_NOPE:1", false},
		{"unknown aggregate", "resources=VCPU:1&member_of=" + candidates.SyntheticUUID(9, 9), true},
		{"unknown in_tree", "resources=VCPU:1&in_tree=" + candidates.SyntheticUUID(9, 9), true},
		{"nothing fits", "resources=VCPU:1000", true},
	} {
		for name, db := range placementDBs(t) {
			t.Run(tc.name+"/"+name, func(t *testing.T) {
				if err := placementdb.WriteSyntheticPlacement(ctx, db, in); err != nil {
					t.Fatal(err)
				}
				req, err := candidates.ParseQuery(tc.query, candidates.MaxMicroversion)
				if tc.name == "old microversion" {
					req, err = candidates.ParseQuery(tc.query, 25)
				}
				if err != nil {
					t.Fatal(err)
				}
				// Narrowing forced (0), at the cloud's own size (the
				// bound is inclusive), and left to LoadPlacementFor,
				// which does not narrow a cloud this small.
				for _, from := range []int{0, full.NumProviders(), -1} {
					var got *candidates.Model
					if from < 0 {
						got, err = placementdb.LoadPlacementFor(ctx, db, req)
					} else {
						var in *candidates.ModelInput
						if in, err = placementdb.LoadPlacementModelFor(ctx, db, req, from); err == nil {
							got, err = candidates.NewModel(in)
						}
					}
					if err != nil {
						t.Fatal(err)
					}
					want := tc.narrowed && from >= 0
					if narrowed := got.NumProviders() < full.NumProviders(); narrowed != want {
						t.Errorf("narrowing from %d: read %d of %d providers, want narrowed %v", from, got.NumProviders(), full.NumProviders(), want)
					}
					if a, b := answerReq(t, full, req), answerReq(t, got, req); a != b {
						t.Errorf("narrowing from %d: answer differs:\nnarrowed: %.400s\nfull:     %.400s", from, b, a)
					}
				}
			})
		}
	}
}

func answerReq(t *testing.T, m *candidates.Model, req *candidates.Request) string {
	t.Helper()
	r, err := m.Search(context.Background(), req, candidates.Options{})
	if err != nil {
		return "error: " + err.Error()
	}
	b, err := r.MarshalPlacement(req.Microversion)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
