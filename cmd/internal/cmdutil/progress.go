package cmdutil

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// Progress shows nodes done, rate and ETA: a redrawn bar on a terminal,
// a plain line every few seconds otherwise.
type Progress struct {
	mu    sync.Mutex
	w     io.Writer
	tty   bool
	start time.Time
	last  time.Time
	drawn bool
	// what and unit label the lines: "inventory: 3/10 nodes".
	what, unit string
}

// NewProgressOf is a progress report of what, counted in units. It starts
// the clock when the step is built, so the rate covers planning too and is
// defined even when one group finishes the run.
func NewProgressOf(w io.Writer, tty bool, what, unit string) *Progress {
	now := time.Now()
	return &Progress{w: w, tty: tty, start: now, last: now, what: what, unit: unit}
}

// Update redraws the report; a total below 0 is not known yet (the
// inventory migration still plans the rest of the rows), and then no
// total, bar or ETA is shown.
func (p *Progress) Update(done, total int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	every := 5 * time.Second
	if p.tty {
		every = 100 * time.Millisecond
	}
	if (total < 0 || done < total) && now.Sub(p.last) < every {
		return
	}
	p.last = now
	el := now.Sub(p.start).Seconds()
	rate := 0.0
	if el > 0 {
		rate = float64(done) / el
	}
	if total < 0 {
		line := fmt.Sprintf("%s: %d %s, %.0f %s/s, still reading the rest", p.what, done, p.unit, rate, p.unit)
		if !p.tty {
			fmt.Fprintln(p.w, line)
			return
		}
		fmt.Fprint(p.w, "\r\033[K"+line)
		p.drawn = true
		return
	}
	eta := "?"
	if rate > 0 {
		eta = (time.Duration(float64(total-done)/rate) * time.Second).Round(time.Second).String()
	}
	if !p.tty {
		fmt.Fprintf(p.w, "%s: %d/%d %s, %.0f %s/s, ETA %s\n", p.what, done, total, p.unit, rate, p.unit, eta)
		return
	}
	const width = 30
	fill := 0
	if total > 0 {
		fill = done * width / total
	}
	fmt.Fprintf(p.w, "\r\033[K[%s%s] %d/%d %s  %.0f/s  ETA %s", strings.Repeat("#", fill), strings.Repeat(".", width-fill), done, total, p.unit, rate, eta)
	p.drawn = true
}

// Clear removes the bar so the runner's summary lines start clean.
func (p *Progress) Clear() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty && p.drawn {
		fmt.Fprint(p.w, "\r\033[K")
		p.drawn = false
	}
}

// Before returns w with the bar cleared before each write, for the
// messages a phase prints while its bar is drawn: they start on a clean
// line, and the next update draws the bar again below them.
func (p *Progress) Before(w io.Writer) io.Writer { return clearingWriter{p, w} }

type clearingWriter struct {
	p *Progress
	w io.Writer
}

func (c clearingWriter) Write(b []byte) (int, error) {
	c.p.Clear()
	return c.w.Write(b)
}

// UpdateDone is Update, and Clear once done reaches total: the phase's
// last line stays when it is a plain line, and a terminal's bar gives way
// to what follows.
func (p *Progress) UpdateDone(done, total int) {
	p.Update(done, total)
	if total >= 0 && done >= total {
		p.Clear()
	}
}
