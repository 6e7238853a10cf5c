package candidates

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/rpctl/rpctl/internal/pyjson"
	"github.com/rpctl/rpctl/internal/standards"
)

// StandardResourceClasses returns os-resource-classes 1.1.0's STANDARDS (the
// one copy lives in package standards; shared, do not modify). Placement's id
// for each is its index in this list, and custom classes get database ids
// from 10000 up. The id order matters because Placement builds per-tree
// products in class-id order.
func StandardResourceClasses() []string { return standards.ResourceClasses() }

// StandardTraits returns the os-traits 2.9.0 names that Placement 8.0.0
// syncs into its traits table at start-up. Tests and synthetic clouds use
// them; a model loaded from a real database gets its trait list from there.
func StandardTraits() []string { return standards.Traits() }

// FirstCustomResourceClassID is where Placement starts numbering custom
// resource classes.
const FirstCustomResourceClassID = standards.FirstCustomResourceClassID

const sharingTrait = "MISC_SHARES_VIA_AGGREGATE"

// The input rows mirror the Placement tables so that a storage layer can fill
// a ModelInput with one bulk SELECT per table and no joins. IDs are the
// database's internal ids; they only need to be consistent within one input.

// ProviderRow is one row of resource_providers. ParentID is 0 for a root.
type ProviderRow struct {
	ID         int64
	UUID       string
	Name       string
	Generation int64
	ParentID   int64
}

// InventoryRow is one row of inventories.
type InventoryRow struct {
	ProviderID      int64
	ResourceClassID int64
	Total           int64
	Reserved        int64
	MinUnit         int64
	MaxUnit         int64
	StepSize        int64
	// AllocationRatio is the ratio as Placement's Python code reads it:
	// with MySQL, float() of the text the server sends for the FLOAT
	// column (MariaDB prints six significant digits: "1.3", "1.23457").
	AllocationRatio float64
	// SQLRatio is the ratio as the database's own arithmetic sees it: with
	// MySQL the stored 4-byte float widened to a double (1.3 is
	// 1.2999999523162842). NewModel reads it only when ModelInput.Ratios is
	// RatioMySQLFloat.
	SQLRatio float64
}

// RatioSource says what kind of column the inventory rows' allocation_ratio
// came from. Placement compares capacity twice, once in SQL and once in
// Python, and on MySQL the two see different numbers (see the package doc).
type RatioSource uint8

const (
	// RatioDouble is an IEEE double column (SQLite's REAL, which the
	// embedded database and Placement on SQLite use) or a synthetic model:
	// SQL and Python see the same value, AllocationRatio.
	RatioDouble RatioSource = iota
	// RatioMySQLFloat is MySQL/MariaDB's 4-byte FLOAT: SQL sees SQLRatio,
	// Python sees AllocationRatio.
	RatioMySQLFloat
)

// UsageRow is SUM(used) of allocations grouped by provider and class.
type UsageRow struct {
	ProviderID      int64
	ResourceClassID int64
	Used            int64
}

// NamedRow is an (id, name) row: resource_classes, traits, or
// placement_aggregates (where Name is the aggregate UUID).
type NamedRow struct {
	ID   int64
	Name string
}

// LinkRow is a provider ↔ trait or provider ↔ aggregate association.
type LinkRow struct {
	ProviderID int64
	OtherID    int64
}

// ModelInput is everything NewModel needs.
type ModelInput struct {
	// Ratios says where the inventories' ratios came from; the loader of a
	// database sets it (the zero value suits SQLite and synthetic models).
	Ratios      RatioSource
	Providers   []ProviderRow
	Inventories []InventoryRow
	Usages      []UsageRow
	// ResourceClasses lists custom classes (ids >= 10000). Standard classes
	// are always known with ids 0..len(StandardResourceClasses())-1; a row
	// naming a standard class is accepted and ignored.
	ResourceClasses    []NamedRow
	Traits             []NamedRow
	Aggregates         []NamedRow
	ProviderTraits     []LinkRow
	ProviderAggregates []LinkRow
	// HasTrees says the database has nested providers even when the rows
	// given (a loader's narrowed read) show none: the search treats a flat
	// cloud differently, and must answer as it would over everything.
	HasTrees bool
}

