package candidates

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/internal/testdb"
)

// TestCeiling: an answer that would hold more than Options.Ceiling
// candidates fails with a CeilingError while it is generated; a limit or
// MaxCandidates below the ceiling answers as before.
func TestCeiling(t *testing.T) {
	m := mustModel(t, ExplosionInput(8))
	req := ExplosionRequest(8, "none", 0) // 8! = 40320 candidates
	_, err := m.Search(context.Background(), req, Options{Ceiling: 1000})
	var ce *CeilingError
	if !errors.As(err, &ce) || ce.Ceiling != 1000 || !strings.Contains(err.Error(), "1000") {
		t.Fatalf("err = %v, want a CeilingError of 1000", err)
	}
	res, err := m.Search(context.Background(), ExplosionRequest(8, "none", 10), Options{Ceiling: 1000})
	if err != nil || len(res.Candidates) != 10 {
		t.Fatalf("--limit 10 under the ceiling: %v, %d candidates", err, len(res.Candidates))
	}
	res, err = m.Search(context.Background(), req, Options{Ceiling: 1000, MaxCandidates: 1000})
	if err != nil || len(res.Candidates) != 1000 {
		t.Fatalf("MaxCandidates equal to the ceiling: %v, %d candidates", err, len(res.Candidates))
	}
	res, err = mustModel(t, ExplosionInput(6)).Search(context.Background(), ExplosionRequest(6, "none", 0), Options{Ceiling: 720})
	if err != nil || len(res.Candidates) != 720 {
		t.Fatalf("exactly the ceiling (6! = 720): %v, %+v", err, res)
	}
}

// TestCancelledSearch: a cancelled context stops a search and an
// explanation with its cause.
func TestCancelledSearch(t *testing.T) {
	m := mustModel(t, ExplosionInput(12))
	cause := errors.New("terminated signal received")
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(cause)
	if _, err := m.Search(ctx, ExplosionRequest(12, "none", 0), Options{}); !errors.Is(err, cause) {
		t.Errorf("search: err = %v, want the cause", err)
	}
	if _, err := m.Explain(ctx, ExplosionRequest(12, "none", 0), Options{}); !errors.Is(err, cause) {
		t.Errorf("explain: err = %v, want the cause", err)
	}
}

// pollCtx is a context that is cancelled, with cause, once its Err has
// been asked after more than polls times: a cancellation at a known step of
// the walk, with no clock.
type pollCtx struct {
	context.Context
	asked, polls int
	cause        error
}

func (c *pollCtx) Err() error {
	if c.asked++; c.asked > c.polls {
		return c.cause
	}
	return nil
}

// TestCancelStopsAtNextPoll: a search that would walk 12! combinations
// stops at the first poll after its context is cancelled (polls are 4096
// steps apart) and walks no further: this is what lets SIGINT and SIGTERM
// stop rpctl candidates at once, proven in steps rather than seconds.
func TestCancelStopsAtNextPoll(t *testing.T) {
	m := mustModel(t, ExplosionInput(12))
	for _, polls := range []int{0, 3, 100} {
		ctx := &pollCtx{Context: context.Background(), polls: polls, cause: errors.New("interrupt signal received")}
		var err error
		steps := stepsOf(func() { _, err = m.Search(ctx, ExplosionRequest(12, "none", 0), Options{}) })
		if !errors.Is(err, ctx.cause) {
			t.Fatalf("cancelled after %d polls: err = %v, want the cause", polls, err)
		}
		// The step that saw the cancellation, plus the few calls with
		// which the walk unwinds.
		if first := uint64(polls+1) * 4096; ctx.asked != polls+1 || steps < first || steps > first+16 {
			t.Errorf("cancelled after %d polls: %d polls, %d steps; want %d polls and %d steps (+16 to unwind)",
				polls, ctx.asked, steps, polls+1, first)
		}
	}
}

// sameSubtreeSiblings asks for n groups of one VF that must share a
// subtree on a root whose VFs are all siblings: no combination is valid,
// and there are n! of them.
func sameSubtreeSiblings(n int) *Request {
	req := ExplosionRequest(n, "none", 1)
	var set []string
	for i := range req.Groups {
		req.Groups[i].Suffix = fmt.Sprintf("_G%d", i+1)
		set = append(set, req.Groups[i].Suffix)
	}
	req.SameSubtree = [][]string{set}
	return req
}

// TestExplainBudget: with more same_subtree groups than Explain can walk,
// the host is reported as an incomplete explanation (not a guess); below
// it, the explanation agrees with the search (CheckExplain). The work is
// bounded by ExplainBudget per host, so twenty groups cost about what
// twelve do (BenchmarkExplainSameSubtree).
func TestExplainBudget(t *testing.T) {
	for _, n := range []int{4, 12, 20} {
		m := mustModel(t, ExplosionInput(n))
		req := sameSubtreeSiblings(n)
		ex := m.explainAll(req)
		if len(ex) != 1 {
			t.Fatalf("n=%d: %d explanations, want 1", n, len(ex))
		}
		want := ReasonSameSubtree
		if n >= 12 { // 12! combinations is past the budget
			want = ReasonIncomplete
		}
		if ex[0].Kind != want || (want == ReasonIncomplete) != strings.Contains(ex[0].Message, "explanation incomplete") {
			t.Errorf("n=%d: [%s] %s, want %s", n, ex[0].Kind, ex[0].Message, want)
		}
		if n < 12 {
			// CheckExplain runs the full search, which is the n! walk.
			if err := m.CheckExplain(req); err != nil {
				t.Errorf("n=%d: %v", n, err)
			}
		}
	}
}

