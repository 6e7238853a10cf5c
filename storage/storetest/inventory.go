// Package storetest holds the conformance suites every implementation of a
// domain's store must pass, as golang-migrate's driver suite does: the
// database packages under storage/ and placementclient run the same suite,
// each against the real placement-api as the reference.
package storetest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/internal/placementtest"
	"github.com/rpctl/rpctl/internal/testdb"
	"github.com/rpctl/rpctl/inventory"
	"github.com/rpctl/rpctl/storage"
)

const mv = "1.39"

const (
	cn1   = "11111111-1111-4111-8111-111111111111"
	cn2   = "22222222-2222-4222-8222-222222222222"
	numa  = "33333333-3333-4333-8333-333333333333"
	agg1  = "aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa"
	agg2  = "bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb"
	cons1 = "cccccccc-cccc-4ccc-8ccc-cccccccccccc"
	cons2 = "c2c2c2c2-cccc-4ccc-8ccc-cccccccccccc"
	proj  = "dddddddd-dddd-4ddd-8ddd-dddddddddddd"
)

// step is one edit: the request sent to the reference API, and the same
// edit through rpctl's database store. setup steps go through the API on
// both copies (allocations, which the store does not write).
type step struct {
	name               string
	method, path, body string
	store              func(ctx context.Context, s inventory.Store) error
	setup              bool
}

func inv(total, reserved, minU, maxU, step int64, ratio float64) inventory.Inventory {
	return inventory.Inventory{Total: total, Reserved: reserved, MinUnit: minU, MaxUnit: maxU, StepSize: step, AllocationRatio: ratio}
}

