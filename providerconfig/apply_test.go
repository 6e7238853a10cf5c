package providerconfig_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/internal/placementtest"
	"github.com/rpctl/rpctl/internal/testdb"
	"github.com/rpctl/rpctl/inventory"
	"github.com/rpctl/rpctl/providerconfig"
	"github.com/rpctl/rpctl/storage/placementdb"
)

const (
	cn1   = "11111111-1111-4111-8111-111111111111"
	cn2   = "22222222-2222-4222-8222-222222222222"
	numa  = "33333333-3333-4333-8333-333333333333"
	other = "44444444-4444-4444-8444-444444444444"
	mv    = "1.39"
)

const providerYAML = `meta:
  schema_version: '1.0'
providers:
  - identification:
      uuid: '$COMPUTE_NODE'
    inventories:
      additional:
        - CUSTOM_LICENSE_WINDOWS:
            total: 8
            allocation_ratio: 1.1
    traits:
      additional:
        - CUSTOM_RACK_A
  - identification:
      name: 'cn2'
    inventories:
      additional:
        - CUSTOM_FPGA:
            total: 4
            reserved: 1
            max_unit: 2
            step_size: 2
    traits:
      additional: [CUSTOM_FPGA_XILINX]
  - identification:
      uuid: '` + numa + `'
    inventories:
      additional:
        - CUSTOM_NUMA_BW: {total: 100}
  - identification:
      name: 'not-in-placement'
    traits:
      additional: [CUSTOM_GHOST]
`

