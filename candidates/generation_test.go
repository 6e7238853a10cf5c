package candidates

import (
	"testing"

	"github.com/rpctl/rpctl/internal/release"
)

// TestGenerationOf: placement.conf's candidate-generation options as each
// release's Placement reads them (Placement 13.0.0: max_allocation_candidates
// IntOpt default -1, checked after a candidate is added; strategy choices
// depth-first|breadth-first; Placement 8.0.0: neither option).
func TestGenerationOf(t *testing.T) {
	for _, tc := range []struct {
		rel           release.Name
		max, strategy string
		want          Generation
		wantErr       bool
	}{
		{rel: release.Zed, max: "4", strategy: "breadth-first", want: Generation{Strategy: "depth-first"}},
		{rel: release.Zed, max: "x", strategy: "sideways", want: Generation{Strategy: "depth-first"}},
		{rel: release.R2025_1, want: Generation{Applies: true, Strategy: "depth-first"}},
		{rel: release.R2025_1, max: "4", want: Generation{Applies: true, MaxCandidates: 4, Strategy: "depth-first"}},
		{rel: release.R2025_1, max: " 7 ", strategy: "breadth-first", want: Generation{Applies: true, MaxCandidates: 7, Strategy: "breadth-first"}},
		{rel: release.R2025_1, max: "0", want: Generation{Applies: true, MaxCandidates: 1, Strategy: "depth-first"}},
		{rel: release.R2025_1, max: "-1", want: Generation{Applies: true, Strategy: "depth-first"}},
		{rel: release.R2025_1, max: "-20", want: Generation{Applies: true, Strategy: "depth-first"}},
		{rel: release.R2025_1, max: "4.5", wantErr: true},
		{rel: release.R2025_1, strategy: "Breadth-First", wantErr: true},
		// Placement 9.0.0 (2023.1) has neither option; 10.0.1, 11.0.1 and
		// 12.0.1 (2023.2-2024.2, backports of placement 9351241f and f20e13f0)
		// read both as 13.0.0 does.
		{rel: release.R2023_1, max: "4", strategy: "breadth-first", want: Generation{Strategy: "depth-first"}},
		{rel: release.R2023_2, max: "4", strategy: "breadth-first", want: Generation{Applies: true, MaxCandidates: 4, Strategy: "breadth-first"}},
		{rel: release.R2024_1, max: "0", want: Generation{Applies: true, MaxCandidates: 1, Strategy: "depth-first"}},
		{rel: release.R2024_2, max: "4.5", wantErr: true},
		{rel: release.R2024_2, max: "-1", strategy: "breadth-first", want: Generation{Applies: true, Strategy: "breadth-first"}},
		{rel: "2025.2", wantErr: true},
	} {
		got, err := GenerationOf(tc.rel, tc.max, "placement.conf:3", tc.strategy, "placement.conf:4")
		if (err != nil) != tc.wantErr || (!tc.wantErr && got != tc.want) {
			t.Errorf("GenerationOf(%s, %q, %q) = %+v, %v; want %+v, error %v", tc.rel, tc.max, tc.strategy, got, err, tc.want, tc.wantErr)
		}
	}
}
