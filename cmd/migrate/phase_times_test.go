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
		{nil, nil, "time: 0s in all (each under 100ms)"},
		{[]migrate.Row{{Migration: "a"}, {Migration: "b"}}, map[string]time.Duration{"a": 20 * time.Millisecond, "b": 30 * time.Millisecond},
			"time: 50ms in all (each under 100ms)"},
		{[]migrate.Row{{Migration: "aggregates"}, {Migration: "fill_virtual_interface_list"}, {Migration: "migrate_compute_node_inventory"}},
			map[string]time.Duration{"aggregates": 4140 * time.Millisecond, "fill_virtual_interface_list": 40 * time.Millisecond, "migrate_compute_node_inventory": 12*time.Second + 260*time.Millisecond},
			"time: aggregates 4.1s, migrate_compute_node_inventory 12.3s (16.4s in all)"},
	} {
		if got := phaseTimes(tc.rows, tc.took); got != tc.want {
			t.Errorf("phaseTimes(%v) = %q, want %q", tc.rows, got, tc.want)
		}
	}
}