// Inventory is one resource class of one provider, with its usage.
type Inventory struct {
	Class           int32 // index into Model.classes
	Total           int64
	Reserved        int64
	MinUnit         int64
	MaxUnit         int64
	StepSize        int64
	AllocationRatio float64 // as Placement's Python reads it
	SQLRatio        float64 // as Placement's SQL filter multiplies by it
	Used            int64
	// Capacity is int((total - reserved) * AllocationRatio) evaluated in
	// IEEE doubles and truncated toward zero, exactly as CPython does it, so
	// that e.g. 100 * 0.29 (28.999999999999996) gives 28 and not 29. It is
	// provider_summaries' capacity and the bound of the check after groups
	// are merged.
	Capacity int64
	// SQLLimit is the largest used + amount the per-group SQL filter admits:
	// floor((total - reserved) * SQLRatio) in doubles (used + amount is an
	// integer, so "<= x" is "<= floor(x)").
	SQLLimit int64
}

// capacityOf is Placement's capacity formula. Go's float64 multiply and
// truncating conversion match CPython's float() * ratio and int()
// (TestCapacityOfMatchesCPython). Where CPython would build an integer
// beyond int64 (a ratio near FLOAT's 3.4e38) the result saturates rather
// than wrapping to a negative capacity.
func capacityOf(total, reserved int64, ratio float64) int64 {
	return saturate(math.Trunc(float64(total-reserved) * ratio))
}

// sqlLimitOf is the bound of _capacity_check_clause.
func sqlLimitOf(total, reserved int64, ratio float64) int64 {
	return saturate(math.Floor(float64(total-reserved) * ratio))
}

// saturate converts an integral double to int64, clamping out-of-range
// values (Go leaves their conversion implementation-defined). NaN, which
// neither database hands back for a NOT NULL ratio, admits nothing.
func saturate(x float64) int64 {
	switch {
	case x != x:
		return math.MinInt64 / 2
	case x >= 1<<62:
		return 1 << 62
	case x <= -(1 << 62):
		return -(1 << 62)
	}
	return int64(x)
}

// Room is the most one request group may take from the inventory: Placement
// admits amount only if the SQL filter (used + amount <= (total - reserved)
// * SQLRatio) passes and, since every candidate then goes through the merge
// check, used + amount <= Capacity too. On SQLite both bounds agree; on
// MySQL either may be the smaller (1.3 stored as 1.2999999523… makes the
// SQL filter stricter; a ratio MariaDB prints rounded up, such as
// 1.23456789 sent as "1.23457", makes it looser).
func (inv *Inventory) Room() int64 {
	return min(inv.SQLLimit, inv.Capacity) - inv.Used
}

// fits is the per-group SQL filter of get_providers_with_resource together
// with the merge check the lone amount must pass as well.
func (inv *Inventory) fits(amount int64) bool {
	return amount <= inv.Room() && inv.unitsOK(amount)
}

// unitsOK is the min_unit, max_unit and step_size part of fits.
func (inv *Inventory) unitsOK(amount int64) bool {
	return inv.MinUnit <= amount && inv.MaxUnit >= amount && inv.StepSize > 0 && amount%inv.StepSize == 0
}

// Provider is one resource provider. Slices are sorted so membership tests
// are binary searches and no per-provider maps are needed.
type Provider struct {
	ID          int64
	UUID        string
	Name        string
	Generation  int64
	Parent      int32 // provider index, -1 for a root
	Root        int32 // provider index (itself for a root)
	Inventories []Inventory
	Traits      []int32 // trait indexes, ascending
	Aggregates  []int32 // aggregate indexes, ascending
	Children    []int32
}

