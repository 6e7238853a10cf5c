package inventory_test

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/inventory"
)

// fakeStore is an in-memory provider whose writes can be made to conflict:
// before each of the first `conflicts` writes, another writer bumps the
// generation (and, with bump, adds to reserved as a concurrent edit would).
type fakeStore struct {
	inventory.Store // unused methods panic
	gen             int64
	inv             map[string]inventory.Inventory
	usage           map[string]int64
	conflicts       int
	writes          int
	reads           int // GET inventories and usages
}

func (s *fakeStore) Inventories(context.Context, string) (int64, map[string]inventory.Inventory, error) {
	s.reads++
	out := map[string]inventory.Inventory{}
	for k, v := range s.inv {
		out[k] = v
	}
	return s.gen, out, nil
}

func (s *fakeStore) ListInventories(ctx context.Context, uuid string) (int64, []inventory.ClassInventory, error) {
	gen, inv, err := s.Inventories(ctx, uuid)
	var out []inventory.ClassInventory
	for _, rc := range slices.Sorted(maps.Keys(inv)) {
		out = append(out, inventory.ClassInventory{Class: rc, Inventory: inv[rc]})
	}
	return gen, out, err
}

func (s *fakeStore) Usages(context.Context, string) (int64, map[string]int64, error) {
	s.reads++
	return s.gen, s.usage, nil
}

func (s *fakeStore) ReplaceInventories(_ context.Context, _ string, gen int64, inv map[string]inventory.Inventory) (int64, error) {
	if s.conflicts > 0 {
		s.conflicts--
		s.gen++
		v := s.inv["VCPU"]
		v.Reserved++
		s.inv["VCPU"] = v
	}
	if gen != s.gen {
		return 0, inventory.Errorf(inventory.ErrGeneration, inventory.CodeConcurrentUpdate, "resource provider generation conflict")
	}
	s.writes++
	s.gen++
	s.inv = inv
	return s.gen, nil
}

func vcpu(total, reserved int64, ratio float64) inventory.Inventory {
	v := inventory.Defaults
	v.Total, v.Reserved, v.AllocationRatio = total, reserved, ratio
	return v
}

// addReserved is a relative edit: the lost-update case the loop exists for.
func addReserved(cur map[string]inventory.Inventory) (map[string]inventory.Inventory, error) {
	v := cur["VCPU"]
	v.Reserved++
	cur["VCPU"] = v
	return cur, nil
}

func TestEditInventoriesRetries(t *testing.T) {
	p := inventory.Provider{UUID: "u", Name: "cn1"}
	for _, c := range []struct {
		name         string
		conflicts    int
		attempts     int
		want         inventory.Outcome
		wantReserved int64
		wantAttempts int
		wantErr      error
	}{
		{"no conflict", 0, 3, inventory.Changed, 1, 1, nil},
		// Two concurrent +1s land first; ours is re-applied on top: 3.
		{"re-applied after conflicts", 2, 3, inventory.Changed, 3, 3, nil},
		// Still conflicting after the bound: reported, nothing of ours written.
		{"conflict persists", 5, 3, inventory.Conflict, 3, 3, inventory.ErrGeneration},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := &fakeStore{inv: map[string]inventory.Inventory{"VCPU": vcpu(16, 0, 1)}, conflicts: c.conflicts}
			r := (&inventory.Editor{Store: st, Attempts: c.attempts}).EditInventories(context.Background(), p, addReserved)
			if r.Outcome != c.want || r.Attempts != c.wantAttempts || st.inv["VCPU"].Reserved != c.wantReserved ||
				(c.wantErr == nil) != (r.Err == nil) || (c.wantErr != nil && !errors.Is(r.Err, c.wantErr)) {
				t.Errorf("outcome %s after %d attempts, reserved %d, err %v; want %s after %d, reserved %d, err %v",
					r.Outcome, r.Attempts, st.inv["VCPU"].Reserved, r.Err, c.want, c.wantAttempts, c.wantReserved, c.wantErr)
			}
		})
	}
}

