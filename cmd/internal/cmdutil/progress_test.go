package cmdutil

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestProgressBeforeAndDone: a message written through Before starts on a
// clean line on a terminal, and UpdateDone leaves the last plain line but
// clears a terminal's bar at the end.
func TestProgressBeforeAndDone(t *testing.T) {
	for _, tty := range []bool{false, true} {
		t.Run(fmt.Sprint("tty=", tty), func(t *testing.T) {
			var b bytes.Buffer
			p := NewProgressOf(&b, tty, "aggregates", "memberships")
			p.last = p.last.Add(-time.Minute) // past the throttle: draw now
			p.UpdateDone(0, 2)
			fmt.Fprintln(p.Before(&b), "Failed to get aggregates")
			p.UpdateDone(2, 2)
			got := b.String()
			if !strings.Contains(got, "Failed to get aggregates\n") {
				t.Fatalf("the message is missing: %q", got)
			}
			if tty {
				if !strings.Contains(got, "\r\033[KFailed") || !strings.HasSuffix(got, "\r\033[K") {
					t.Errorf("the bar is not cleared before the message and at the end: %q", got)
				}
			} else if !strings.Contains(got, "aggregates: 2/2 memberships") {
				t.Errorf("no last line: %q", got)
			}
		})
	}
}