// Model is an immutable in-memory Placement database. Providers are indexed
// 0..n-1 in ascending database id order; every other structure refers to
// them by that index.
type Model struct {
	providers []Provider
	byUUID    map[string]int32

	classes    []rclass
	classIndex map[string]int32

	traits     []string
	traitIndex map[string]int32

	aggs     []string
	aggIndex map[string]int32

	ratios RatioSource

	classProviders [][]int32 // class index -> providers with inventory
	traitProviders [][]int32 // trait index -> providers
	aggProviders   [][]int32 // aggregate index -> providers

	// The JSON string literals of every provider UUID (one arena, sliced by
	// uuidOff), class and trait name, encoded once at load so that writing
	// a response body is copying bytes.
	uuidJSON     []byte
	uuidOff      []int32
	classJSON    []string
	classKeyJSON []string // `"VCPU": `
	classCapJSON []string // `"VCPU": {"capacity": `
	traitJSON    []string

	sharing   []int32 // providers with MISC_SHARES_VIA_AGGREGATE, ascending
	isSharing bitset
	// sharingAnchors[i] are the roots of every provider sharing an aggregate
	// with sharing[i], itself included (anchors_for_sharing_providers).
	sharingAnchors [][]int32
	hasTrees       bool
	roots          []int32
}

type rclass struct {
	id   int64
	name string
}

type bitset []uint64

func newBitset(n int) bitset      { return make(bitset, (n+63)/64) }
func (b bitset) set(i int32)      { b[i>>6] |= 1 << (uint(i) & 63) }
func (b bitset) has(i int32) bool { return b[i>>6]&(1<<(uint(i)&63)) != 0 }
func (b bitset) and(o bitset) {
	for i := range b {
		b[i] &= o[i]
	}
}
func (b bitset) clear(i int32) { b[i>>6] &^= 1 << (uint(i) & 63) }
func (b bitset) setAll(ps []int32) {
	for _, p := range ps {
		b.set(p)
	}
}

// NewModel builds the indices once. It rejects inputs that a consistent
// Placement database cannot produce (dangling ids, cycles).
func NewModel(in *ModelInput) (*Model, error) {
	return newProviderPart(in.Providers).complete(in)
}

// ModelStart is NewModel begun on the provider rows alone (StartModel).
type ModelStart struct {
	providers []ProviderRow
	done      chan struct{}
	part      *providerPart
}

// StartModel begins NewModel's work on providers, the rows of
// ModelInput.Providers, on a goroutine of its own: a reader that has the
// providers before the other rows (the database's second script) builds
// that part while it waits for them: on placement-perfload the client's
// CPU time was about 1.9 ms of that script (3.2 ms of wall time on a quiet
// machine; issue 35). Build completes it.
func StartModel(providers []ProviderRow) *ModelStart {
	s := &ModelStart{providers: providers, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		s.part = newProviderPart(providers)
	}()
	return s
}

// Build is NewModel(in) for the in.Providers StartModel was given (the same
// slice); other providers are built from the start.
func (s *ModelStart) Build(in *ModelInput) (*Model, error) {
	<-s.done
	if len(in.Providers) != len(s.providers) || (len(in.Providers) > 0 && &in.Providers[0] != &s.providers[0]) {
		return NewModel(in)
	}
	return s.part.complete(in)
}

// providerPart is the model as far as the provider rows alone make it:
// the providers, their trees and their uuids' JSON.
type providerPart struct {
	m    *Model
	byID idIndex
	err  error
}

func newProviderPart(providers []ProviderRow) *providerPart {
	pp := &providerPart{}
	pp.m, pp.byID, pp.err = buildProviders(providers)
	return pp
}

func buildProviders(providers []ProviderRow) (*Model, idIndex, error) {
	m := &Model{}
	n := len(providers)
	rows := slices.Clone(providers)
	slices.SortFunc(rows, func(a, b ProviderRow) int { return cmp.Compare(a.ID, b.ID) })
	m.providers = make([]Provider, n)
	m.byUUID = make(map[string]int32, n)
	byID := indexFor(rows, func(r *ProviderRow) int64 { return r.ID })
	for i, r := range rows {
		if _, dup := byID.get(r.ID); dup {
			return nil, idIndex{}, fmt.Errorf("candidates: duplicate provider id %d", r.ID)
		}
		byID.set(r.ID, int32(i))
		m.byUUID[r.UUID] = int32(i)
		m.providers[i] = Provider{ID: r.ID, UUID: r.UUID, Name: r.Name,
			Generation: r.Generation, Parent: -1, Root: -1}
	}
	for i, r := range rows {
		if r.ParentID == 0 {
			continue
		}
		p, ok := byID.get(r.ParentID)
		if !ok {
			return nil, idIndex{}, fmt.Errorf("candidates: provider %s has unknown parent id %d", r.UUID, r.ParentID)
		}
		m.providers[i].Parent = p
		m.providers[p].Children = append(m.providers[p].Children, int32(i))
		m.hasTrees = true
	}
	for i := range m.providers {
		if err := m.resolveRoot(int32(i), n); err != nil {
			return nil, idIndex{}, err
		}
		if m.providers[i].Parent < 0 {
			m.roots = append(m.roots, int32(i))
		}
	}
	m.encodeUUIDs()
	return m, byID, nil
}

