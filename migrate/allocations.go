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
	// Skipped is the run's SkipLog: an instance on a host whose compute
	// node row the inventory step skipped as bad is reported with that
	// row, not with the refusal Placement gave its allocation (a provider
	// that does not exist, which "see why with rpctl candidates" cannot
	// explain).
	Skipped *SkipLog
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
			why := s.Err
			if re := a.Skipped.host(s.Host); re != nil {
				why = fmt.Errorf("not healed: %s skipped its compute node (%s), so it has no resource provider (bad: %s); fix that row as its %s line says and run again",
					re.Migration, nodeWhere(re), badColumns(re), re.Migration)
			}
			rows[i] = &RowError{Unfit: true, Migration: AllocationsName, Cell: s.Cell, Host: s.Host, What: fmt.Sprintf("instance %s", s.Instance), Err: why}
		}
		return found, done, rows
	}
	return found, done, nil
}