func TestEditInventoriesRules(t *testing.T) {
	p := inventory.Provider{UUID: "u", Name: "cn1"}
	cur := map[string]inventory.Inventory{"VCPU": vcpu(16, 0, 4), "MEMORY_MB": vcpu(4096, 0, 1)}
	for _, c := range []struct {
		name     string
		args     []string
		amend    bool
		dryRun   bool
		usage    map[string]int64
		want     inventory.Outcome
		errKind  error
		errText  string
		warnText string
		writes   int
	}{
		{name: "amend one field", args: []string{"VCPU:reserved=2"}, amend: true, want: inventory.Changed, writes: 1},
		{name: "unchanged writes nothing", args: []string{"VCPU:allocation_ratio=4.0"}, amend: true, want: inventory.Unchanged},
		{name: "dry run writes nothing", args: []string{"VCPU:reserved=2"}, amend: true, dryRun: true, want: inventory.Changed},
		{name: "replace needs total", args: []string{"VCPU:reserved=2"}, want: inventory.Failed, errKind: inventory.ErrBadRequest, errText: "VCPU: total is required"},
		{name: "replace removes unnamed", args: []string{"VCPU=8"}, want: inventory.Changed, writes: 1},
		{name: "replace refuses removing used class", args: []string{"VCPU=8"}, usage: map[string]int64{"MEMORY_MB": 10},
			want: inventory.Failed, errKind: inventory.ErrInUse, errText: "cannot remove MEMORY_MB (10 used)"},
		{name: "capacity below usage warns", args: []string{"VCPU:total=2"}, amend: true, usage: map[string]int64{"VCPU": 20},
			want: inventory.Changed, writes: 1, warnText: "VCPU: usage 20 exceeds the new capacity 8"},
		{name: "reserved above total", args: []string{"VCPU:reserved=17"}, amend: true, want: inventory.Failed, errKind: inventory.ErrBadRequest, errText: "reserved 17 is greater than total 16"},
		{name: "reserved equals total allowed", args: []string{"VCPU:reserved=16"}, amend: true, want: inventory.Changed, writes: 1},
		{name: "ratio above float max", args: []string{"VCPU:allocation_ratio=3.5e38"}, amend: true, want: inventory.Failed, errText: "allocation_ratio"},
		{name: "min above max", args: []string{"VCPU:min_unit=3", "VCPU:max_unit=2"}, amend: true, want: inventory.Failed, errText: "min_unit 3 is greater than max_unit 2"},
		{name: "step_size zero", args: []string{"VCPU:step_size=0"}, amend: true, want: inventory.Failed, errText: "step_size = 0 is outside 1..2147483647"},
	} {
		t.Run(c.name, func(t *testing.T) {
			edits, err := inventory.ParseEdits(c.args)
			if err != nil {
				t.Fatal(err)
			}
			st := &fakeStore{inv: cur, usage: c.usage}
			r := (&inventory.Editor{Store: st, DryRun: c.dryRun}).EditInventories(context.Background(), p, inventory.SetEdit(edits, c.amend))
			if r.Outcome != c.want || st.writes != c.writes {
				t.Fatalf("outcome %s, %d writes, err %v; want %s, %d writes", r.Outcome, st.writes, r.Err, c.want, c.writes)
			}
			if c.errText != "" && (r.Err == nil || !strings.Contains(r.Err.Error(), c.errText)) {
				t.Errorf("error %v, want one containing %q", r.Err, c.errText)
			}
			if c.errKind != nil && !errors.Is(r.Err, c.errKind) {
				t.Errorf("error %v is not %v", r.Err, c.errKind)
			}
			if c.warnText != "" && (len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], c.warnText)) {
				t.Errorf("warnings %q, want one containing %q", r.Warnings, c.warnText)
			}
		})
	}
}