func editScript() []step {
	ctx := func(f func(s inventory.Store) error) func(context.Context, inventory.Store) error {
		return func(_ context.Context, s inventory.Store) error { return f(s) }
	}
	bg := context.Background()
	create := func(name, uuid, parent string) step {
		body := fmt.Sprintf(`{"name": %q, "uuid": %q}`, name, uuid)
		if parent != "" {
			body = fmt.Sprintf(`{"name": %q, "uuid": %q, "parent_provider_uuid": %q}`, name, uuid, parent)
		}
		return step{name: "create " + name, method: "POST", path: "/resource_providers", body: body,
			store: ctx(func(s inventory.Store) error {
				_, err := s.CreateProvider(bg, inventory.ProviderSpec{Name: name, UUID: uuid, ParentUUID: parent})
				return err
			})}
	}
	putInv := func(name, uuid string, gen int64, body string, m map[string]inventory.Inventory) step {
		return step{name: name, method: "PUT", path: "/resource_providers/" + uuid + "/inventories",
			body:  fmt.Sprintf(`{"resource_provider_generation": %d, "inventories": %s}`, gen, body),
			store: ctx(func(s inventory.Store) error { _, err := s.ReplaceInventories(bg, uuid, gen, m); return err })}
	}
	putTraits := func(name, uuid string, gen int64, traits ...string) step {
		b, _ := json.Marshal(traits)
		if traits == nil {
			b = []byte("[]")
		}
		return step{name: name, method: "PUT", path: "/resource_providers/" + uuid + "/traits",
			body:  fmt.Sprintf(`{"resource_provider_generation": %d, "traits": %s}`, gen, b),
			store: ctx(func(s inventory.Store) error { _, err := s.SetProviderTraits(bg, uuid, gen, traits); return err })}
	}
	putAggs := func(name, uuid string, gen int64, aggs ...string) step {
		b, _ := json.Marshal(aggs)
		if aggs == nil {
			b = []byte("[]")
		}
		return step{name: name, method: "PUT", path: "/resource_providers/" + uuid + "/aggregates",
			body:  fmt.Sprintf(`{"resource_provider_generation": %d, "aggregates": %s}`, gen, b),
			store: ctx(func(s inventory.Store) error { _, err := s.SetProviderAggregates(bg, uuid, gen, aggs); return err })}
	}
	std := func(total int64) inventory.Inventory { return inv(total, 0, 1, inventory.MaxInt, 1, 1.0) }
	return []step{
		create("cn1", cn1, ""),
		create("cn2", cn2, ""),
		create("cn1_numa0", numa, cn1),
		create("dup name", "44444444-4444-4444-8444-444444444444", ""), // 409 below via name reuse
		{name: "create duplicate name", method: "POST", path: "/resource_providers", body: `{"name": "cn1"}`,
			store: ctx(func(s inventory.Store) error {
				_, err := s.CreateProvider(bg, inventory.ProviderSpec{Name: "cn1"})
				return err
			})},
		{name: "create with unknown parent", method: "POST", path: "/resource_providers",
			body: `{"name": "orphan", "uuid": "55555555-5555-4555-8555-555555555555", "parent_provider_uuid": "66666666-6666-4666-8666-666666666666"}`,
			store: ctx(func(s inventory.Store) error {
				_, err := s.CreateProvider(bg, inventory.ProviderSpec{Name: "orphan", UUID: "55555555-5555-4555-8555-555555555555", ParentUUID: "66666666-6666-4666-8666-666666666666"})
				return err
			})},
		putInv("set cn1", cn1, 0, `{"VCPU": {"total": 16, "allocation_ratio": 4.0, "max_unit": 16}, "MEMORY_MB": {"total": 65536, "reserved": 512, "allocation_ratio": 1.5}, "DISK_GB": {"total": 1000}}`,
			map[string]inventory.Inventory{"VCPU": inv(16, 0, 1, 16, 1, 4.0), "MEMORY_MB": inv(65536, 512, 1, inventory.MaxInt, 1, 1.5), "DISK_GB": std(1000)}),
		putInv("stale generation", cn1, 0, `{"VCPU": {"total": 8}}`, map[string]inventory.Inventory{"VCPU": std(8)}),
		putInv("reserved above total", cn1, 1, `{"VCPU": {"total": 8, "reserved": 9}}`, map[string]inventory.Inventory{"VCPU": inv(8, 9, 1, inventory.MaxInt, 1, 1)}),
		putInv("reserved equals total", cn2, 0, `{"VCPU": {"total": 8, "reserved": 8}}`, map[string]inventory.Inventory{"VCPU": inv(8, 8, 1, inventory.MaxInt, 1, 1)}),
		putInv("unknown class", cn2, 1, `{"CUSTOM_NOPE": {"total": 8}}`, map[string]inventory.Inventory{"CUSTOM_NOPE": std(8)}),
		putInv("unknown provider", "77777777-7777-4777-8777-777777777777", 0, `{"VCPU": {"total": 8}}`, map[string]inventory.Inventory{"VCPU": std(8)}),
		putInv("ratio 1.1 float", cn2, 1, `{"VCPU": {"total": 10, "allocation_ratio": 1.1}, "MEMORY_MB": {"total": 2048, "min_unit": 2, "step_size": 2}}`,
			map[string]inventory.Inventory{"VCPU": inv(10, 0, 1, inventory.MaxInt, 1, 1.1), "MEMORY_MB": inv(2048, 0, 2, inventory.MaxInt, 2, 1)}),
		{name: "allocate on cn1", setup: true, method: "PUT", path: "/allocations/" + cons1,
			body: fmt.Sprintf(`{"allocations": {%q: {"resources": {"VCPU": 8, "MEMORY_MB": 4096}}}, "project_id": %q, "user_id": %q, "consumer_generation": null, "consumer_type": "INSTANCE"}`, cn1, proj, proj)},
		putInv("delete class in use", cn1, 2, `{"DISK_GB": {"total": 1000}}`, map[string]inventory.Inventory{"DISK_GB": std(1000)}),
		putInv("lower capacity below usage", cn1, 2, `{"VCPU": {"total": 4}, "MEMORY_MB": {"total": 65536, "reserved": 512, "allocation_ratio": 1.5}}`,
			map[string]inventory.Inventory{"VCPU": std(4), "MEMORY_MB": inv(65536, 512, 1, inventory.MaxInt, 1, 1.5)}),
		putInv("same again bumps generation", cn1, 3, `{"VCPU": {"total": 4}, "MEMORY_MB": {"total": 65536, "reserved": 512, "allocation_ratio": 1.5}}`,
			map[string]inventory.Inventory{"VCPU": std(4), "MEMORY_MB": inv(65536, 512, 1, inventory.MaxInt, 1, 1.5)}),
		{name: "create custom class", method: "PUT", path: "/resource_classes/CUSTOM_GPU",
			store: ctx(func(s inventory.Store) error { _, err := s.CreateResourceClass(bg, "CUSTOM_GPU"); return err })},
		{name: "create custom class again", method: "PUT", path: "/resource_classes/CUSTOM_GPU",
			store: ctx(func(s inventory.Store) error { _, err := s.CreateResourceClass(bg, "CUSTOM_GPU"); return err })},
		{name: "create non-custom class", method: "PUT", path: "/resource_classes/GPU",
			store: ctx(func(s inventory.Store) error { _, err := s.CreateResourceClass(bg, "GPU"); return err })},
		{name: "create second custom class", method: "PUT", path: "/resource_classes/CUSTOM_FPGA",
			store: ctx(func(s inventory.Store) error { _, err := s.CreateResourceClass(bg, "CUSTOM_FPGA"); return err })},
		putInv("custom class on numa", numa, 0, `{"CUSTOM_GPU": {"total": 2}}`, map[string]inventory.Inventory{"CUSTOM_GPU": std(2)}),
		{name: "delete class with inventory", method: "DELETE", path: "/resource_classes/CUSTOM_GPU",
			store: ctx(func(s inventory.Store) error { return s.DeleteResourceClass(bg, "CUSTOM_GPU") })},
		{name: "delete standard class", method: "DELETE", path: "/resource_classes/VCPU",
			store: ctx(func(s inventory.Store) error { return s.DeleteResourceClass(bg, "VCPU") })},
		{name: "delete unknown class", method: "DELETE", path: "/resource_classes/CUSTOM_NONE",
			store: ctx(func(s inventory.Store) error { return s.DeleteResourceClass(bg, "CUSTOM_NONE") })},
		{name: "delete custom class", method: "DELETE", path: "/resource_classes/CUSTOM_FPGA",
			store: ctx(func(s inventory.Store) error { return s.DeleteResourceClass(bg, "CUSTOM_FPGA") })},
		{name: "create trait", method: "PUT", path: "/traits/CUSTOM_FAST",
			store: ctx(func(s inventory.Store) error { _, err := s.CreateTrait(bg, "CUSTOM_FAST"); return err })},
		{name: "create trait again", method: "PUT", path: "/traits/CUSTOM_FAST",
			store: ctx(func(s inventory.Store) error { _, err := s.CreateTrait(bg, "CUSTOM_FAST"); return err })},
		{name: "create bad trait", method: "PUT", path: "/traits/FAST",
			store: ctx(func(s inventory.Store) error { _, err := s.CreateTrait(bg, "FAST"); return err })},
		{name: "create second trait", method: "PUT", path: "/traits/CUSTOM_SLOW",
			store: ctx(func(s inventory.Store) error { _, err := s.CreateTrait(bg, "CUSTOM_SLOW"); return err })},
		putTraits("set traits", cn2, 2, "CUSTOM_FAST", "HW_CPU_X86_AVX2"),
		putTraits("set same traits keeps generation", cn2, 3, "HW_CPU_X86_AVX2", "CUSTOM_FAST"),
		putTraits("stale traits generation", cn2, 2, "CUSTOM_FAST"),
		putTraits("unknown trait", cn2, 3, "CUSTOM_NOPE"),
		putTraits("drop a trait", cn2, 3, "CUSTOM_FAST"),
		{name: "delete trait in use", method: "DELETE", path: "/traits/CUSTOM_FAST",
			store: ctx(func(s inventory.Store) error { return s.DeleteTrait(bg, "CUSTOM_FAST") })},
		{name: "delete standard trait", method: "DELETE", path: "/traits/HW_CPU_X86_AVX2",
			store: ctx(func(s inventory.Store) error { return s.DeleteTrait(bg, "HW_CPU_X86_AVX2") })},
		{name: "delete unknown trait", method: "DELETE", path: "/traits/CUSTOM_NONE",
			store: ctx(func(s inventory.Store) error { return s.DeleteTrait(bg, "CUSTOM_NONE") })},
		{name: "delete trait", method: "DELETE", path: "/traits/CUSTOM_SLOW",
			store: ctx(func(s inventory.Store) error { return s.DeleteTrait(bg, "CUSTOM_SLOW") })},
		putAggs("set aggregates", cn1, 4, agg1, agg2),
		putAggs("same aggregates bump generation", cn1, 5, agg2, agg1),
		putAggs("stale aggregates generation", cn1, 4, agg1),
		putAggs("bad aggregate uuid", cn1, 6, "not-a-uuid"),
		putAggs("drop an aggregate", cn1, 6, agg2),
		putAggs("aggregate on cn2", cn2, 4, agg1),
		{name: "delete provider with children", method: "DELETE", path: "/resource_providers/" + cn1,
			store: ctx(func(s inventory.Store) error { return s.DeleteProvider(bg, cn1) })},
		{name: "delete unknown provider", method: "DELETE", path: "/resource_providers/77777777-7777-4777-8777-777777777777",
			store: ctx(func(s inventory.Store) error { return s.DeleteProvider(bg, "77777777-7777-4777-8777-777777777777") })},
		{name: "delete child", method: "DELETE", path: "/resource_providers/" + numa,
			store: ctx(func(s inventory.Store) error { return s.DeleteProvider(bg, numa) })},
		{name: "delete provider with allocations", method: "DELETE", path: "/resource_providers/" + cn1,
			store: ctx(func(s inventory.Store) error { return s.DeleteProvider(bg, cn1) })},
		{name: "delete provider with inventory, traits and aggregates", method: "DELETE", path: "/resource_providers/" + cn2,
			store: ctx(func(s inventory.Store) error { return s.DeleteProvider(bg, cn2) })},
		// A second consumer type, for the grouped project usages (1.38).
		{name: "allocate a migration on cn1", setup: true, method: "PUT", path: "/allocations/" + cons2,
			body: fmt.Sprintf(`{"allocations": {%q: {"resources": {"MEMORY_MB": 1024}}}, "project_id": %q, "user_id": %q, "consumer_generation": null, "consumer_type": "MIGRATION"}`, cn1, proj, proj)},
	}
}

