package candidates

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestCeiling: an answer that would hold more than Options.Ceiling
// candidates fails with a CeilingError while it is generated; a limit or
// MaxCandidates below the ceiling answers as before.
func TestCeiling(t *testing.T) {
	m := mustModel(t, ExplosionInput(8))
	req := ExplosionRequest(8, "none", 0) // 8! = 40320 candidates
	_, err := m.Candidates(req, Options{Ceiling: 1000})
	var ce *CeilingError
	if !errors.As(err, &ce) || ce.Ceiling != 1000 || !strings.Contains(err.Error(), "1000") {
		t.Fatalf("err = %v, want a CeilingError of 1000", err)
	}
	res, err := m.Candidates(ExplosionRequest(8, "none", 10), Options{Ceiling: 1000})
	if err != nil || len(res.Candidates) != 10 {
		t.Fatalf("--limit 10 under the ceiling: %v, %d candidates", err, len(res.Candidates))
	}
	res, err = m.Candidates(req, Options{Ceiling: 1000, MaxCandidates: 1000})
	if err != nil || len(res.Candidates) != 1000 {
		t.Fatalf("MaxCandidates equal to the ceiling: %v, %d candidates", err, len(res.Candidates))
	}
	res, err = mustModel(t, ExplosionInput(6)).Candidates(ExplosionRequest(6, "none", 0), Options{Ceiling: 720})
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
	if _, err := m.CandidatesContext(ctx, ExplosionRequest(12, "none", 0), Options{}); !errors.Is(err, cause) {
		t.Errorf("search: err = %v, want the cause", err)
	}
	if _, err := m.ExplainContext(ctx, ExplosionRequest(12, "none", 0)); !errors.Is(err, cause) {
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
		steps := stepsOf(func() { _, err = m.CandidatesContext(ctx, ExplosionRequest(12, "none", 0), Options{}) })
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
		ex := m.Explain(req)
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
				m.Explain(req)
			}
		})
	}
}
