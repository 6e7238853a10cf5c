package migrate

import (
	"errors"
	"fmt"
	"strings"
	"sync"
)

// SkipLog is where the migrations of one run tell each other which
// compute node rows were skipped as bad, so that a later step's message
// names the cause (the inventory step skipped the row, and why) instead of
// a guess ("run migrate inventory first", which would skip it again). The
// inventory migration records its skipped rows (Inventory.Skipped); the
// aggregate sync looks a host up (AggregateSync.Skipped). A nil SkipLog
// records and finds nothing.
type SkipLog struct {
	mu     sync.Mutex
	byHost map[string]*RowError // hostKey(compute_nodes.host)
}

// add records a row the inventory migration skipped, by its compute host.
func (l *SkipLog) add(computeHost string, re *RowError) {
	if l == nil || computeHost == "" || re == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.byHost == nil {
		l.byHost = map[string]*RowError{}
	}
	l.byHost[hostKey(computeHost)] = re
}

// host returns the skipped row of a compute host, nil when none.
func (l *SkipLog) host(computeHost string) *RowError {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.byHost[hostKey(computeHost)]
}

// badColumns names what made a skipped row bad: its columns when they
// are known ("vcpus, memory_mb, local_gb"), else its error.
func badColumns(re *RowError) string {
	var many FieldErrors
	if errors.As(re.Err, &many) {
		return strings.Join(many.Columns(), ", ")
	}
	var one *FieldError
	if errors.As(re.Err, &one) {
		return one.Field
	}
	return re.Err.Error()
}

// skippedBecause is the reason a host of an aggregate is skipped when its
// compute node row was skipped as bad earlier in the run.
func skippedBecause(re *RowError) error {
	return fmt.Errorf("not placed in its aggregates: %s skipped its compute node (%s), so it has no resource provider (bad: %s); fix that row as its %s line says and run again",
		re.Migration, nodeWhere(re), badColumns(re), re.Migration)
}

// nodeWhere names a skipped compute node row: "cell C: compute node id=N".
func nodeWhere(re *RowError) string {
	where := fmt.Sprintf("compute node id=%d", re.ID)
	if re.Cell != "" {
		where = fmt.Sprintf("cell %s: %s", re.Cell, where)
	}
	return where
}
