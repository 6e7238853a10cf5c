package metrics

import (
	"context"
	"io"
	"net"
	"time"
)

// PartError is one part of a collection (capacity, status, audit) that
// failed; the other parts are still published.
type PartError struct {
	Part string
	Err  error
}

// Run is one collection: the families of the parts that worked, and the
// errors of those that did not.
type Run struct {
	Families []*Family
	Errors   []PartError
	// Durations are how long each part took.
	Durations map[string]time.Duration
}

// ServeOptions are what an exporter serves: Collect runs every Interval in
// the background, and scrapes of Listener get the last run's families.
type ServeOptions struct {
	Listener net.Listener
	Interval time.Duration
	Collect  func(ctx context.Context) Run
	// Log gets one line per collection and every error.
	Log io.Writer
}
