package migrate

import (
	"context"
	"fmt"

	"github.com/rpctl/rpctl/claims"
)

// AllocationsName keys the summary row: the nova-manage command whose work
// it does.
const AllocationsName = "heal_allocations"

// Allocations gives every instance without an allocation in Placement the
// one heal_allocations would give it (claims.Batch), as an online
// migration: at most count instances per call, an instance it cannot heal
// reported as a skipped row rather than stopping the run.
type Allocations struct {
	Batch *claims.Batch
}

// Name is the summary row's key.
func (a *Allocations) Name() string { return AllocationsName }

// DoneElsewhere implements SharedWork.
func (a *Allocations) DoneElsewhere() int { return a.Batch.DoneElsewhere() }

// Run heals at most count instances.
func (a *Allocations) Run(ctx context.Context, count int) (int, int, error) {
	found, done, skipped, err := a.Batch.Run(ctx, count)
	if err != nil {
		return found, done, err
	}
	if len(skipped) > 0 {
		rows := make(RowErrors, len(skipped))
		for i, s := range skipped {
			rows[i] = &RowError{Unfit: true, Migration: AllocationsName, Cell: s.Cell, Host: s.Host, What: fmt.Sprintf("instance %s", s.Instance), Err: s.Err}
		}
		return found, done, rows
	}
	return found, done, nil
}
