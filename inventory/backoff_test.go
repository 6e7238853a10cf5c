package inventory

import (
	"testing"
	"time"
)

func TestBackoffLimit(t *testing.T) {
	ms := time.Millisecond
	for _, c := range []struct {
		n    int
		last time.Duration
		want time.Duration
	}{
		{1, 30 * ms, 30 * ms},
		{2, 30 * ms, 60 * ms},
		{4, 30 * ms, 240 * ms},
		{6, 30 * ms, 960 * ms},
		{7, 30 * ms, maxBackoff},
		{9, 30 * ms, maxBackoff},
		{1, 0, ms},     // a fake store's instant attempt still spreads writers
		{3, 0, 4 * ms}, // doubling from the floor
		{1, 5 * time.Second, maxBackoff},
		{60, 500 * ms, maxBackoff}, // no overflow however many conflicts
	} {
		if got := backoffLimit(c.n, c.last); got != c.want {
			t.Errorf("backoffLimit(%d, %v) = %v, want %v", c.n, c.last, got, c.want)
		}
	}
}
