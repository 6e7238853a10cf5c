// Package fuzzcheck holds what rpctl's fuzz targets share.
package fuzzcheck

import (
	"testing"
	"time"
)

// Limit is how long one input may take. Go's fuzzing engine has no timeout
// per input, so a parser that hangs (or crawls) on some input would only
// stall the run; Within turns that into a failure that names the input.
const Limit = 10 * time.Second

// Within runs f and fails t if it has not returned after Limit.
func Within(t testing.TB, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(Limit):
		t.Fatalf("input took more than %v", Limit)
	}
}

// OneLine fails t when an error message spans several lines: bad input must
// get one clear line.
func OneLine(t testing.TB, err error) {
	t.Helper()
	for _, c := range err.Error() {
		if c == '\n' || c == '\r' {
			t.Fatalf("error message is not one line: %q", err.Error())
		}
	}
}
