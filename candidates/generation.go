package candidates

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/rpctl/rpctl/internal/release"
)

// Generation is what a release's Placement reads of placement.conf to
// bound and order the generation of allocation candidates, as Options'
// MaxCandidates and Strategy.
type Generation struct {
	// Applies says the release's Placement has the options at all.
	Applies bool
	// MaxCandidates and Strategy are Options' fields for the options
	// (0 and "depth-first" when unset: no bound).
	MaxCandidates int
	Strategy      string
}

// generationOptions says whether release rel's Placement reads
// [placement] max_allocation_candidates and
// allocation_candidates_generation_strategy: Placement 13.0.0 does
// (placement/conf/placement.py:66-67 IntOpt default -1, :92-93 StrOpt choices
// depth-first|breadth-first; placement/objects/allocation_candidate.py:722
// _generate_areq_lists, :784 and :822 in _merge_candidates), Placement
// 8.0.0 has neither (placement/conf/placement.py). They were written for
// Placement 13 (placement commits 9351241f "Add a global limit on the
// number of allocation candidates" and f20e13f0 "Add round-robin candidate
// generation strategy") and backported to the stable branches: Placement
// 10.0.1 (2023.2), 11.0.1 (2024.1) and 12.0.1 (2024.2) read them, their
// placement/conf/placement.py and allocation_candidate.py being 13.0.0's
// (12.0.2 adds [workarounds] optimize_for_wide_provider_trees, which
// prunes products that cannot fit and changes no answer). 2023.1 got no
// point release after 9.0.0, which has neither. A release's x.0.0 lacks
// them: rpctl follows the newest point release of each series, as an
// operator who sets the options in placement.conf runs one that reads them.
func generationOptions(rel release.Name) (bool, error) {
	switch rel {
	case "", release.Zed, release.R2023_1:
		return false, nil
	case release.R2023_2, release.R2024_1, release.R2024_2, release.R2025_1:
		return true, nil
	}
	return false, fmt.Errorf("no allocation-candidate generation rules for release %q", rel)
}

// GenerationOf parses placement.conf's max_allocation_candidates and
// allocation_candidates_generation_strategy (maxRaw and strategyRaw as
// written, "" when unset; maxSrc and strategySrc name where, for errors)
// as release rel's Placement applies them. Placement stops merging once
// the set of candidates holds max_allocation_candidates (the check comes
// after a candidate is added, so 0 still gives one); a negative value is
// no bound. Below microversion 1.29 on a cloud with trees the candidates
// exclude_nested_providers drops afterwards have counted toward it (the
// searcher's merge holds that order). A release whose Placement lacks the
// options ignores them.
func GenerationOf(rel release.Name, maxRaw, maxSrc, strategyRaw, strategySrc string) (Generation, error) {
	g := Generation{Strategy: "depth-first"}
	ok, err := generationOptions(rel)
	if err != nil || !ok {
		return g, err
	}
	g.Applies = true
	if v := strings.TrimSpace(maxRaw); v != "" {
		// oslo.config's Integer type: int() of the stripped string.
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return g, fmt.Errorf("%s: [placement] max_allocation_candidates: expected an integer, got %q", maxSrc, maxRaw)
		}
		switch {
		case n < 0:
		case n == 0:
			g.MaxCandidates = 1
		case n > int64(^uint(0)>>1):
			g.MaxCandidates = int(^uint(0) >> 1)
		default:
			g.MaxCandidates = int(n)
		}
	}
	if strategyRaw != "" {
		// A StrOpt with choices: the value as written, compared exactly.
		if strategyRaw != "depth-first" && strategyRaw != "breadth-first" {
			return g, fmt.Errorf("%s: [placement] allocation_candidates_generation_strategy: %q is not one of depth-first, breadth-first", strategySrc, strategyRaw)
		}
		g.Strategy = strategyRaw
	}
	return g, nil
}
