// Package gcfloor keeps the garbage collector out of short runs.
package gcfloor

import (
	"runtime"
	"runtime/debug"
)

// sentinel holds a pointer so that it is never one of the tiny allocator's
// blocks, whose finalizers may not run.
type sentinel struct{ _ *int }

// Set keeps the collector off until the heap first reaches floor bytes,
// then hands back to the settings it found (GOGC, GOMEMLIMIT). A one-shot
// command such as `rpctl candidates` allocates a few megabytes and exits:
// with the default 4 MB start it collects several times, for memory the
// exit frees anyway. A run that does grow past floor is collected from then on as
// usual, so peak memory is at most floor above what it would have been.
//
// GOGC=off and a GOMEMLIMIT below floor are the user's choice and kept.
func Set(floor int64) {
	pct := debug.SetGCPercent(-1)
	if pct < 0 {
		return // GOGC=off already
	}
	limit := debug.SetMemoryLimit(-1) // -1 only reads it
	if limit < floor {
		debug.SetGCPercent(pct)
		return
	}
	// The memory limit is what triggers the first collection with the
	// percentage off; that collection finds the sentinel unreachable and
	// its finalizer restores both.
	debug.SetMemoryLimit(floor)
	runtime.SetFinalizer(&sentinel{}, func(*sentinel) {
		debug.SetGCPercent(pct)
		debug.SetMemoryLimit(limit)
	})
}
