package candidates

import "math"

// Placement's query-parameter parsers (placement/util.py), exported for the
// database backend of GET /resource_providers, which takes the same
// member_of, required and resources syntax as GET /allocation_candidates
// and must answer the same 400s. Errors are *APIError with Placement's
// message.

// ParseMemberOfParam is util.normalize_member_of_qs_param for one member_of
// value: the any-of aggregate uuids it requires, or the ones it forbids.
func ParseMemberOfParam(v string) (required, forbidden []string, err error) {
	return parseMemberOf(v)
}

// ParseRequiredParam is util.normalize_traits_qs_param for one required
// value at microversion 1.39 (forbidden traits and "in:" allowed): each
// inner slice of required is an any-of set.
func ParseRequiredParam(v string) (required [][]string, forbidden []string, err error) {
	return parseTraits(v, true, true)
}

// ParseResourcesParam is util.normalize_resources_qs_param: the amount of
// each class (a repeated class keeps its last amount) and the classes in
// the order they first appear, as Python's dict keeps them. An amount
// beyond int64 (Placement on MySQL finds no provider for it) is
// math.MaxInt64, more than any inventory's max_unit.
func ParseResourcesParam(v string) (amounts map[string]int64, order []string, err error) {
	return parseResourceAmounts(v, func(string) (int64, error) { return math.MaxInt64, nil })
}
