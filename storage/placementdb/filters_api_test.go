package placementdb_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/rpctl/rpctl/internal/placementtest"
	"github.com/rpctl/rpctl/inventory"
	"github.com/rpctl/rpctl/placementclient"
	"github.com/rpctl/rpctl/storage/placementdb"
)

// TestProviderFiltersMatchPlacementAPI sends each provider-list filter, most
// of them bad, to the real placement-api (through rpctl's API store) and to
// the database store over the same database: both must answer the same
// status and byte-identical message, or the same providers. It includes the
// cases where Placement's query ends early with no providers (an unknown
// in_tree provider, required traits or member_of aggregates nobody has), so
// a later unknown trait or class is never reported.
func TestProviderFiltersMatchPlacementAPI(t *testing.T) {
	ctx := context.Background()
	pl := placementtest.New(t)
	client, err := placementclient.New(ctx, placementclient.Config{Endpoint: pl.Base, Auth: placementclient.StaticToken("admin")})
	if err != nil {
		t.Fatal(err)
	}
	api, db := placementclient.Store{C: client}, placementdb.New(pl.DB)
	const (
		cn1   = "11111111-1111-4111-8111-111111111111"
		agg   = "aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa"
		other = "bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb"
		nope  = "99999999-9999-4999-8999-999999999999"
	)
	p, err := api.CreateProvider(ctx, inventory.ProviderSpec{Name: "cn1", UUID: cn1})
	if err != nil {
		t.Fatal(err)
	}
	gen, err := api.ReplaceInventories(ctx, cn1, p.Generation, map[string]inventory.Inventory{
		"VCPU": {Total: 8, MinUnit: 1, MaxUnit: 8, StepSize: 1, AllocationRatio: 1},
	})
	if err != nil {
		t.Fatal(err)
	}
	if gen, err = api.SetProviderTraits(ctx, cn1, gen, []string{"HW_CPU_X86_AVX2"}); err != nil {
		t.Fatal(err)
	}
	if _, err = api.SetProviderAggregates(ctx, cn1, gen, []string{agg}); err != nil {
		t.Fatal(err)
	}
	type F = inventory.ProviderFilter
	for _, c := range []struct {
		name string
		f    F
	}{
		{"uuid", F{UUID: "not-a-uuid"}},
		{"uuid quoted", F{UUID: "it's"}},
		{"uuid both quotes", F{UUID: `it's "x"`}},
		{"uuid escapes", F{UUID: "é\x01\t"}},
		{"in_tree", F{InTree: "bad"}},
		{"uuid before in_tree", F{InTree: "tree", UUID: "one"}},
		{"member_of", F{MemberOf: []string{"bad"}}},
		{"member_of empty", F{MemberOf: []string{""}}},
		{"member_of list without in:", F{MemberOf: []string{agg + "," + other}}},
		{"member_of forbidden list without in:", F{MemberOf: []string{"!" + agg + "," + other}}},
		{"member_of in: bad", F{MemberOf: []string{"in:" + agg + ",zzz"}}},
		{"member_of !in: bad", F{MemberOf: []string{"!in:" + agg + ",zzz"}}},
		{"member_of in: empty", F{MemberOf: []string{"in:"}}},
		{"member_of second bad", F{MemberOf: []string{agg, "!x"}}},
		{"member_of before required", F{MemberOf: []string{"x"}, Required: []string{""}}},
		{"required empty", F{Required: []string{""}}},
		{"required !", F{Required: []string{"!"}}},
		{"required !!!", F{Required: []string{"HW_CPU_X86_AVX2, !!!"}}},
		{"required empty item", F{Required: []string{"HW_CPU_X86_AVX2,,"}}},
		{"required in: empty", F{Required: []string{"in:"}}},
		{"required in: empty item", F{Required: []string{"in:HW_CPU_X86_AVX2, "}}},
		{"required in: forbidden", F{Required: []string{"in:!HW_CPU_X86_AVX2"}}},
		{"required second bad", F{Required: []string{"HW_CPU_X86_AVX2", "in:"}}},
		{"required before resources", F{Required: []string{""}, Resources: "VCPU"}},
		{"required unknown", F{Required: []string{"CUSTOM_NOPE"}}},
		{"required unknown after spaces and !", F{Required: []string{" HW_CPU_X86_AVX2 , !!CUSTOM_NOPE "}}},
		{"required first unknown named", F{Required: []string{"CUSTOM_B_NOPE,CUSTOM_A_NOPE"}}},
		{"required in: unknown", F{Required: []string{"in:CUSTOM_NOPE"}}},
		{"forbidden unknown", F{Required: []string{"!CUSTOM_NOPE"}}},
		{"required before forbidden unknown", F{Required: []string{"!CUSTOM_F_NOPE", "CUSTOM_R_NOPE"}}},
		{"required nobody has hides unknown forbidden", F{Required: []string{"HW_CPU_X86_SSE42,!CUSTOM_NOPE"}}},
		{"required nobody has hides unknown class", F{Required: []string{"HW_CPU_X86_SSE42"}, Resources: "CUSTOM_NOPE:1"}},
		{"forbidden unknown before unknown class", F{Required: []string{"!CUSTOM_NOPE"}, Resources: "CUSTOM_NOPE:1"}},
		{"member_of nobody has hides unknown class", F{MemberOf: []string{other}, Resources: "CUSTOM_NOPE:1"}},
		{"member_of unknown forbidden: class checked", F{MemberOf: []string{"!" + other}, Resources: "CUSTOM_NOPE:1"}},
		{"in_tree unknown hides unknown trait", F{InTree: nope, Required: []string{"CUSTOM_NOPE"}}},
		{"uuid unknown: trait still checked", F{UUID: nope, Required: []string{"CUSTOM_NOPE"}}},
		{"resources blank", F{Resources: "  "}},
		{"resources no amount", F{Resources: "VCPU"}},
		{"resources second item", F{Resources: "VCPU:1,MEMORY_MB"}},
		{"resources two colons", F{Resources: "VCPU:1:2"}},
		{"resources not a number", F{Resources: "VCPU:x"}},
		{"resources float", F{Resources: "VCPU:1.5"}},
		{"resources zero", F{Resources: "VCPU:0"}},
		{"resources negative", F{Resources: "VCPU:-05"}},
		{"resources signed zero", F{Resources: "VCPU:+0"}},
		{"resources empty class", F{Resources: ":1"}},
		{"resources unknown class", F{Resources: "CUSTOM_NOPE:1"}},
		{"resources first unknown class", F{Resources: "VCPU:1,CUSTOM_B:1,CUSTOM_A:1"}},
		{"resources spaced class", F{Resources: " VCPU:1"}},
		{"resources Python int", F{Resources: "VCPU: 2 ,DISK_GB:1_0"}},
		{"resources repeated class, last wins", F{Resources: "VCPU:99,VCPU:1"}},
		{"resources huge", F{Resources: "VCPU:99999999999999999999"}},
		{"resources huge unknown class", F{Resources: "CUSTOM_NOPE:99999999999999999999"}},
		{"resources fits", F{Resources: "VCPU:8"}},
		{"resources does not fit", F{Resources: "VCPU:9"}},
		{"all good", F{Name: "cn1", UUID: cn1, InTree: cn1, MemberOf: []string{agg, "!" + other}, Required: []string{"HW_CPU_X86_AVX2,!HW_CPU_X86_SSE42"}, Resources: "VCPU:2"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			want, wantErr := api.ListProviders(ctx, c.f)
			got, gotErr := db.ListProviders(ctx, c.f)
			var we, ge *inventory.Error
			switch {
			case wantErr == nil && gotErr == nil:
				if !slices.Equal(uuids(want), uuids(got)) {
					t.Errorf("providers: Placement %v, database %v", uuids(want), uuids(got))
				}
			case !errors.As(wantErr, &we):
				t.Fatalf("Placement: %v (database: %v)", wantErr, gotErr)
			case !errors.As(gotErr, &ge):
				t.Errorf("Placement %d %q; database: %v", we.Status, we.Message, gotErr)
			case we.Status != ge.Status || we.Message != ge.Message || we.Kind != ge.Kind:
				t.Errorf("Placement %d %q\n        database  %d %q", we.Status, we.Message, ge.Status, ge.Message)
			}
		})
	}
}

func uuids(ps []inventory.Provider) []string {
	out := []string{}
	for _, p := range ps {
		out = append(out, p.UUID)
	}
	return out
}
