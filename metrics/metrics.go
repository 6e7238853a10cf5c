// Package metrics turns rpctl's results (capacity per flavor, upgrade
// checks, claim audits, Placement's usage) into Prometheus metric families,
// and writes them in the text exposition format 0.0.4 for node_exporter's
// textfile collector. It has no dependency on a Prometheus library: the
// exporter (package exporter) hands the same families to client_golang.
//
// Where os-capacity measures the same thing, its metric names and labels
// are kept, so that dashboards and alerts built on it keep working, with
// rpctl's exact counts; rpctl's own metrics start with rpctl_.
package metrics

import (
	"io"

	"github.com/rpctl/rpctl/internal/promtext"
)

// The format's types, under the names this package's callers use.
type (
	Family       = promtext.Family
	Sample       = promtext.Sample
	Type         = promtext.Type
	Run          = promtext.Run
	PartError    = promtext.PartError
	ServeOptions = promtext.ServeOptions
)

// The types rpctl publishes.
const (
	Gauge   = promtext.Gauge
	Untyped = promtext.Untyped
)

func gauge(name, help string, labels ...string) *Family {
	return &Family{Name: name, Help: help, Type: Gauge, Labels: labels}
}

// WriteText writes the families in the text exposition format 0.0.4.
func WriteText(w io.Writer, fams []*Family) error { return promtext.WriteText(w, fams) }