// complete builds the rest of the model of in, whose providers the part
// was built of.
func (pp *providerPart) complete(in *ModelInput) (*Model, error) {
	if pp.err != nil {
		return nil, pp.err
	}
	m, byID := pp.m, pp.byID
	m.ratios = in.Ratios
	m.hasTrees = m.hasTrees || in.HasTrees
	n := len(m.providers)

	// Resource classes: dense indexes, standard first.
	m.classIndex = make(map[string]int32, len(StandardResourceClasses())+len(in.ResourceClasses))
	classByID := make(map[int64]int32)
	for i, name := range StandardResourceClasses() {
		m.classIndex[name] = int32(len(m.classes))
		classByID[int64(i)] = int32(len(m.classes))
		m.classes = append(m.classes, rclass{id: int64(i), name: name})
	}
	for _, r := range in.ResourceClasses {
		if _, ok := m.classIndex[r.Name]; ok {
			continue
		}
		m.classIndex[r.Name] = int32(len(m.classes))
		classByID[r.ID] = int32(len(m.classes))
		m.classes = append(m.classes, rclass{id: r.ID, name: r.Name})
	}
	// Placement orders classes by id; keep indexes in that order too so that
	// "sorted by class index" is "sorted by class id".
	order := make([]int32, len(m.classes))
	for i := range order {
		order[i] = int32(i)
	}
	sort.SliceStable(order, func(a, b int) bool { return m.classes[order[a]].id < m.classes[order[b]].id })
	remap := make([]int32, len(order))
	sortedClasses := make([]rclass, len(order))
	for newIdx, old := range order {
		remap[old] = int32(newIdx)
		sortedClasses[newIdx] = m.classes[old]
	}
	m.classes = sortedClasses
	for k, v := range m.classIndex {
		m.classIndex[k] = remap[v]
	}
	for k, v := range classByID {
		classByID[k] = remap[v]
	}

	// Trait indexes follow name order, so a provider's ascending trait
	// indexes are its trait names sorted, as summaries print them.
	traitRows := slices.Clone(in.Traits)
	slices.SortStableFunc(traitRows, func(a, b NamedRow) int { return strings.Compare(a.Name, b.Name) })
	m.traits = make([]string, 0, len(in.Traits))
	m.traitIndex = make(map[string]int32, len(in.Traits))
	traitByID := indexFor(traitRows, func(r *NamedRow) int64 { return r.ID })
	for _, r := range traitRows {
		if _, ok := m.traitIndex[r.Name]; !ok {
			m.traitIndex[r.Name] = int32(len(m.traits))
			m.traits = append(m.traits, r.Name)
		}
		traitByID.set(r.ID, m.traitIndex[r.Name])
	}
	m.aggs = make([]string, 0, len(in.Aggregates))
	m.aggIndex = make(map[string]int32, len(in.Aggregates))
	aggByID := indexFor(in.Aggregates, func(r *NamedRow) int64 { return r.ID })
	for _, r := range in.Aggregates {
		if _, ok := m.aggIndex[r.Name]; !ok {
			m.aggIndex[r.Name] = int32(len(m.aggs))
			m.aggs = append(m.aggs, r.Name)
		}
		aggByID.set(r.ID, m.aggIndex[r.Name])
	}

	// Inventories, in one backing array to keep allocations few.
	invCount := make([]int32, n)
	for _, r := range in.Inventories {
		p, ok := byID.get(r.ProviderID)
		if !ok {
			return nil, fmt.Errorf("candidates: inventory for unknown provider id %d", r.ProviderID)
		}
		invCount[p]++
	}
	backing := make([]Inventory, len(in.Inventories))
	off := 0
	for i := range m.providers {
		m.providers[i].Inventories = backing[off : off : off+int(invCount[i])]
		off += int(invCount[i])
	}
	m.classProviders = make([][]int32, len(m.classes))
	for _, r := range in.Inventories {
		p, _ := byID.get(r.ProviderID)
		c, ok := classByID[r.ResourceClassID]
		if !ok {
			return nil, fmt.Errorf("candidates: inventory with unknown resource class id %d", r.ResourceClassID)
		}
		sqlRatio := r.AllocationRatio
		if in.Ratios == RatioMySQLFloat {
			sqlRatio = r.SQLRatio
		}
		m.providers[p].Inventories = append(m.providers[p].Inventories, Inventory{
			Class: c, Total: r.Total, Reserved: r.Reserved, MinUnit: r.MinUnit,
			MaxUnit: r.MaxUnit, StepSize: r.StepSize, AllocationRatio: r.AllocationRatio,
			SQLRatio: sqlRatio,
			Capacity: capacityOf(r.Total, r.Reserved, r.AllocationRatio),
			SQLLimit: sqlLimitOf(r.Total, r.Reserved, sqlRatio),
		})
	}
	for i := range m.providers {
		invs := m.providers[i].Inventories
		slices.SortFunc(invs, func(a, b Inventory) int { return int(a.Class - b.Class) })
		for _, inv := range invs {
			m.classProviders[inv.Class] = append(m.classProviders[inv.Class], int32(i))
		}
	}
	for _, r := range in.Usages {
		p, ok := byID.get(r.ProviderID)
		if !ok {
			continue // allocations against a deleted provider cannot matter
		}
		c, ok := classByID[r.ResourceClassID]
		if !ok {
			continue
		}
		if inv := m.providers[p].inventory(c); inv != nil {
			inv.Used += r.Used
		}
	}

	m.traitProviders = make([][]int32, len(m.traits))
	// Each provider's traits and aggregates are carved from one backing
	// array each, as inventories are (an append per provider was most of
	// NewModel's allocations).
	carve(m.providers, in.ProviderTraits, byID, func(p *Provider) *[]int32 { return &p.Traits })
	carve(m.providers, in.ProviderAggregates, byID, func(p *Provider) *[]int32 { return &p.Aggregates })
	for _, r := range in.ProviderTraits {
		p, ok1 := byID.get(r.ProviderID)
		t, ok2 := traitByID.get(r.OtherID)
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("candidates: dangling provider trait %d/%d", r.ProviderID, r.OtherID)
		}
		m.providers[p].Traits = append(m.providers[p].Traits, t)
	}
	m.aggProviders = make([][]int32, len(m.aggs))
	for _, r := range in.ProviderAggregates {
		p, ok1 := byID.get(r.ProviderID)
		a, ok2 := aggByID.get(r.OtherID)
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("candidates: dangling provider aggregate %d/%d", r.ProviderID, r.OtherID)
		}
		m.providers[p].Aggregates = append(m.providers[p].Aggregates, a)
	}
	for i := range m.providers {
		pr := &m.providers[i]
		slices.Sort(pr.Traits)
		pr.Traits = slices.Compact(pr.Traits)
		slices.Sort(pr.Aggregates)
		pr.Aggregates = slices.Compact(pr.Aggregates)
		for _, t := range pr.Traits {
			m.traitProviders[t] = append(m.traitProviders[t], int32(i))
		}
		for _, a := range pr.Aggregates {
			m.aggProviders[a] = append(m.aggProviders[a], int32(i))
		}
	}

	m.encodeJSON()

	m.isSharing = newBitset(n)
	if t, ok := m.traitIndex[sharingTrait]; ok {
		m.sharing = m.traitProviders[t]
		m.isSharing.setAll(m.sharing)
	}
	m.sharingAnchors = make([][]int32, len(m.sharing))
	seen := newBitset(n)
	for i, s := range m.sharing {
		var anchors []int32
		for _, a := range m.providers[s].Aggregates {
			for _, q := range m.aggProviders[a] {
				r := m.providers[q].Root
				if !seen.has(r) {
					seen.set(r)
					anchors = append(anchors, r)
				}
			}
		}
		for _, r := range anchors {
			seen.clear(r)
		}
		slices.Sort(anchors)
		m.sharingAnchors[i] = anchors
	}
	return m, nil
}

