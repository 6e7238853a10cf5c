package migrate

import (
	"testing"
	"time"

	"github.com/rpctl/rpctl/migrate"
)

func TestPhaseTimes(t *testing.T) {
	inv := "migrate_compute_node_inventory"
	for _, tc := range []struct {
		rows  []migrate.Row
		took  map[string]time.Duration
		parts map[string][]migrate.PhasePart
		want  string
	}{
		{nil, nil, nil, "time: 0s in all (each under 100ms)"},
		{[]migrate.Row{{Migration: "a"}, {Migration: "b"}}, map[string]time.Duration{"a": 20 * time.Millisecond, "b": 30 * time.Millisecond}, nil,
			"time: 50ms in all (each under 100ms)"},
		{[]migrate.Row{{Migration: "aggregates"}, {Migration: "fill_virtual_interface_list"}, {Migration: "migrate_compute_node_inventory"}},
			map[string]time.Duration{"aggregates": 4140 * time.Millisecond, "fill_virtual_interface_list": 40 * time.Millisecond, "migrate_compute_node_inventory": 12*time.Second + 260*time.Millisecond}, nil,
			"time: aggregates 4.1s, migrate_compute_node_inventory 12.3s (16.4s in all)"},
		// The layout switch phase follows the inventory step's time.
		{[]migrate.Row{{Migration: "aggregates"}, {Migration: inv}},
			map[string]time.Duration{"aggregates": 4140 * time.Millisecond, inv: 12*time.Second + 260*time.Millisecond},
			map[string][]migrate.PhasePart{inv: {{Name: "layout switch", Items: 2000, Unit: "nodes", Took: 9*time.Second + 870*time.Millisecond}}},
			"time: aggregates 4.1s, " + inv + " 12.3s (layout switch of 2000 nodes 9.9s) (16.4s in all)"},
		// Shown even when the step was quick.
		{[]migrate.Row{{Migration: inv}}, map[string]time.Duration{inv: 40 * time.Millisecond},
			map[string][]migrate.PhasePart{inv: {{Name: "layout switch", Items: 3, Unit: "nodes", Took: 20 * time.Millisecond}}},
			"time: " + inv + " 0s (layout switch of 3 nodes 0s) (0s in all)"},
	} {
		if got := phaseTimes(tc.rows, tc.took, tc.parts); got != tc.want {
			t.Errorf("phaseTimes(%v) = %q, want %q", tc.rows, got, tc.want)
		}
	}
}