// status is the HTTP status a store error stands for.
func status(err error) int {
	var ie *inventory.Error
	if err == nil {
		return 200
	}
	if errors.As(err, &ie) {
		return ie.Status
	}
	return 500
}

func okStatus(code int) int {
	if code >= 200 && code < 300 {
		return 200
	}
	return code
}

// reads are the GETs compared after every step.
func reads(uuids []string) []string {
	out := []string{"/resource_providers", "/resource_classes", "/traits?name=startswith:CUSTOM_", "/resource_providers?member_of=" + agg1,
		"/resource_providers?required=CUSTOM_FAST", "/resource_providers?resources=VCPU:2", "/resource_providers?in_tree=" + cn1}
	for _, u := range uuids {
		for _, sub := range []string{"", "/inventories", "/usages", "/traits", "/aggregates", "/allocations"} {
			out = append(out, "/resource_providers/"+u+sub)
		}
	}
	return out
}

// InventoryStore is inventory.Store's conformance suite: it runs one script
// of edits through the real placement-api on one database and through the
// store newStore makes over a second copy, and after every step compares
// the statuses and error codes, every GET body the real API gives over both
// databases (generations included), and the rows.
func InventoryStore(t *testing.T, newStore func(placementtest.Placement) inventory.Store) {
	testdb.RequirePython(t, "placement")
	ref, ours := placementtest.New(t), placementtest.New(t)
	store := newStore(ours)
	ctx := context.Background()
	script := editScript()
	for i, st := range script {
		var want, got int
		want, wantBody := testdb.PlacementDo(t, st.method, ref.Base, st.path, mv, st.body)
		if st.setup {
			if want >= 300 {
				t.Fatalf("setup step %d %s: %d %s", i, st.name, want, wantBody)
			}
			got, _ = testdb.PlacementDo(t, st.method, ours.Base, st.path, mv, st.body)
		} else {
			err := st.store(ctx, store)
			got = status(err)
			var ie *inventory.Error
			if errors.As(err, &ie) && ie.Status == 409 {
				var pe struct {
					Errors []struct{ Code string } `json:"errors"`
				}
				json.Unmarshal(wantBody, &pe)
				if len(pe.Errors) == 1 && pe.Errors[0].Code != ie.Code {
					t.Errorf("step %d %s: code %s, placement-api says %s", i, st.name, ie.Code, pe.Errors[0].Code)
				}
			}
			if err != nil && got == 500 {
				t.Errorf("step %d %s: unexpected error %v", i, st.name, err)
			}
		}
		if okStatus(want) != okStatus(got) {
			t.Fatalf("step %d %s: status %d, placement-api answered %d: %s", i, st.name, got, want, wantBody)
		}
		if w, g := dumpRows(t, ref.DB), dumpRows(t, ours.DB); w != g {
			t.Fatalf("after step %d %s: rows differ\n%s", i, st.name, lineDiff(w, g))
		}
		// The API's view of both databases: every few steps (each read is
		// a round trip to two placement-api processes) and at the end.
		if i%4 != 3 && i != len(script)-1 {
			continue
		}
		for _, path := range reads([]string{cn1, cn2, numa, "44444444-4444-4444-8444-444444444444"}) {
			ws, wb := testdb.PlacementGet(t, ref.Base, path, mv)
			gs, gb := testdb.PlacementGet(t, ours.Base, path, mv)
			if ws != gs || !bytes.Equal(canonical(t, wb), canonical(t, gb)) {
				t.Fatalf("after step %d %s: GET %s\nplacement-api edit: %d %s\nrpctl edit:         %d %s", i, st.name, path, ws, wb, gs, gb)
			}
		}
	}
	storeReads(t, store, ours.Base)
}

