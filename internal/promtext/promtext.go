// Package promtext is Prometheus' text exposition format 0.0.4: metric
// families and their writer, and what an exporter serves. It depends on
// no Prometheus library, so that -f prometheus costs rpctl nothing at
// start-up.
package promtext

import (
	"context"
	"io"
	"math"
	"net"
	"strconv"
	"strings"
	"time"
)

// Type is a family's TYPE line.
type Type string

// The types rpctl publishes.
const (
	Gauge Type = "gauge"
	// Untyped is for os-capacity's openstack_free_capacity_by_flavor_total:
	// a gauge whose name ends in _total, which Prometheus' lint reserves for
	// counters. Declaring it untyped keeps the name (and every query on it)
	// and passes promtool check metrics.
	Untyped Type = "untyped"
)

// Sample is one time series of a family: its label values, in the order of
// Family.Labels.
type Sample struct {
	Values []string
	Value  float64
}

// Family is one metric with its samples.
type Family struct {
	Name    string
	Help    string
	Type    Type
	Labels  []string
	Samples []Sample
}

// Add appends a sample; values are in the order of f.Labels.
func (f *Family) Add(v float64, values ...string) {
	f.Samples = append(f.Samples, Sample{Values: values, Value: v})
}

// WriteText writes the families in the text exposition format 0.0.4.
// A family without samples still gets its HELP and TYPE lines, so that a
// reader can tell "nothing found" (an empty orphan list) from "not
// measured".
func WriteText(w io.Writer, fams []*Family) error {
	var buf []byte
	for _, f := range fams {
		// A family at a time: the page of a large cloud is tens of
		// megabytes, which a writer to a file or pipe need not hold.
		buf = AppendFamily(buf[:0], f)
		if _, err := w.Write(buf); err != nil {
			return err
		}
	}
	return nil
}

// AppendText appends the families in the text exposition format 0.0.4, as
// WriteText writes them.
func AppendText(dst []byte, fams []*Family) []byte {
	for _, f := range fams {
		dst = AppendFamily(dst, f)
	}
	return dst
}

// AppendFamily appends one family: its HELP and TYPE lines, then its
// samples.
func AppendFamily(b []byte, f *Family) []byte {
	b = append(b, "# HELP "...)
	b = append(b, f.Name...)
	b = append(b, ' ')
	b = appendEscaped(b, f.Help, false)
	b = append(b, "\n# TYPE "...)
	b = append(b, f.Name...)
	b = append(b, ' ')
	b = append(b, f.Type...)
	b = append(b, '\n')
	for _, s := range f.Samples {
		b = append(b, f.Name...)
		if len(f.Labels) > 0 {
			b = append(b, '{')
			for i, l := range f.Labels {
				if i > 0 {
					b = append(b, ',')
				}
				b = append(b, l...)
				b = append(b, `="`...)
				b = appendEscaped(b, s.Values[i], true)
				b = append(b, '"')
			}
			b = append(b, '}')
		}
		b = append(b, ' ')
		b = appendValue(b, s.Value)
		b = append(b, '\n')
	}
	return b
}

// appendEscaped escapes what 0.0.4 requires: backslash and line feed in a
// HELP text, and double quotes too in a label value.
func appendEscaped(b []byte, s string, label bool) []byte {
	special := "\\\n"
	if label {
		special = "\\\n\""
	}
	for {
		i := strings.IndexAny(s, special)
		if i < 0 {
			return append(b, s...)
		}
		b = append(b, s[:i]...)
		switch s[i] {
		case '\\':
			b = append(b, `\\`...)
		case '\n':
			b = append(b, `\n`...)
		default:
			b = append(b, `\"`...)
		}
		s = s[i+1:]
	}
}

// appendValue prints integers whole (counts of instances up to 2^53) and
// anything else in Go's shortest form, which Prometheus parses.
func appendValue(b []byte, v float64) []byte {
	switch {
	case math.IsInf(v, 1):
		return append(b, "+Inf"...)
	case math.IsInf(v, -1):
		return append(b, "-Inf"...)
	case math.IsNaN(v):
		return append(b, "NaN"...)
	case v == math.Trunc(v) && math.Abs(v) < 1<<53:
		return strconv.AppendInt(b, int64(v), 10)
	}
	return strconv.AppendFloat(b, v, 'g', -1, 64)
}

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
	// IdleTimeout closes a keep-alive connection that has sent no request
	// for that long (0: DefaultIdleTimeout).
	IdleTimeout time.Duration
}

// DefaultIdleTimeout is how long the exporter keeps an idle keep-alive
// connection: longer than Prometheus' default scrape interval (1m), so
// that a scraper's connection is reused, and short enough that idle
// connections left by clients that went away do not pile up.
const DefaultIdleTimeout = 90 * time.Second
