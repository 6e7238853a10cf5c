package testdb

import "runtime"

// Allocated is the bytes f allocates (runtime.MemStats.TotalAlloc: every
// allocation, freed or not, so it bounds the peak): memory bounds proven in
// bytes, not by a clock.
func Allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}
