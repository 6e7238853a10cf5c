package claims

import (
	"fmt"
	"strings"

	"github.com/rpctl/rpctl/candidates"
)

// refused turns Placement's refusal of a healed instance's allocation into
// what an operator needs: the class that does not fit and what to do.
// Placement's messages name the class in one of three forms (capacity,
// units, no inventory), which decide the advice.
func refused(we *WriteError) error {
	d := we.Detail
	kind, class := candidates.ReasonKind(""), ""
	switch {
	case strings.Contains(d, "would exceed the capacity"):
		kind, class = candidates.ReasonCapacity, quotedAfter(d, "allocation for '")
	case strings.Contains(d, "min_unit, max_unit, or step_size of "):
		kind = candidates.ReasonMaxUnit
		class = strings.TrimSuffix(strings.TrimSpace(d[strings.Index(d, "step_size of ")+len("step_size of "):]), ".")
	case strings.Contains(d, "Inventory for '"):
		kind, class = candidates.ReasonMissingClass, quotedAfter(d, "Inventory for '")
	}
	if we.Conflict {
		return fmt.Errorf("Placement refused its allocation: %s; another writer changed the consumer: run the heal again", d)
	}
	what := "its allocation"
	if class != "" {
		what = class
	}
	return fmt.Errorf("%s does not fit: Placement refused the allocation (%s); %s", what, d, placeAdvice(kind, class))
}

func quotedAfter(s, prefix string) string {
	i := strings.Index(s, prefix)
	if i < 0 {
		return ""
	}
	rest := s[i+len(prefix):]
	if j := strings.IndexByte(rest, '\''); j >= 0 {
		return rest[:j]
	}
	return ""
}