// An edit reads only what its outcome depends on: an unchanged provider
// costs one GET (inventories); a changed one reads usage too only when
// the change removes a class or lowers its capacity, and reports as used
// what it read (nil when it read nothing).
func TestEditInventoriesReads(t *testing.T) {
	p := inventory.Provider{UUID: "u", Name: "cn1"}
	used := func(n int64) *int64 { return &n }
	for _, c := range []struct {
		name      string
		args      []string
		amend     bool
		wantReads int
		wantUsed  map[string]*int64
		want      inventory.Outcome
		noUsage   bool // the provider has no allocations
	}{
		{"unchanged", []string{"VCPU:allocation_ratio=4.0"}, true, 1, nil, inventory.Unchanged, false},
		{"capacity lowered", []string{"VCPU:allocation_ratio=2.0"}, true, 2, map[string]*int64{"VCPU": used(7)}, inventory.Changed, false},
		{"reserved raised", []string{"VCPU:reserved=2"}, true, 2, map[string]*int64{"VCPU": used(7)}, inventory.Changed, false},
		{"capacity raised", []string{"VCPU:allocation_ratio=8.0"}, true, 1, map[string]*int64{"VCPU": nil}, inventory.Changed, false},
		{"reserved lowered", []string{"VCPU:reserved=0"}, true, 1, map[string]*int64{"VCPU": nil}, inventory.Changed, false},
		{"capacity kept", []string{"VCPU:max_unit=4"}, true, 1, map[string]*int64{"VCPU": nil}, inventory.Changed, false},
		{"class added", []string{"DISK_GB=100"}, true, 1, map[string]*int64{"DISK_GB": nil}, inventory.Changed, false},
		// Every change of a provider whose usage was read reports it,
		// the added class's 0 included.
		{"class removed", []string{"DISK_GB=100"}, false, 2, map[string]*int64{"DISK_GB": used(0), "VCPU": used(0)}, inventory.Changed, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			edits, err := inventory.ParseEdits(c.args)
			if err != nil {
				t.Fatal(err)
			}
			st := &fakeStore{inv: map[string]inventory.Inventory{"VCPU": vcpu(16, 1, 4)}, usage: map[string]int64{"VCPU": 7}}
			if c.noUsage {
				st.usage = nil
			}
			r := (&inventory.Editor{Store: st}).EditInventories(context.Background(), p, inventory.SetEdit(edits, c.amend))
			if r.Outcome != c.want || st.reads != c.wantReads {
				t.Fatalf("outcome %s (%v) after %d reads, want %s after %d", r.Outcome, r.Err, st.reads, c.want, c.wantReads)
			}
			if len(r.Changes) != len(c.wantUsed) {
				t.Fatalf("changes %+v, want %d", r.Changes, len(c.wantUsed))
			}
			for _, ch := range r.Changes {
				got, want := ch.Used, c.wantUsed[ch.Class]
				if (got == nil) != (want == nil) || (got != nil && *got != *want) {
					t.Errorf("%s used %v, want %v", ch.Class, deref(got), deref(want))
				}
			}
		})
	}
}

