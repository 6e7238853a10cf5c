package claims

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

type fakeCell struct {
	name  string
	insts []Instance
	nodes map[string]string // node -> uuid
}

func (c *fakeCell) Name() string { return c.name }

func (c *fakeCell) Instances(_ context.Context, after *Page, limit int, uuid string) ([]Instance, error) {
	var out []Instance
	for _, in := range c.insts {
		if uuid != "" && in.UUID != uuid {
			continue
		}
		if after != nil && !in.CreatedAt.After(*after.CreatedAt) && !(in.CreatedAt.Equal(*after.CreatedAt) && in.ID > after.ID) {
			continue
		}
		out = append(out, in)
		if len(out) == limit {
			break
		}
	}
	return out, nil
}

func (c *fakeCell) ComputeNodeUUID(_ context.Context, host, node string) (string, error) {
	if u, ok := c.nodes[node]; ok {
		return u, nil
	}
	return "", ErrComputeHostNotFound
}

type fakePlacement struct {
	allocs map[string]*Allocations
	refuse map[string]bool
	puts   []string
}

func (p *fakePlacement) ConsumerAllocations(_ context.Context, cs []string) (map[string]*Allocations, error) {
	out := map[string]*Allocations{}
	for _, c := range cs {
		if a := p.allocs[c]; a != nil {
			out[c] = a
		}
	}
	return out, nil
}

func (p *fakePlacement) PutAllocations(_ context.Context, ws []Write) (int, error) {
	for i, w := range ws {
		if p.refuse[w.Consumer] {
			return i, &WriteError{Consumer: w.Consumer}
		}
		a := w.Alloc
		g := int64(1)
		if a.ConsumerGeneration != nil {
			g = *a.ConsumerGeneration + 1
		}
		a.ConsumerGeneration = &g
		p.allocs[w.Consumer] = &a
		p.puts = append(p.puts, w.Consumer)
	}
	return len(ws), nil
}

const flavorJSON = `{"cur": {"nova_object.data": {"vcpus": 1, "memory_mb": 256, "root_gb": 1, "ephemeral_gb": 0, "swap": 0, "extra_specs": {}}}}`

func inst(i int) Instance {
	node, host, fl := "n1", "h1", flavorJSON
	t := time.Date(2020, 1, 1, 0, 0, i, 0, time.UTC)
	return Instance{ID: int64(i), UUID: fmt.Sprintf("i-%03d", i), CreatedAt: &t, ProjectID: "p", UserID: "u", ImageRef: "img",
		Host: &host, Node: &node, FlavorJSON: &fl}
}

func cloud(missing []bool) (*fakeCell, *fakePlacement) {
	c := &fakeCell{name: "cell1", nodes: map[string]string{"n1": "rp1"}}
	p := &fakePlacement{allocs: map[string]*Allocations{}, refuse: map[string]bool{}}
	g := int64(1)
	for i, m := range missing {
		in := inst(i)
		c.insts = append(c.insts, in)
		if !m {
			p.allocs[in.UUID] = &Allocations{Allocations: map[string]ProviderAllocation{"rp1": {Resources: map[string]int64{"VCPU": 1}}}, ProjectID: "p", UserID: "u", ConsumerGeneration: &g}
		}
	}
	return c, p
}

func TestHealExitCodesAndBatches(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name      string
		missing   []bool
		o         HealOptions
		code      int
		processed int
	}{
		{"all healed", []bool{true, false, true}, HealOptions{}, ExitHealed, 2},
		{"nothing to do", []bool{false, false}, HealOptions{}, ExitNothingToDo, 0},
		{"dry run", []bool{true, true}, HealOptions{DryRun: true}, ExitNothingToDo, 0},
		{"max count reached", []bool{true, true, true}, HealOptions{MaxCount: 2}, ExitMaxCount, 2},
		// Nova checks the limit after a whole page: page [has, missing]
		// heals 1, the next page [missing, missing] heals 2 more.
		{"max count over-count", []bool{false, true, true, true}, HealOptions{MaxCount: 2}, ExitHealed, 3},
		{"bad max count", []bool{true}, HealOptions{MaxCount: -1}, ExitBadInput, 0},
		{"force without instance", []bool{true}, HealOptions{Force: true}, ExitBadInput, 0},
		{"one instance", []bool{true, true}, HealOptions{Instance: "i-001"}, ExitHealed, 1},
		{"one instance up to date", []bool{true, false}, HealOptions{Instance: "i-001"}, ExitNothingToDo, 0},
		{"force one instance", []bool{true, false}, HealOptions{Instance: "i-001", Force: true}, ExitHealed, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, p := cloud(tc.missing)
			res, err := (&Healer{Cells: []Cell{c}, Placement: p}).Heal(ctx, tc.o)
			if err != nil {
				t.Fatal(err)
			}
			if res.Code != tc.code || res.Processed != tc.processed {
				t.Errorf("code %d processed %d, want %d and %d (%s)", res.Code, res.Processed, tc.code, tc.processed, res.Message)
			}
		})
	}
}

