// Package promtext is Prometheus' text exposition format 0.0.4: metric
// families and their writer, and what an exporter serves. It depends on
// no Prometheus library, so that -f prometheus costs rpctl nothing at
// start-up.
package promtext

import (
	"bufio"
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
	b := bufio.NewWriter(w)
	for _, f := range fams {
		b.WriteString("# HELP ")
		b.WriteString(f.Name)
		b.WriteByte(' ')
		b.WriteString(escapeHelp(f.Help))
		b.WriteString("\n# TYPE ")
		b.WriteString(f.Name)
		b.WriteByte(' ')
		b.WriteString(string(f.Type))
		b.WriteByte('\n')
		for _, s := range f.Samples {
			b.WriteString(f.Name)
			if len(f.Labels) > 0 {
				b.WriteByte('{')
				for i, l := range f.Labels {
					if i > 0 {
						b.WriteByte(',')
					}
					b.WriteString(l)
					b.WriteString(`="`)
					b.WriteString(escapeLabel(s.Values[i]))
					b.WriteByte('"')
				}
				b.WriteByte('}')
			}
			b.WriteByte(' ')
			b.WriteString(formatValue(s.Value))
			b.WriteByte('\n')
		}
	}
	return b.Flush()
}

// escapeHelp escapes what 0.0.4 requires in a HELP text: backslash and
// line feed.
func escapeHelp(s string) string {
	if !strings.ContainsAny(s, "\\\n") {
		return s
	}
	return strings.NewReplacer(`\`, `\\`, "\n", `\n`).Replace(s)
}

// escapeLabel escapes a label value: backslash, double quote, line feed.
func escapeLabel(s string) string {
	if !strings.ContainsAny(s, "\\\"\n") {
		return s
	}
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s)
}

// formatValue prints integers whole (counts of instances up to 2^53) and
// anything else in Go's shortest form, which Prometheus parses.
func formatValue(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case math.IsNaN(v):
		return "NaN"
	case v == math.Trunc(v) && math.Abs(v) < 1<<53:
		return strconv.FormatInt(int64(v), 10)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
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
}