func (m *Model) encodeUUIDs() {
	size := 0
	for i := range m.providers {
		size += len(m.providers[i].UUID) + 2
	}
	m.uuidJSON = make([]byte, 0, size)
	m.uuidOff = make([]int32, len(m.providers)+1)
	for i := range m.providers {
		m.uuidJSON = pyjson.AppendString(m.uuidJSON, m.providers[i].UUID)
		m.uuidOff[i+1] = int32(len(m.uuidJSON))
	}
}

func (m *Model) encodeJSON() {
	m.classJSON = make([]string, len(m.classes))
	m.classKeyJSON = make([]string, len(m.classes))
	m.classCapJSON = make([]string, len(m.classes))
	for i, c := range m.classes {
		m.classJSON[i] = pyjson.Quote(c.name)
		m.classKeyJSON[i] = m.classJSON[i] + ": "
		m.classCapJSON[i] = m.classJSON[i] + `: {"capacity": `
	}
	m.traitJSON = make([]string, len(m.traits))
	for i, t := range m.traits {
		m.traitJSON[i] = pyjson.Quote(t)
	}
}

func (m *Model) uuidLit(p int32) []byte { return m.uuidJSON[m.uuidOff[p]:m.uuidOff[p+1]] }

func (m *Model) resolveRoot(i int32, n int) error {
	if m.providers[i].Root >= 0 {
		return nil
	}
	path := []int32{i}
	cur := i
	for m.providers[cur].Parent >= 0 && m.providers[cur].Root < 0 {
		cur = m.providers[cur].Parent
		path = append(path, cur)
		if len(path) > n+1 {
			return fmt.Errorf("candidates: provider %s is in a parent cycle", m.providers[i].UUID)
		}
	}
	root := m.providers[cur].Root
	if root < 0 {
		root = cur
	}
	for _, p := range path {
		m.providers[p].Root = root
	}
	return nil
}

