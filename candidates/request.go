// Package candidates is rpctl's built-in Placement core: an in-memory model of
// resource providers and the GET /allocation_candidates search over it, with
// Placement 8.0.0's query parsing (microversions 1.10–1.39), its response
// bodies and an explanation of why a root provider yielded nothing.
//
// The package does no I/O: callers load a Model from wherever the Placement
// data lives (see the storage package) and hand it requests.
//
// # Capacity arithmetic
//
// Placement 8.0.0 checks capacity in two places, with two readings of
// allocation_ratio, and the model keeps both (Inventory.SQLRatio and
// Inventory.AllocationRatio; ModelInput.Ratios says which database they came
// from):
//
//   - Per request group and resource class, in SQL
//     (research_context._capacity_check_clause): used + amount <=
//     (total - reserved) * allocation_ratio, evaluated by the database server
//     in double precision. On MySQL/MariaDB the column is a 4-byte FLOAT, so
//     the server multiplies by the stored float32 widened to a double: 1.3 is
//     1.2999999523162842, and 20 + 6 <= 25.999999046325684 fails. The model
//     keeps floor((total - reserved) * SQLRatio) as Inventory.SQLLimit.
//   - In Python, on every candidate after the groups are merged and the
//     amounts per provider and class summed
//     (RequestWideSearchContext.exceeds_capacity): used + sum <= capacity and
//     sum <= max_unit, with capacity = int((total - reserved) * ratio) where
//     ratio is float() of the text PyMySQL received: MariaDB prints FLOAT with
//     six significant digits ("1.3", "1.23457"). The same capacity is
//     provider_summaries' capacity (_build_provider_summaries) and the model's
//     Inventory.Capacity.
//
// So a provider is offered for one group's amount only if both bounds hold
// (Inventory.Room); on MySQL either can be the stricter one (1.3 makes SQL
// stricter; a ratio stored as 1.2345651 but printed "1.23457" makes Python's
// capacity larger than the SQL bound, and one stored as 1.2345649, printed
// "1.23456", smaller). Merged sums are held to Capacity alone, as Placement
// does. On SQLite the column is a double that SQL and Python both read, the
// two bounds coincide, and a model loaded from SQLite must not (and does
// not) round like MySQL. --explain's capacity reason reports the same room
// the search uses and, when the SQL bound is the stricter, says so.
package candidates

// Microversion is a Placement API microversion "1.Minor". Only major version 1
// exists, so the minor number is all we keep.
type Microversion int

// Common microversions that change allocation-candidate behaviour.
const (
	MinMicroversion Microversion = 10
	MaxMicroversion Microversion = 39
)

// RequestGroup is one request group of GET /allocation_candidates: the
// unsuffixed group (Suffix "") or a granular group resources{Suffix}.
// It mirrors placement.lib.RequestGroup.
type RequestGroup struct {
	// Suffix is "" for the unsuffixed group, else the suffix as written
	// ("1", "_NET1", ...), without the key prefix.
	Suffix string
	// Resources maps resource class name to requested amount. Empty for a
	// resourceless group (1.36+).
	Resources map[string]int64
	// ResourceOrder is Resources' keys in the order the query first names
	// them (a Python dict's order), so that of several unknown classes the
	// one Placement names is reported. Nil for hand-built requests, which
	// then report the alphabetically first.
	ResourceOrder []string
	// RequiredTraits is a conjunction of disjunctions: every inner slice is an
	// any-of set (a plain trait is a one-element set; "in:A,B" from 1.39 is a
	// two-element set).
	RequiredTraits [][]string
	// ForbiddenTraits are "!TRAIT" entries.
	ForbiddenTraits []string
	// MemberOf is a conjunction of any-of aggregate UUID sets (repeated
	// member_of params are ANDed from 1.24; "in:" gives the any-of set).
	MemberOf [][]string
	// ForbiddenAggs are "!UUID" / "!in:U1,U2" aggregate UUIDs (1.32+).
	ForbiddenAggs []string
	// InTree is a provider UUID whose tree the group is confined to (1.31+),
	// "" when absent.
	InTree string
}

// UseSameProvider reports whether all of the group's resources must come from
// one provider, which Placement derives from the group being suffixed.
func (g *RequestGroup) UseSameProvider() bool { return g.Suffix != "" }

// Request is a parsed GET /allocation_candidates query.
type Request struct {
	Microversion Microversion
	// Groups are in order of first appearance of their suffix in the query
	// string, which is the order Placement processes them in; the unsuffixed
	// group, when present, keeps its own position.
	Groups []RequestGroup
	// GroupPolicy is "", "none" or "isolate".
	GroupPolicy string
	// Limit is 0 when no limit was given.
	Limit int
	// RootRequired and RootForbidden come from root_required (1.35+).
	RootRequired  []string
	RootForbidden []string
	// SameSubtree holds one entry per same_subtree parameter (1.36+), each the
	// list of suffixes it names.
	SameSubtree [][]string
}

// Group returns the group with the given suffix, or nil.
func (r *Request) Group(suffix string) *RequestGroup {
	for i := range r.Groups {
		if r.Groups[i].Suffix == suffix {
			return &r.Groups[i]
		}
	}
	return nil
}