func TestHealUnlimitedStopsAtNovaBatch(t *testing.T) {
	missing := make([]bool, NovaBatch)
	for i := range missing {
		missing[i] = true
	}
	c, p := cloud(missing)
	c2, _ := cloud([]bool{true})
	c2.name = "cell2"
	res, err := (&Healer{Cells: []Cell{c, c2}, Placement: p}).Heal(context.Background(), HealOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Code != ExitMaxCount || res.Processed != NovaBatch || len(res.Cells) != 1 {
		t.Errorf("got %+v, want nova-manage's exit 1 after exactly %d healed in the first cell", res, NovaBatch)
	}
}

func TestHealStopsAtFailures(t *testing.T) {
	ctx := context.Background()
	c, p := cloud([]bool{true, true, true})
	p.refuse["i-001"] = true
	res, err := (&Healer{Cells: []Cell{c}, Placement: p}).Heal(ctx, HealOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Code != ExitWriteFailed || res.Processed != 1 || strings.Join(p.puts, ",") != "i-000" {
		t.Errorf("refused write: got %+v, puts %v", res, p.puts)
	}
	if !strings.HasPrefix(res.Message, "Failed to update allocations for consumer i-001. Error: ") {
		t.Errorf("message %q", res.Message)
	}

	c, p = cloud([]bool{true, true})
	other := "n2"
	c.insts[1].Node = &other
	res, _ = (&Healer{Cells: []Cell{c}, Placement: p}).Heal(ctx, HealOptions{})
	if res.Code != ExitNoComputeNode || res.Message != "Compute host h1 could not be found." || len(p.puts) != 1 {
		t.Errorf("missing node: got %+v, puts %v", res, p.puts)
	}

	c, p = cloud([]bool{true, false})
	vgpu := `{"cur": {"nova_object.data": {"vcpus": 1, "memory_mb": 1, "extra_specs": {"resources:VGPU": "1"}}}}`
	c.insts[1].FlavorJSON = &vgpu
	res, _ = (&Healer{Cells: []Cell{c}, Placement: p}).Heal(ctx, HealOptions{})
	if res.Code != ExitUnsupported || len(p.puts) != 1 {
		t.Errorf("vGPU: got %+v, puts %v", res, p.puts)
	}
}

func TestHealFixesProjectAndSkipsBusy(t *testing.T) {
	c, p := cloud([]bool{false, true, true})
	p.allocs["i-000"].ProjectID = "00000000-0000-0000-0000-000000000000"
	task := "resize_migrating"
	c.insts[1].TaskState = &task
	c.insts[2].Node = nil
	res, err := (&Healer{Cells: []Cell{c}, Placement: p}).Heal(context.Background(), HealOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cr := res.Cells[0]
	if res.Code != ExitHealed || cr.Updated != 1 || cr.InTask != 1 || cr.NoHost != 1 || p.allocs["i-000"].ProjectID != "p" {
		t.Errorf("got %+v %+v", res, cr)
	}
	if g := *p.allocs["i-000"].ConsumerGeneration; g != 2 {
		t.Errorf("update sent consumer generation %d, want the current one (1)", g-1)
	}
}

// racingPlacement is a Placement where another writer heals the consumers
// in race just before this run's PUT reaches them: the PUT meets a
// consumer generation conflict, as a second heal on another Galera node
// does.
type racingPlacement struct {
	*fakePlacement
	race map[string]bool
}

func (p *racingPlacement) PutAllocations(ctx context.Context, ws []Write) (int, error) {
	for i, w := range ws {
		if p.race[w.Consumer] {
			delete(p.race, w.Consumer)
			g := int64(1)
			p.allocs[w.Consumer] = &Allocations{Allocations: w.Alloc.Allocations, ProjectID: w.Alloc.ProjectID, UserID: w.Alloc.UserID, ConsumerGeneration: &g}
			n, err := p.fakePlacement.PutAllocations(ctx, ws[:i])
			if err != nil {
				return n, err
			}
			return i, &WriteError{Consumer: w.Consumer, Conflict: true, Detail: "consumer generation conflict - expected 1 but got None"}
		}
	}
	return p.fakePlacement.PutAllocations(ctx, ws)
}

func TestHealRereadsConsumersHealedConcurrently(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name    string
		missing []bool
		race    []string
		ours    int
	}{
		{"one raced", []bool{true, true, true}, []string{"i-001"}, 2},
		{"all raced", []bool{true, true}, []string{"i-000", "i-001"}, 0},
		{"none raced", []bool{true, true}, nil, 2},
	}
	for _, tc := range cases {
		t.Run("heal/"+tc.name, func(t *testing.T) {
			c, fp := cloud(tc.missing)
			p := &racingPlacement{fp, map[string]bool{}}
			for _, u := range tc.race {
				p.race[u] = true
			}
			res, err := (&Healer{Cells: []Cell{c}, Placement: p}).Heal(ctx, HealOptions{})
			if err != nil {
				t.Fatal(err)
			}
			want := ExitHealed
			if tc.ours == 0 {
				want = ExitNothingToDo
			}
			if res.Code != want || res.Processed != tc.ours || res.Cells[0].UpToDate != len(tc.race) {
				t.Errorf("code %d processed %d up-to-date %d, want %d, %d and %d (%s)", res.Code, res.Processed, res.Cells[0].UpToDate, want, tc.ours, len(tc.race), res.Message)
			}
			if len(fp.allocs) != len(tc.missing) {
				t.Errorf("%d consumers hold allocations, want %d", len(fp.allocs), len(tc.missing))
			}
		})
		t.Run("batch/"+tc.name, func(t *testing.T) {
			c, fp := cloud(tc.missing)
			p := &racingPlacement{fp, map[string]bool{}}
			for _, u := range tc.race {
				p.race[u] = true
			}
			b := &Batch{Cells: []Cell{c}, Placement: p}
			found, done, skipped, err := b.Run(ctx, 100)
			if err != nil || len(skipped) > 0 {
				t.Fatalf("err %v, skipped %v", err, skipped)
			}
			if found != len(tc.missing) || done != len(tc.missing) || b.DoneElsewhere() != len(tc.race) {
				t.Errorf("found %d done %d elsewhere %d, want %d, %d and %d", found, done, b.DoneElsewhere(), len(tc.missing), len(tc.missing), len(tc.race))
			}
		})
	}
}

// countingCell is a fakeCell that counts its instances (InstanceCounter).
type countingCell struct{ *fakeCell }

func (c countingCell) CountInstances(context.Context) (int, error) { return len(c.insts), nil }

// TestHealProgress (issue 35): an unlimited heal counts the instances
// first and reports them page by page up to the total; a cell that cannot
// count leaves the total unknown (-1); the batches of migrate allocations
// report every instance once across their runs.
func TestHealProgress(t *testing.T) {
	ctx := context.Background()
	c, p := cloud([]bool{true, false, true, true, false})
	var got [][2]int
	rec := func(d, n int) { got = append(got, [2]int{d, n}) }
	if _, err := (&Healer{Cells: []Cell{countingCell{c}}, Placement: p}).Heal(ctx, HealOptions{Page: 2, Progress: rec}); err != nil {
		t.Fatal(err)
	}
	if want := [][2]int{{0, 5}, {2, 5}, {4, 5}, {5, 5}}; !slices.Equal(got, want) {
		t.Errorf("heal progress %v, want %v", got, want)
	}
	got = nil
	c2, p2 := cloud([]bool{true, true})
	if _, err := (&Healer{Cells: []Cell{c2}, Placement: p2}).Heal(ctx, HealOptions{Progress: rec}); err != nil {
		t.Fatal(err)
	}
	if want := [][2]int{{0, -1}, {2, -1}}; !slices.Equal(got, want) {
		t.Errorf("heal progress without a count %v, want %v", got, want)
	}
	got = nil
	c3, p3 := cloud([]bool{true, true, true})
	b := &Batch{Cells: []Cell{countingCell{c3}}, Placement: p3, Progress: rec}
	for range 3 {
		if _, _, _, err := b.Run(ctx, 1); err != nil {
			t.Fatal(err)
		}
	}
	if want := [][2]int{{0, 3}, {1, 3}, {2, 3}, {3, 3}}; !slices.Equal(got, want) {
		t.Errorf("batch progress %v, want %v", got, want)
	}
}