func (p *Provider) inventory(c int32) *Inventory {
	lo, hi := 0, len(p.Inventories)
	for lo < hi {
		mid := (lo + hi) / 2
		switch {
		case p.Inventories[mid].Class < c:
			lo = mid + 1
		case p.Inventories[mid].Class > c:
			hi = mid
		default:
			return &p.Inventories[mid]
		}
	}
	return nil
}

func (p *Provider) hasTrait(t int32) bool {
	_, ok := slices.BinarySearch(p.Traits, t)
	return ok
}

func (p *Provider) inAgg(a int32) bool {
	_, ok := slices.BinarySearch(p.Aggregates, a)
	return ok
}

// NumProviders returns the number of providers in the model.
func (m *Model) NumProviders() int { return len(m.providers) }

// Provider returns the provider at index i (see ProviderIndex).
func (m *Model) Provider(i int32) *Provider { return &m.providers[i] }

// ProviderIndex returns the index of the provider with that UUID.
func (m *Model) ProviderIndex(uuid string) (int32, bool) {
	i, ok := m.byUUID[uuid]
	return i, ok
}

func (m *Model) sharingAnchorsOf(p int32) []int32 {
	i, ok := slices.BinarySearch(m.sharing, p)
	if !ok {
		return nil
	}
	return m.sharingAnchors[i]
}

// ResolveProvider turns what an operator typed for in_tree into a provider
// UUID: a known UUID as is; anything Placement would accept as a UUID as is
// too (an unknown one answers with an empty result, not an error); else the
// provider with that name, since names are unique in Placement.
func (m *Model) ResolveProvider(s string) (string, bool) {
	if _, ok := m.byUUID[s]; ok || UUIDLike(s) {
		return s, true
	}
	for i := range m.providers {
		if m.providers[i].Name == s {
			return m.providers[i].UUID, true
		}
	}
	return "", false
}

// carve gives each provider's list (field) an empty slice of its own part
// of one array, sized by the links that name the provider.
func carve(providers []Provider, links []LinkRow, byID idIndex, field func(*Provider) *[]int32) {
	count := make([]int32, len(providers))
	for _, r := range links {
		if p, ok := byID.get(r.ProviderID); ok {
			count[p]++
		}
	}
	backing := make([]int32, len(links))
	off := 0
	for i := range providers {
		*field(&providers[i]) = backing[off : off : off+int(count[i])]
		off += int(count[i])
	}
}