// TestApplyThroughRealPlacement writes providers through the real
// placement-api, applies a provider config on the database, and asks the
// real API what it now shows; a second apply must change nothing, not even
// a generation.
func TestApplyThroughRealPlacement(t *testing.T) {
	ctx := context.Background()
	fresh := placementtest.New(t)
	db, base := fresh.DB, fresh.Base
	do := func(method, path, body string) []byte {
		t.Helper()
		code, b := testdb.PlacementDo(t, method, base, path, mv, body)
		if code >= 300 {
			t.Fatalf("%s %s: %d %s", method, path, code, b)
		}
		return b
	}
	for _, p := range [][3]string{{"cn1", cn1, ""}, {"cn2", cn2, ""}, {"cn1-numa0", numa, cn1}, {"storage", other, ""}} {
		body := fmt.Sprintf(`{"name": %q, "uuid": %q}`, p[0], p[1])
		if p[2] != "" {
			body = fmt.Sprintf(`{"name": %q, "uuid": %q, "parent_provider_uuid": %q}`, p[0], p[1], p[2])
		}
		do("POST", "/resource_providers", body)
	}
	// cn1 and cn2 are compute nodes (nova-compute gives them the trait);
	// cn1 has a driver-owned VCPU inventory and an operator's trait.
	do("PUT", "/resource_providers/"+cn1+"/traits", `{"resource_provider_generation": 0, "traits": ["COMPUTE_NODE", "HW_CPU_X86_AVX2"]}`)
	do("PUT", "/resource_providers/"+cn2+"/traits", `{"resource_provider_generation": 0, "traits": ["COMPUTE_NODE"]}`)
	do("PUT", "/resource_providers/"+cn1+"/inventories", `{"resource_provider_generation": 1, "inventories": {"VCPU": {"total": 16, "allocation_ratio": 4.0}}}`)

	dir := t.TempDir()
	path := filepath.Join(dir, "provider.yaml")
	os.WriteFile(path, []byte(providerYAML), 0o600)
	cfg, err := providerconfig.Load([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	st := placementdb.New(db)
	apply := func() (*providerconfig.Plan, *providerconfig.Result) {
		pl, err := providerconfig.MakePlan(ctx, st, cfg)
		if err != nil {
			t.Fatal(err)
		}
		res, err := providerconfig.Apply(ctx, st, pl)
		if err != nil {
			t.Fatal(err)
		}
		return pl, res
	}
	pl, res := apply()
	if len(pl.Skipped) != 1 || !strings.Contains(pl.Skipped[0], `providers[3] (name "not-in-placement")`) {
		t.Errorf("skipped %q", pl.Skipped)
	}
	if res.Written != 3 || len(res.Failed) != 0 || len(res.ClassesCreated) != 3 || len(res.TraitsCreated) != 2 {
		t.Errorf("first apply: %+v", res)
	}

	type invBody struct {
		Generation  int64                     `json:"resource_provider_generation"`
		Inventories map[string]map[string]any `json:"inventories"`
	}
	type traitBody struct {
		Generation int64    `json:"resource_provider_generation"`
		Traits     []string `json:"traits"`
	}
	get := func(uuid string) (invBody, traitBody) {
		var ib invBody
		var tb traitBody
		json.Unmarshal(do("GET", "/resource_providers/"+uuid+"/inventories", ""), &ib)
		json.Unmarshal(do("GET", "/resource_providers/"+uuid+"/traits", ""), &tb)
		return ib, tb
	}
	ib, tb := get(cn1)
	if lic := ib.Inventories["CUSTOM_LICENSE_WINDOWS"]; lic == nil || lic["total"] != 8.0 || lic["max_unit"] != 2147483647.0 || ib.Inventories["VCPU"]["total"] != 16.0 {
		t.Errorf("cn1 inventories %v", ib.Inventories)
	}
	if !sameSet(tb.Traits, []string{"COMPUTE_NODE", "CUSTOM_RACK_A", "HW_CPU_X86_AVX2"}) {
		t.Errorf("cn1 traits %v", tb.Traits)
	}
	// cn2 is named explicitly, so $COMPUTE_NODE leaves it alone.
	ib2, tb2 := get(cn2)
	if f := ib2.Inventories["CUSTOM_FPGA"]; f == nil || f["reserved"] != 1.0 || f["step_size"] != 2.0 || ib2.Inventories["CUSTOM_LICENSE_WINDOWS"] != nil {
		t.Errorf("cn2 inventories %v", ib2.Inventories)
	}
	if !sameSet(tb2.Traits, []string{"COMPUTE_NODE", "CUSTOM_FPGA_XILINX"}) {
		t.Errorf("cn2 traits %v", tb2.Traits)
	}
	ib3, _ := get(numa)
	if ib3.Inventories["CUSTOM_NUMA_BW"] == nil || ib3.Inventories["CUSTOM_LICENSE_WINDOWS"] != nil {
		t.Errorf("numa child inventories %v (a child is no $COMPUTE_NODE root)", ib3.Inventories)
	}
	ib4, _ := get(other)
	if len(ib4.Inventories) != 0 {
		t.Errorf("storage provider touched: %v", ib4.Inventories)
	}
	var classes struct {
		ResourceClasses []struct{ Name string } `json:"resource_classes"`
	}
	json.Unmarshal(do("GET", "/resource_classes", ""), &classes)
	n := 0
	for _, c := range classes.ResourceClasses {
		if strings.HasPrefix(c.Name, "CUSTOM_") {
			n++
		}
	}
	if n != 3 {
		t.Errorf("%d custom classes in Placement, want 3", n)
	}

	// The same files again: every change "unchanged", nothing written, no
	// generation moves.
	before := map[string][2]int64{}
	for _, u := range []string{cn1, cn2, numa} {
		ib, tb := get(u)
		before[u] = [2]int64{ib.Generation, tb.Generation}
	}
	pl, res = apply()
	for _, c := range pl.Changes {
		if c.Action != "unchanged" {
			t.Errorf("second apply: %s %s %s: %s", c.Provider.Name, c.Kind, c.Name, c.Action)
		}
	}
	if res.Written != 0 || res.Unchanged != 3 || len(pl.NewClasses)+len(pl.NewTraits) != 0 {
		t.Errorf("second apply: %+v, plan classes %v traits %v", res, pl.NewClasses, pl.NewTraits)
	}
	for _, u := range []string{cn1, cn2, numa} {
		ib, tb := get(u)
		if g := [2]int64{ib.Generation, tb.Generation}; g != before[u] {
			t.Errorf("%s: generation %v -> %v on a second apply", u, before[u], g)
		}
	}

	// Name and uuid of one provider in two entries: Nova refuses it.
	os.WriteFile(filepath.Join(dir, "z-dup.yaml"), []byte("meta:\n  schema_version: '1.0'\nproviders:\n  - identification:\n      uuid: '"+cn2+"'\n    traits:\n      additional: [CUSTOM_Z]\n"), 0o600)
	cfg2, err := providerconfig.Load([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := providerconfig.MakePlan(ctx, st, cfg2); err == nil || !strings.Contains(err.Error(), "z-dup.yaml: providers[0]") || !strings.Contains(err.Error(), "both its name and its uuid") {
		t.Errorf("name+uuid: %v", err)
	}
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	m := map[string]bool{}
	for _, x := range a {
		m[x] = true
	}
	for _, x := range b {
		if !m[x] {
			return false
		}
	}
	return true
}

// racingStore is the database store with a writer that changes one
// provider between the batch's read and its write, in the inventories'
// batch and in the traits' one.
type racingStore struct {
	*placementdb.Store
	victim     string
	inv, trait int // batches seen
	racedInv   bool
	racedTrait bool
	t          *testing.T
}

func (s *racingStore) ReplaceInventoriesBatch(ctx context.Context, ws []inventory.InventoryReplace) (int, error) {
	if s.inv++; s.inv == 1 {
		s.race(ctx)
		s.racedInv = true
	}
	return s.Store.ReplaceInventoriesBatch(ctx, ws)
}

func (s *racingStore) SetProviderTraitsBatch(ctx context.Context, ws []inventory.TraitsSet) (int, error) {
	if s.trait++; s.trait == 1 {
		s.race(ctx)
		s.racedTrait = true
	}
	return s.Store.SetProviderTraitsBatch(ctx, ws)
}

// race gives the victim a new generation, as a nova-compute's write would.
func (s *racingStore) race(ctx context.Context) {
	gen, have, err := s.Store.ProviderTraits(ctx, s.victim)
	if err == nil {
		_, err = s.Store.SetProviderTraits(ctx, s.victim, gen, append(have, "CUSTOM_RACER"))
	}
	if err == nil {
		gen, have, err = s.Store.ProviderTraits(ctx, s.victim)
	}
	if err == nil {
		_, err = s.Store.SetProviderTraits(ctx, s.victim, gen, slices.DeleteFunc(have, func(t string) bool { return t == "CUSTOM_RACER" }))
	}
	if err != nil {
		s.t.Fatal(err)
	}
}

// TestApplyBatchesRetryAConflict (issue 35): on MariaDB provider apply
// writes its providers as batches, inventories then traits; a provider
// another writer changed between the batch's read and its write is made
// again alone (re-read, written at its new generation), the providers
// after it in the batch still go as a batch, and every provider ends with
// the entry's inventory and trait at the generation two PUTs leave.
func TestApplyBatchesRetryAConflict(t *testing.T) {
	ctx := context.Background()
	p := placementtest.NewDB(t)
	base := placementdb.New(p.DB)
	var uuids []string
	for i := range 6 {
		u := fmt.Sprintf("5%07d-0000-4000-8000-000000000000", i)
		uuids = append(uuids, u)
		if _, err := base.CreateProvider(ctx, inventory.ProviderSpec{Name: fmt.Sprintf("cn%d", i), UUID: u}); err != nil {
			t.Fatal(err)
		}
		if _, err := base.SetProviderTraits(ctx, u, 0, []string{"COMPUTE_NODE"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := base.CreateTrait(ctx, "CUSTOM_RACER"); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "p.yaml"), []byte("meta:\n  schema_version: '1.0'\nproviders:\n  - identification:\n      uuid: '$COMPUTE_NODE'\n"+
		"    inventories:\n      additional:\n        - CUSTOM_LICENSE: {total: 4}\n    traits:\n      additional: [CUSTOM_RACK_A]\n"), 0o600)
	cfg, err := providerconfig.Load([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	st := &racingStore{Store: base, victim: uuids[2], t: t}
	pl, err := providerconfig.MakePlan(ctx, st, cfg)
	if err != nil {
		t.Fatal(err)
	}
	res, err := providerconfig.Apply(ctx, st, pl)
	if err != nil {
		t.Fatal(err)
	}
	if !st.racedInv || !st.racedTrait {
		t.Fatalf("the batches were not used (inventories %v, traits %v): not MariaDB?", st.racedInv, st.racedTrait)
	}
	if res.Written != 6 || len(res.Failed) != 0 {
		t.Errorf("result %+v, want 6 written", res)
	}
	for _, u := range uuids {
		gen, inv, err := base.Inventories(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		_, traits, err := base.ProviderTraits(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		// COMPUTE_NODE (1), the entry's inventories and traits (2 more),
		// and the racer's two writes on the victim.
		want := int64(3)
		if u == st.victim {
			want += 4
		}
		if inv["CUSTOM_LICENSE"].Total != 4 || !slices.Contains(traits, "CUSTOM_RACK_A") || !slices.Contains(traits, "COMPUTE_NODE") || slices.Contains(traits, "CUSTOM_RACER") || gen != want {
			t.Errorf("%s: generation %d (want %d), inventories %v, traits %v", u, gen, want, inv, traits)
		}
	}
}