func deref(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

// A batch plans, then writes: the write reuses the plan's read (no second
// GET before the PUT), and a conflict since the plan re-reads and
// re-applies the edit as EditInventories does.
func TestPlanThenWrite(t *testing.T) {
	p := inventory.Provider{UUID: "u", Name: "cn1"}
	for _, c := range []struct {
		name                  string
		conflicts             int
		wantReads, wantWrites int
		wantAttempts          int
		wantReserved          int64
		want                  inventory.Outcome
		wantPlanOutcome       inventory.Outcome
	}{
		// addReserved lowers capacity: each attempt reads inventories and usage.
		{name: "no conflict", wantReads: 2, wantWrites: 1, wantAttempts: 1, wantReserved: 1, want: inventory.Changed, wantPlanOutcome: inventory.Changed},
		{name: "conflict after the plan", conflicts: 1, wantReads: 4, wantWrites: 1, wantAttempts: 2, wantReserved: 2, want: inventory.Changed, wantPlanOutcome: inventory.Changed},
	} {
		t.Run(c.name, func(t *testing.T) {
			st := &fakeStore{inv: map[string]inventory.Inventory{"VCPU": vcpu(16, 0, 1)}, conflicts: c.conflicts}
			ed := &inventory.Editor{Store: st, Attempts: 3}
			plan := ed.Plan(context.Background(), p, addReserved)
			if plan.Outcome != c.wantPlanOutcome || st.writes != 0 {
				t.Fatalf("plan %s, %d writes; want %s, none", plan.Outcome, st.writes, c.wantPlanOutcome)
			}
			r := ed.Write(context.Background(), plan, addReserved)
			if r.Outcome != c.want || st.reads != c.wantReads || st.writes != c.wantWrites || r.Attempts != c.wantAttempts || st.inv["VCPU"].Reserved != c.wantReserved {
				t.Errorf("%s after %d reads, %d writes, %d attempts, reserved %d; want %s after %d, %d, %d, reserved %d (err %v)",
					r.Outcome, st.reads, st.writes, r.Attempts, st.inv["VCPU"].Reserved, c.want, c.wantReads, c.wantWrites, c.wantAttempts, c.wantReserved, r.Err)
			}
		})
	}
	t.Run("unchanged plan writes nothing", func(t *testing.T) {
		st := &fakeStore{inv: map[string]inventory.Inventory{"VCPU": vcpu(16, 0, 1)}}
		ed := &inventory.Editor{Store: st}
		same := func(cur map[string]inventory.Inventory) (map[string]inventory.Inventory, error) { return cur, nil }
		r := ed.Write(context.Background(), ed.Plan(context.Background(), p, same), same)
		if r.Outcome != inventory.Unchanged || st.reads != 1 || st.writes != 0 {
			t.Errorf("%s after %d reads, %d writes; want unchanged after 1 read, none", r.Outcome, st.reads, st.writes)
		}
	})
}

func TestParseEdits(t *testing.T) {
	for _, c := range []struct {
		arg, err string
	}{
		{"VCPU=8", ""},
		{"VCPU:allocation_ratio=1.5", ""},
		{"VCPU", "expected CLASS:field=value"},
		{"vcpu=1", "must match"},
		{"VCPU:size=1", `unknown field "size"`},
		{"VCPU:total=1.5", "total must be a number"},
		{"VCPU:allocation_ratio=x", "allocation_ratio must be a finite, non-negative decimal number"},
		{"VCPU:allocation_ratio=nan", "allocation_ratio must be a finite"},
		{"VCPU:allocation_ratio=-inf", "allocation_ratio must be a finite"},
		{"VCPU:allocation_ratio=0x10", "allocation_ratio must be a finite"},
		{"VCPU:allocation_ratio=1e39", ""}, // Validate's: above the FLOAT maximum
		{"VCPU:total= 5", "total must be a number"},
	} {
		_, err := inventory.ParseEdits([]string{c.arg})
		if (c.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%q: error %v, want %q", c.arg, err, c.err)
		}
	}
}

// roomStore answers CheckLowered's listing with the providers that have
// room, and each provider's usage.
type roomStore struct {
	inventory.Store
	room     []string
	usage    map[string]map[string]int64
	listings []inventory.ProviderFilter
	reads    []string
}

func (s *roomStore) ListProviders(_ context.Context, f inventory.ProviderFilter) ([]inventory.Provider, error) {
	s.listings = append(s.listings, f)
	var out []inventory.Provider
	for _, u := range s.room {
		out = append(out, inventory.Provider{UUID: u})
	}
	return out, nil
}

func (s *roomStore) Usages(_ context.Context, uuid string) (int64, map[string]int64, error) {
	s.reads = append(s.reads, uuid)
	return 0, s.usage[uuid], nil
}

// After a batch lowered capacity, one listing per class finds the
// providers with room; only the others have their usage read, and only
// usage above the new capacity is warned of.
func TestCheckLowered(t *testing.T) {
	before, lower, higher := vcpu(16, 0, 4), vcpu(16, 0, 1), vcpu(16, 0, 8)
	changed := func(uuid string, after inventory.Inventory) inventory.Result {
		b, a := before, after
		return inventory.Result{Provider: inventory.Provider{UUID: uuid}, Outcome: inventory.Changed,
			Changes: []inventory.Change{{Class: "VCPU", Before: &b, After: &a}}}
	}
	results := []inventory.Result{
		changed("room", lower),
		changed("over", lower),
		changed("full", lower),
		changed("raised", higher),
		{Provider: inventory.Provider{UUID: "failed"}, Outcome: inventory.Failed, Err: errors.New("x")},
	}
	st := &roomStore{room: []string{"room"}, usage: map[string]map[string]int64{"over": {"VCPU": 20}, "full": {"VCPU": 16}}}
	if err := (&inventory.Editor{Store: st}).CheckLowered(context.Background(), "agg", results); err != nil {
		t.Fatal(err)
	}
	if len(st.listings) != 1 || st.listings[0].Resources != "VCPU:1" || len(st.listings[0].MemberOf) != 1 || st.listings[0].MemberOf[0] != "agg" {
		t.Errorf("listings %+v, want one of agg's providers with VCPU:1", st.listings)
	}
	if strings.Join(st.reads, " ") != "over full" {
		t.Errorf("usage read for %q, want over and full", st.reads)
	}
	for _, r := range results {
		var used any
		if len(r.Changes) > 0 {
			used = deref(r.Changes[0].Used)
		}
		wantWarn := r.Provider.UUID == "over"
		if (len(r.Warnings) == 1) != wantWarn || (wantWarn && !strings.Contains(r.Warnings[0], "usage 20 exceeds the new capacity 16")) {
			t.Errorf("%s: warnings %q", r.Provider.UUID, r.Warnings)
		}
		switch r.Provider.UUID {
		case "over", "full":
			if used == nil {
				t.Errorf("%s: used not set", r.Provider.UUID)
			}
		default:
			if used != nil {
				t.Errorf("%s: used %v, want not read", r.Provider.UUID, used)
			}
		}
	}
}

// TestClassSetEdit: one class's record replaced (the fields given, the
// defaults for the rest), the other classes kept; a class the provider has
// not, or no total, is Placement's bad request.
func TestClassSetEdit(t *testing.T) {
	cur := map[string]inventory.Inventory{
		"VCPU":      {Total: 16, Reserved: 2, MinUnit: 1, MaxUnit: 8, StepSize: 1, AllocationRatio: 4},
		"MEMORY_MB": {Total: 4096, Reserved: 512, MinUnit: 1, MaxUnit: 4096, StepSize: 1, AllocationRatio: 1.5},
	}
	for _, c := range []struct {
		name    string
		class   string
		edits   []inventory.FieldEdit
		want    inventory.Inventory
		wantErr string
	}{
		{name: "total only: defaults for the rest", class: "VCPU", edits: []inventory.FieldEdit{{Class: "VCPU", Field: "total", Int: 32}},
			want: inventory.Inventory{Total: 32, Reserved: 0, MinUnit: 1, MaxUnit: inventory.MaxInt, StepSize: 1, AllocationRatio: 1}},
		{name: "every field", class: "MEMORY_MB", edits: []inventory.FieldEdit{{Class: "MEMORY_MB", Field: "total", Int: 8192},
			{Class: "MEMORY_MB", Field: "reserved", Int: 256}, {Class: "MEMORY_MB", Field: "max_unit", Int: 2048},
			{Class: "MEMORY_MB", Field: "min_unit", Int: 2}, {Class: "MEMORY_MB", Field: "step_size", Int: 2},
			{Class: "MEMORY_MB", Field: "allocation_ratio", Float: 2.5}},
			want: inventory.Inventory{Total: 8192, Reserved: 256, MinUnit: 2, MaxUnit: 2048, StepSize: 2, AllocationRatio: 2.5}},
		{name: "class not on the provider", class: "DISK_GB", edits: []inventory.FieldEdit{{Class: "DISK_GB", Field: "total", Int: 10}},
			wantErr: "No inventory record with resource class for resource provider u: DISK_GB"},
		{name: "no total", class: "VCPU", edits: []inventory.FieldEdit{{Class: "VCPU", Field: "reserved", Int: 1}}, wantErr: "VCPU: total is required"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := inventory.ClassSetEdit("u", c.class, c.edits)(maps.Clone(cur))
			if c.wantErr != "" {
				if !errors.Is(err, inventory.ErrBadRequest) || err.Error() != c.wantErr {
					t.Fatalf("err %v, want a bad request %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got[c.class] != c.want {
				t.Errorf("%s = %+v, want %+v", c.class, got[c.class], c.want)
			}
			for class, v := range cur {
				if class != c.class && got[class] != v {
					t.Errorf("%s changed: %+v, want %+v", class, got[class], v)
				}
			}
			if len(got) != len(cur) {
				t.Errorf("classes %v, want those of %v", got, cur)
			}
		})
	}
}