// storeReads compares the store's ordered reads with the real API's
// answers over the same database, orders included: osc prints Placement's
// answers in their order, and rpctl prints the store's.
func storeReads(t *testing.T, store inventory.Store, base string) {
	t.Helper()
	ctx := context.Background()
	_, inv, err := store.ListInventories(ctx, cn1)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, v := range inv {
		got = append(got, fmt.Sprintf("%s %+v", v.Class, v.Inventory))
	}
	var want []string
	_, body := testdb.PlacementGet(t, base, "/resource_providers/"+cn1+"/inventories", mv)
	for _, kv := range orderedMembers(t, member(t, body, "inventories")) {
		var v inventory.Inventory
		if err := json.Unmarshal(kv.value, &v); err != nil {
			t.Fatal(err)
		}
		want = append(want, fmt.Sprintf("%s %+v", kv.key, v))
	}
	if !slices.Equal(got, want) {
		t.Errorf("inventories of %s: %q, placement-api %q", cn1, got, want)
	}

	_, allocs, err := store.ProviderAllocations(ctx, cn1)
	if err != nil {
		t.Fatal(err)
	}
	got, want = nil, nil
	for _, a := range allocs {
		g := "nil"
		if a.Generation != nil {
			g = fmt.Sprint(*a.Generation)
		}
		got = append(got, fmt.Sprintf("%s gen %s %v", a.Consumer, g, a.Resources))
	}
	_, body = testdb.PlacementGet(t, base, "/resource_providers/"+cn1+"/allocations", mv)
	for _, kv := range orderedMembers(t, member(t, body, "allocations")) {
		var gen int64
		json.Unmarshal(member(t, kv.value, "consumer_generation"), &gen)
		want = append(want, fmt.Sprintf("%s gen %d %v", kv.key, gen, classAmounts(t, member(t, kv.value, "resources"))))
	}
	if len(want) < 2 || !slices.Equal(got, want) {
		t.Errorf("allocations on %s: %q, placement-api %q", cn1, got, want)
	}

	for _, user := range []string{"", proj} {
		groups, err := store.ProjectUsages(ctx, proj, user)
		if err != nil {
			t.Fatal(err)
		}
		got, want = nil, nil
		for _, g := range groups {
			got = append(got, fmt.Sprintf("%s %d %v", g.ConsumerType, g.Consumers, g.Usages))
		}
		path := "/usages?project_id=" + proj
		if user != "" {
			path += "&user_id=" + user
		}
		_, body = testdb.PlacementGet(t, base, path, mv)
		for _, kv := range orderedMembers(t, member(t, body, "usages")) {
			var n int64
			json.Unmarshal(member(t, kv.value, "consumer_count"), &n)
			var u []inventory.ClassAmount
			for _, c := range classAmounts(t, kv.value) {
				if c.Class != "consumer_count" {
					u = append(u, c)
				}
			}
			want = append(want, fmt.Sprintf("%s %d %v", kv.key, n, u))
		}
		if len(want) < 2 || !slices.Equal(got, want) {
			t.Errorf("usages of project %s user %q: %q, placement-api %q", proj, user, got, want)
		}
	}
}

