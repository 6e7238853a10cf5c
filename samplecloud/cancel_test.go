package samplecloud

import (
	"context"
	"errors"
	"testing"
)

// cancelAfter is a context that is cancelled once its Err has been asked
// n times: the generation is stopped by its own progress, not by a clock.
type cancelAfter struct {
	context.Context
	n, asked int
}

func (c *cancelAfter) Err() error {
	c.asked++
	if c.asked > c.n {
		return context.Canceled
	}
	return nil
}

// TestGenerateStops (issue 37 row 13): a generation whose context is done
// stops at its next poll (every 1,024 nodes or instances) with the
// context's error and no cloud, wherever it was: before the first node,
// among the nodes, among the instances; an uncancelled one is Generate's
// cloud.
func TestGenerateStops(t *testing.T) {
	o := Options{Nodes: 20000, Seed: 3}
	for _, n := range []int{0, 1, 5, 15} {
		ctx := &cancelAfter{Context: context.Background(), n: n}
		c, err := GenerateContext(ctx, o)
		if !errors.Is(err, context.Canceled) || c != nil {
			t.Errorf("cancelled after %d polls: %v, cloud %v", n, err, c != nil)
		}
		if ctx.asked > n+4 { // the poll that saw it, then the checks on the way out
			t.Errorf("cancelled after %d polls: asked %d times, want it to stop at the next poll", n, ctx.asked)
		}
	}
	c, err := GenerateContext(context.Background(), Options{Nodes: 50, Seed: 3})
	if err != nil || len(c.Cells[0].ComputeNodes) != len(Generate(Options{Nodes: 50, Seed: 3}).Cells[0].ComputeNodes) {
		t.Errorf("uncancelled: %v", err)
	}
}