func BenchmarkExplainSameSubtree(b *testing.B) {
	for _, n := range []int{12, 16, 20} {
		m := mustModel(b, ExplosionInput(n))
		req := sameSubtreeSiblings(n)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				m.explainAll(req)
			}
		})
	}
}

// TestDefaultBounds: Options' zero values are the default ceilings, so a
// caller that says nothing is bounded; only NoLimit lifts a bound.
func TestDefaultBounds(t *testing.T) {
	for _, tc := range []struct {
		opt          Options
		ceiling      int
		bytes, steps int64
	}{
		{Options{}, DefaultCeiling, DefaultCeilingBytes, DefaultMaxSteps},
		{Options{Ceiling: NoLimit, CeilingBytes: NoLimit, MaxSteps: NoLimit}, 0, 0, 0},
		{Options{Ceiling: 7, CeilingBytes: 8, MaxSteps: 9}, 7, 8, 9},
	} {
		c, b, s := tc.opt.limits()
		if c != tc.ceiling || b != tc.bytes || s != tc.steps {
			t.Errorf("%+v: limits %d %d %d, want %d %d %d", tc.opt, c, b, s, tc.ceiling, tc.bytes, tc.steps)
		}
	}
}

// TestStepCeiling: 129 one-VCPU groups on hosts of 128 VCPUs have no
// answer, and proving it walks every combination (2^128 per host): the
// search stops at the step ceiling, within one poll of it, with a
// StepsError, limit 1 or not, and so does Explain; 128 groups answer.
func TestStepCeiling(t *testing.T) {
	m := mustModel(t, GranularInput(3))
	const ceiling = 1 << 20
	for _, limit := range []int{1, 0} {
		var err error
		steps := stepsOf(func() {
			_, err = m.Search(context.Background(), GranularRequest(129, limit), Options{MaxSteps: ceiling})
		})
		var se *StepsError
		if !errors.As(err, &se) || se.Steps != ceiling || !strings.Contains(err.Error(), "--max-steps") {
			t.Fatalf("limit %d: err = %v, want a StepsError of %d", limit, err, ceiling)
		}
		if steps < ceiling || steps > ceiling+4096+256 {
			t.Errorf("limit %d: %d steps, want the ceiling %d (+ one poll and the unwinding)", limit, steps, ceiling)
		}
	}
	if _, err := m.Explain(context.Background(), GranularRequest(129, 1), Options{MaxSteps: 8192}); !errors.As(err, new(*StepsError)) {
		t.Errorf("explain: err = %v, want a StepsError", err)
	}
	res, err := m.Search(context.Background(), GranularRequest(128, 1), Options{MaxSteps: ceiling})
	if err != nil || len(res.Candidates) != 1 {
		t.Fatalf("128 groups: %v, %+v", err, res)
	}
}

// TestByteCeiling: the answer's memory is bounded, not only its count: a
// many-group answer under the candidate ceiling stops at CeilingBytes with
// a CeilingError naming the megabytes, having allocated at most twice the
// ceiling (slabs and the index around it); searches sharing a Budget stop
// at their sum.
func TestByteCeiling(t *testing.T) {
	m := mustModel(t, GranularInput(20))
	req := GranularRequest(16, 0) // 20 hosts x 2^16 answers of 16 groups
	const ceiling = 16 << 20
	var err error
	n := testdb.Allocated(func() { _, err = m.Search(context.Background(), req, Options{CeilingBytes: ceiling}) })
	var ce *CeilingError
	if !errors.As(err, &ce) || ce.Bytes != ceiling || !strings.Contains(err.Error(), "16 MB") {
		t.Fatalf("err = %v, want a CeilingError of 16 MB", err)
	}
	if n > 2*ceiling {
		t.Errorf("allocated %d MB, want at most %d", n>>20, 2*ceiling>>20)
	}
	// 8 groups: 20 x 256 answers of about 400 bytes fit alone, not twice
	// in a budget of 3 MB.
	small := GranularRequest(8, 0)
	opt := Options{CeilingBytes: 3 << 20, Shared: &Budget{}}
	if _, err := m.Search(context.Background(), small, opt); err != nil {
		t.Fatalf("alone: %v", err)
	}
	if _, err := m.Search(context.Background(), small, opt); !errors.As(err, &ce) {
		t.Errorf("second search in the shared budget: err = %v, want a CeilingError", err)
	}
}
