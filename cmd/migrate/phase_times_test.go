package migrate

import (
	"testing"
	"time"

	"github.com/rpctl/rpctl/migrate"
)

func TestPhaseTimes(t *testing.T) {
	for _, tc := range []struct {
		rows []migrate.Row
		took map[string]time.Duration
		want string
	}{
		{nil, nil, "time: (0s in all)"},
		{[]migrate.Row{{Migration: "aggregates"}, {Migration: "migrate_compute_node_inventory"}},
			map[string]time.Duration{"aggregates": 4140 * time.Millisecond, "migrate_compute_node_inventory": 12*time.Second + 260*time.Millisecond},
			"time: aggregates 4.1s, migrate_compute_node_inventory 12.3s (16.4s in all)"},
	} {
		if got := phaseTimes(tc.rows, tc.took); got != tc.want {
			t.Errorf("phaseTimes(%v) = %q, want %q", tc.rows, got, tc.want)
		}
	}
}