type jsonMember struct {
	key   string
	value json.RawMessage
}

// orderedMembers are a JSON object's members in their order.
func orderedMembers(t *testing.T, obj json.RawMessage) []jsonMember {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(obj))
	if _, err := dec.Token(); err != nil {
		t.Fatalf("%s: %v", obj, err)
	}
	var out []jsonMember
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		out = append(out, jsonMember{k.(string), v})
	}
	return out
}

func member(t *testing.T, obj json.RawMessage, key string) json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(obj, &m); err != nil {
		t.Fatalf("%s: %v", obj, err)
	}
	return m[key]
}

func classAmounts(t *testing.T, obj json.RawMessage) []inventory.ClassAmount {
	t.Helper()
	var out []inventory.ClassAmount
	for _, kv := range orderedMembers(t, obj) {
		var n int64
		if err := json.Unmarshal(kv.value, &n); err != nil {
			t.Fatal(err)
		}
		out = append(out, inventory.ClassAmount{Class: kv.key, Amount: n})
	}
	return out
}

// lineDiff shows the lines only one side has.
func lineDiff(want, got string) string {
	var b strings.Builder
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for _, l := range w {
		if !slices.Contains(g, l) {
			fmt.Fprintf(&b, "placement-api edit only: %s\n", l)
		}
	}
	for _, l := range g {
		if !slices.Contains(w, l) {
			fmt.Fprintf(&b, "rpctl edit only:         %s\n", l)
		}
	}
	return b.String()
}

