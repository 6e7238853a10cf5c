package cmdutil

import (
	"errors"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/rpctl/rpctl/candidates"
)

// Every command that searches with the built-in core (candidates,
// capacity, claims create) stops a search at the core's ceilings with the
// same codes and one line naming the ceiling and the flag that moves it.
const (
	// ExitCandidateCeiling: the answer would hold more allocation
	// requests, or take more memory, than the ceiling allows: not 2, which
	// says the request itself is invalid.
	ExitCandidateCeiling = 3
	// ExitStepCeiling: the search walked --max-steps steps without
	// finishing (request groups that combine in too many ways).
	ExitStepCeiling = 5
)

// DefaultCandidateCeiling is the most allocation requests one answer may
// hold when --max-candidates is not given. Placement bounds the same work
// with [placement]max_allocation_candidates; here, going past it is an
// error (exit 3), not a silent cut, because a cut answer would look
// complete. Beside it the answer's memory is bounded
// (candidates.DefaultCeilingBytes, 256 MB), which with the search's own
// working set keeps a search under 512 MB of peak RSS whatever the number
// of request groups.
const DefaultCandidateCeiling = candidates.DefaultCeiling

// SearchExitCodes are the rows every searching command adds to its table.
func SearchExitCodes() []ExitCodeRow {
	return []ExitCodeRow{
		{ExitCandidateCeiling, fmt.Sprintf("a search would answer more than %d allocation requests or %d MB of them (nothing printed as if complete)", candidates.DefaultCeiling, candidates.DefaultCeilingBytes>>20)},
		{ExitStepCeiling, "a search gave up after --max-steps steps (its request groups combine in too many ways)"},
	}
}

// AddMaxStepsFlag adds --max-steps, the one bound on a search's walk.
func AddMaxStepsFlag(fl *pflag.FlagSet, v *int64) {
	fl.Int64Var(v, "max-steps", candidates.DefaultMaxSteps, "give up a search after N steps of its walk with exit 5; 0 = no bound")
}

// SearchBounds is the core's options for the flags given: a 0 flag lifts
// its bound (candidates.NoLimit), a flag not given keeps the default.
func SearchBounds(maxSteps int64) candidates.Options {
	var o candidates.Options
	if maxSteps == 0 {
		o.MaxSteps = candidates.NoLimit
	} else {
		o.MaxSteps = maxSteps
	}
	return o
}

// Hints of searchError: what the command's user can change when a search
// reaches the ceiling on its answer.
const (
	CandidatesHint = "narrow the request, keep the first N with --limit N, stop after N with --max-candidates N, or lift the ceiling with --max-candidates 0"
	CapacityHint   = "count fewer hosts (--aggregate) or fewer flavors at once, or flavors with fewer request groups"
	ClaimHint      = "ask for fewer request groups"
)

// SearchError gives a search stopped at a ceiling its exit code and one
// line saying what to change (hint, for the ceiling on the answer); other
// errors are returned as they are.
func SearchError(err error, hint string) error {
	var ce *candidates.CeilingError
	var se *candidates.StepsError
	switch {
	case errors.As(err, &ce):
		return &ExitError{Code: ExitCandidateCeiling, Err: fmt.Errorf("%w: %s", err, hint)}
	case errors.As(err, &se):
		return &ExitError{Code: ExitStepCeiling, Err: fmt.Errorf("%w: narrow the request (fewer request groups), or lift the bound with --max-steps 0", err)}
	}
	return err
}
