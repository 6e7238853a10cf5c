package gcfloor

import (
	"math"
	"runtime"
	"runtime/debug"
	"testing"
)

// settings reads GOGC and GOMEMLIMIT without changing them.
func settings() (int, int64) {
	pct := debug.SetGCPercent(-1)
	debug.SetGCPercent(pct)
	return pct, debug.SetMemoryLimit(-1)
}

func TestSet(t *testing.T) {
	for _, tc := range []struct {
		name         string
		pct          int
		limit, floor int64
		wantPct      int
		wantLimit    int64
		restores     bool
	}{
		{"defaults: off until the floor", 100, math.MaxInt64, 64 << 20, -1, 64 << 20, true},
		{"GOGC=300 comes back", 300, math.MaxInt64, 64 << 20, -1, 64 << 20, true},
		{"GOGC=off is kept", -1, math.MaxInt64, 64 << 20, -1, math.MaxInt64, false},
		{"a GOMEMLIMIT below the floor is kept", 100, 32 << 20, 64 << 20, 100, 32 << 20, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			oldPct, oldLimit := settings()
			t.Cleanup(func() {
				debug.SetGCPercent(oldPct)
				debug.SetMemoryLimit(oldLimit)
			})
			debug.SetGCPercent(tc.pct)
			debug.SetMemoryLimit(tc.limit)
			Set(tc.floor)
			if pct, limit := settings(); pct != tc.wantPct || limit != tc.wantLimit {
				t.Fatalf("after Set: GOGC %d, limit %d; want %d, %d", pct, limit, tc.wantPct, tc.wantLimit)
			}
			if !tc.restores {
				return
			}
			// A collection runs the sentinel's finalizer, on its own
			// goroutine: collect until the settings come back (a bounded
			// number of rounds, not a wait on the clock).
			for range 1000 {
				runtime.GC()
				runtime.Gosched()
				if pct, limit := settings(); pct == tc.pct && limit == tc.limit {
					return
				}
			}
			pct, limit := settings()
			t.Fatalf("after collections: GOGC %d, limit %d; want %d, %d back", pct, limit, tc.pct, tc.limit)
		})
	}
}