// canonical re-encodes a JSON body with sorted keys; aggregate and trait
// lists are sets in Placement, in no defined order.
func canonical(t *testing.T, b []byte) []byte {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return b
	}
	sortLists(v)
	out, _ := json.Marshal(v)
	return out
}

func sortLists(v any) {
	switch x := v.(type) {
	case map[string]any:
		delete(x, "request_id")
		for k, e := range x {
			if l, ok := e.([]any); ok && (k == "aggregates" || k == "traits") {
				strs := make([]string, len(l))
				for i, s := range l {
					strs[i], _ = s.(string)
				}
				sortStrings(strs)
				for i := range l {
					l[i] = strs[i]
				}
			}
			sortLists(e)
		}
	case []any:
		for _, e := range x {
			sortLists(e)
		}
	}
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// dumpRows prints every row of the tables an edit touches, with whether
// created_at and updated_at are set (their values are wall-clock times).
func dumpRows(t *testing.T, db *storage.DB) string {
	t.Helper()
	var b strings.Builder
	for _, q := range []string{
		`SELECT id, uuid, COALESCE(name, ''), generation, COALESCE(parent_provider_id, 0), COALESCE(root_provider_id, 0), created_at IS NULL, updated_at IS NULL FROM resource_providers ORDER BY id`,
		`SELECT resource_provider_id, resource_class_id, total, reserved, min_unit, max_unit, step_size, CAST(allocation_ratio AS CHAR), created_at IS NULL, updated_at IS NULL FROM inventories ORDER BY resource_provider_id, resource_class_id`,
		`SELECT id, name, created_at IS NULL, updated_at IS NULL FROM resource_classes WHERE id >= 10000 ORDER BY id`,
		`SELECT id, name, created_at IS NULL, updated_at IS NULL FROM traits WHERE name LIKE 'CUSTOM%' ORDER BY id`,
		`SELECT resource_provider_id, trait_id, created_at IS NULL, updated_at IS NULL FROM resource_provider_traits ORDER BY resource_provider_id, trait_id`,
		// Placement creates new aggregates in Python set order (string
		// hashes, random per process), so their ids are not comparable:
		// aggregates are compared by uuid.
		`SELECT uuid, created_at IS NULL, updated_at IS NULL FROM placement_aggregates ORDER BY uuid`,
		`SELECT a.resource_provider_id, pa.uuid, a.created_at IS NULL, a.updated_at IS NULL FROM resource_provider_aggregates a JOIN placement_aggregates pa ON pa.id = a.aggregate_id ORDER BY a.resource_provider_id, pa.uuid`,
	} {
		rows, err := db.Query(q)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			for i, v := range vals {
				if bs, ok := v.([]byte); ok {
					vals[i] = string(bs)
				}
			}
			fmt.Fprintln(&b, vals...)
		}
		rows.Close()
		b.WriteString("--\n")
	}
	return b.String()
}
