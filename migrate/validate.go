package migrate

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/rpctl/rpctl/internal/lazyre"
	"github.com/rpctl/rpctl/internal/nova"
	"github.com/rpctl/rpctl/internal/novaformats"
	"github.com/rpctl/rpctl/internal/release"
	"github.com/rpctl/rpctl/internal/standards"
	"github.com/rpctl/rpctl/inventory"

	"github.com/rpctl/rpctl/internal/sanitize"
)

// Placement's own limits (placement/db/constants.py and the API's JSON
// schemas): every integer of an inventory fits a signed 32-bit column, the
// allocation ratio a single-precision FLOAT, a provider name 200 characters.
// A row that would break one is refused here, before anything is written,
// on SQLite (which would store anything) as on MariaDB (which would fail the
// whole batch with "Out of range value").
const (
	PlacementMaxInt     = inventory.MaxInt
	PlacementMaxFloat   = inventory.MaxRatio // SQL_SP_FLOAT_MAX
	PlacementMaxNameLen = 200
)

// FieldError is what makes a compute node row bad: the column, its value
// as found (escaped and shortened for a one-line message), and why
// Placement would refuse what it becomes.
type FieldError struct {
	Field  string
	Value  string
	Reason string
}

func (e *FieldError) Error() string {
	return fmt.Sprintf("%s=%s: %s", e.Field, e.Value, e.Reason)
}

func badField(field, value, format string, args ...any) *FieldError {
	return &FieldError{Field: field, Value: value, Reason: fmt.Sprintf(format, args...)}
}

// quoteValue shows a text value for a message: quoted, control characters
// escaped, and cut after 60 characters with the full length said.
func quoteValue(s *string) string {
	if s == nil {
		return "NULL"
	}
	v := *s
	n := utf8.RuneCountInString(v)
	if n > 60 {
		r := []rune(v)
		return strconv.Quote(sanitize.String(string(r[:60]))) + fmt.Sprintf("...(%d characters)", n)
	}
	return strconv.Quote(sanitize.String(v))
}

func intValue(v int64) string { return strconv.FormatInt(v, 10) }

// canonicalUUID is the form Nova writes and Placement's uuid columns
// (String(36)) hold; Placement's is_uuid_like also takes braces, "urn:uuid:"
// and the 32-digit form, but Nova looks providers up by the row's value, so
// only the canonical form can become a provider uuid.
var canonicalUUID = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
})

// customName is what Placement accepts as a custom resource class or
// trait name (its API schema's ^CUSTOM_[A-Z0-9_]+$).
var customName = &lazyre.Regexp{Expr: `^CUSTOM_[A-Z0-9_]+$`}

// ownClasses are the classes a row's own columns give, by column: an
// extra_resources key naming one was silently dropped (the column's
// inventory replaced it; issue 37 row 14), so it makes the row bad.
var ownClasses = map[string]string{"VCPU": "vcpus", "MEMORY_MB": "memory_mb", "DISK_GB": "local_gb", "PCPU": "numa_topology"}

// PlacementMaxClassLen is the longest resource class or trait name
// Placement accepts: schemas/resource_class.py and schemas/trait.py say
// maxLength 255, and the resource_classes and traits name columns are
// VARCHAR(255) (MariaDB refuses a longer one with error 1406, which failed
// the whole class-creating step; SQLite stored it).
const PlacementMaxClassLen = 255

// classNameProblem says why Placement would refuse a resource class (what
// is "resource class") or trait (what is "trait") name rpctl derived from a
// row, or "" when it would accept it: a standard name, or
// ^CUSTOM_[A-Z0-9_]+$ (schemas/common.py) of at most 255 characters.
func classNameProblem(what, name string) string {
	return classNameProblemIn(release.Default, what, name)
}

// classNameProblemIn is classNameProblem with release rel's standard
// traits.
func classNameProblemIn(rel release.Name, what, name string) string {
	standard := standards.IsResourceClass(name)
	if what == "trait" {
		standard = standards.IsTraitOf(rel, name)
	}
	switch {
	case standard:
		return ""
	case len(name) > PlacementMaxClassLen:
		return fmt.Sprintf("the %s %s would be %d characters; Placement allows %d (schemas/%s.py maxLength)", what, strconv.Quote(shorten(name)), len(name), PlacementMaxClassLen, strings.ReplaceAll(what, " ", "_"))
	case !customName.Get().MatchString(name):
		return fmt.Sprintf("the %s %s is not one Placement accepts (a standard name, or ^CUSTOM_[A-Z0-9_]+$)", what, strconv.Quote(shorten(name)))
	}
	return ""
}

// checkName reports a provider name Placement would refuse: not UTF-8
// (a JSON body cannot carry it) or longer than 200 characters.
func checkName(field string, raw *string, name string) *FieldError {
	if !utf8.ValidString(name) {
		return badField(field, quoteValue(raw), "not valid UTF-8; it would be the resource provider's name")
	}
	if n := utf8.RuneCountInString(name); n > PlacementMaxNameLen {
		return badField(field, quoteValue(raw), "the resource provider name %s would be %d characters; Placement allows %d", strconv.Quote(shorten(name)), n, PlacementMaxNameLen)
	}
	return nil
}

func shorten(s string) string {
	if r := []rune(s); len(r) > 40 {
		return sanitize.String(string(r[:40])) + "..."
	}
	return sanitize.String(s)
}

// checkTotal reports a total outside Placement's API schema (the
// inventory domain's CheckSchema), naming the column it comes from. It is
// the only inventory field a row decides: the planner caps reserved and
// max_unit at the total and sets min_unit and step_size to 1.
func checkTotal(src string, raw *string, rc string, total int64) error {
	if total <= 0 {
		return nil // no inventory
	}
	if err := inventory.CheckSchema(rc, inventory.Inventory{Total: total, MinUnit: 1, MaxUnit: total, StepSize: 1}); err != nil {
		return badField(src, quoteValue(raw), "Placement would refuse the inventory: %v", err)
	}
	return nil
}

// pciKey is a NewtonClasses PCI pool inventory: its class and the NUMA
// cell whose child provider holds it (-1: the root).
type pciKey struct {
	rc   string
	cell int64
}

// validRow is a compute node row that passed every check, with its blobs
// parsed: planning it cannot fail.
type validRow struct {
	row   NodeRow
	cells []novaformats.NUMACell
	extra map[string]int64 // extra_resources by class
	cpu   cpuMode
	pcpus int64
	// pci are the NewtonClasses pools' totals, in pciKeys' order.
	pci     map[pciKey]int64
	pciKeys []pciKey
	// pciRPs are the PCI device providers ([pci] report_in_placement).
	pciRPs []*pciProvider
}

// FieldErrors are every bad column of one compute node row, in the order
// the columns are checked, one problem per column (the first found in it):
// the row is reported once with all of them, not one column per run. It
// unwraps to its FieldErrors (errors.As finds the first).
type FieldErrors []*FieldError

func (es FieldErrors) Error() string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.Error()
	}
	return strings.Join(parts, "; ")
}

// Unwrap gives errors.Is and errors.As every column's error.
func (es FieldErrors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

// Columns names the bad columns, in order.
func (es FieldErrors) Columns() []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.Field
	}
	return out
}

// rowProblems collects a row's bad columns, the first problem of each.
type rowProblems struct{ errs FieldErrors }

// add records err (a *FieldError, or FieldErrors) unless its column is
// already bad; it reports whether err was nil.
func (p *rowProblems) add(err error) bool {
	// checkName returns a *FieldError: a nil one is no problem.
	if fe, typed := err.(*FieldError); err == nil || typed && fe == nil {
		return true
	}
	var many FieldErrors
	if errors.As(err, &many) {
		for _, e := range many {
			p.add(e)
		}
		return false
	}
	var fe *FieldError
	if !errors.As(err, &fe) {
		fe = &FieldError{Field: "row", Value: "", Reason: err.Error()}
	}
	if !p.bad(fe.Field) {
		p.errs = append(p.errs, fe)
	}
	return false
}

func (p *rowProblems) bad(field string) bool {
	for _, e := range p.errs {
		if e.Field == field {
			return true
		}
	}
	return false
}

// err is nil for a good row, else FieldErrors (a single *FieldError when
// one column is bad, the shape callers have always matched).
func (p *rowProblems) err() error {
	switch len(p.errs) {
	case 0:
		return nil
	case 1:
		return p.errs[0]
	}
	return p.errs
}

// validate is the one check of a row before it is planned: every column
// and blob the plan reads, and every name and total it will write. Every
// bad column is reported, in one error: a check that needs a column
// another depends on (the PCI providers' names need the hostname) is
// skipped when that column is already bad.
func (c *InventoryConfig) validate(r NodeRow) (*validRow, error) {
	n := r.Node
	var p rowProblems
	p.add(checkRow(n))
	hostOK := !p.bad("hypervisor_hostname")
	host := ""
	if hostOK {
		host = *n.HypervisorHostname
	}
	v := &validRow{row: r}
	pools, err := novaformats.ParsePCIStats(n.PCIStats)
	pciOK := p.add(blobError("pci_stats", n.PCIStats, err))
	var numaOK bool
	v.cells, err = novaformats.ParseNUMATopology(n.NUMATopology)
	if numaOK = p.add(blobError("numa_topology", n.NUMATopology, err)); numaOK {
		for _, cl := range v.cells {
			if cl.MemoryMB > PlacementMaxInt {
				p.add(badField("numa_topology", quoteValue(n.NUMATopology), "cell %d has %d MB of memory; Placement allows at most %d", cl.ID, cl.MemoryMB, PlacementMaxInt))
			}
		}
		if v.cpu, v.pcpus = cpuSplit(v.cells); v.cpu == cpuBad {
			p.add(badField("numa_topology", quoteValue(n.NUMATopology), "a cell's pcpuset overlaps its cpuset without being equal to it; Nova's libvirt driver writes either the same set (no cpu_dedicated_set) or disjoint ones"))
		}
		p.add(checkTotal("numa_topology", n.NUMATopology, "PCPU", v.pcpus))
	}
	extra, err := novaformats.ParseExtraResources(n.ExtraResources)
	v.extra = make(map[string]int64, len(extra))
	if p.add(blobError("extra_resources", n.ExtraResources, err)) {
		for _, name := range sortedKeys(extra) {
			if p.bad("extra_resources") {
				break
			}
			rc := NormalizeClass(name)
			if why := classNameProblem("resource class", rc); why != "" {
				p.add(badField("extra_resources", quoteValue(n.ExtraResources), "%s: %s", strconv.Quote(shorten(name)), why))
				continue
			}
			if col, own := ownClasses[rc]; own {
				p.add(badField("extra_resources", quoteValue(n.ExtraResources), "%s names %s, which the row's own %s gives; an extra resource must be a class of its own (a custom one: CUSTOM_...)", strconv.Quote(shorten(name)), rc, col))
				continue
			}
			if _, dup := v.extra[rc]; dup {
				p.add(badField("extra_resources", quoteValue(n.ExtraResources), "%s names the class %s twice", strconv.Quote(shorten(name)), rc))
				continue
			}
			p.add(checkTotal("extra_resources", n.ExtraResources, rc, extra[name]))
			v.extra[rc] = extra[name]
		}
	}
	if pciOK {
		for _, pl := range pools {
			if pl.Count > PlacementMaxInt {
				p.add(badField("pci_stats", quoteValue(n.PCIStats), "a pool counts %d devices; Placement allows at most %d", pl.Count, PlacementMaxInt))
			}
		}
	}
	nested := c.Layout == LayoutNested && len(v.cells) > 0
	if nested && hostOK && numaOK {
		for _, cl := range v.cells {
			p.add(checkName("hypervisor_hostname", n.HypervisorHostname, numaChildName(host, cl.ID)))
		}
	}
	// PCI pools: by class, and in the nested layout by NUMA cell. Only
	// NewtonClasses writes them, but a pci_stats whose classes Placement
	// could never hold is a corrupt row whatever the options.
	cellIDs := map[int64]bool{}
	for _, cl := range v.cells {
		cellIDs[cl.ID] = true
	}
	v.pci = map[pciKey]int64{}
	if pciOK && !p.bad("pci_stats") {
		for _, pl := range pools {
			k := pciKey{pciClass(pl), -1}
			if why := classNameProblem("resource class", k.rc); why != "" {
				p.add(badField("pci_stats", quoteValue(n.PCIStats), "a pool's resource_class tag: %s", why))
				break
			}
			if nested && pl.NUMANode != nil && cellIDs[*pl.NUMANode] {
				k.cell = *pl.NUMANode
			}
			if _, seen := v.pci[k]; !seen {
				v.pciKeys = append(v.pciKeys, k)
			}
			v.pci[k] += pl.Count
		}
		for _, k := range v.pciKeys {
			p.add(checkTotal("pci_stats", n.PCIStats, k.rc, v.pci[k]))
		}
	}
	if hostOK {
		if v.pciRPs, err = c.PCI.pciProviders(host, r.PCIDevices); err != nil {
			p.add(badField("pci_devices", fmt.Sprintf("(%d devices)", len(r.PCIDevices)), "nova-compute would fail to report them: %v", err))
		}
		for _, pp := range v.pciRPs {
			p.add(checkName("hypervisor_hostname", n.HypervisorHostname, pp.name))
			if why := classNameProblem("resource class", pp.rc); why != "" {
				p.add(badField("pci_devices", strconv.Quote(shorten(pp.name)), "[pci] device_spec's resource_class tag: %s", why))
			}
			for _, t := range pp.traits {
				if why := classNameProblemIn(c.PCI.Release, "trait", t); why != "" {
					p.add(badField("pci_devices", strconv.Quote(shorten(pp.name)), "[pci] device_spec's traits tag: %s", why))
				}
			}
		}
	}
	if err := p.err(); err != nil {
		return nil, err
	}
	return v, nil
}

// checkRatio reports an allocation ratio Placement would refuse.
func checkRatio(rc string, r float64) error {
	if !(r > 0) || r > PlacementMaxFloat || math.IsInf(r, 0) {
		return badField("allocation_ratio", strconv.FormatFloat(r, 'g', -1, 64), "the %s inventory's allocation ratio must be above 0 and at most %g (a FLOAT column)", rc, PlacementMaxFloat)
	}
	return nil
}

// checkRow checks the plain columns a provider is made of: the name, the
// uuid, the totals and the ratios.
func checkRow(n nova.ComputeNode) error {
	var p rowProblems
	h := n.HypervisorHostname
	if h == nil || strings.TrimSpace(*h) == "" {
		p.add(badField("hypervisor_hostname", quoteValue(h), "empty; it would be the resource provider's name"))
	} else {
		p.add(checkName("hypervisor_hostname", h, *h))
	}
	// NULL is a uuid to generate (Nova's Mitaka rule); an empty string is
	// not NULL to Nova either, and the generated uuid is only ever stored
	// where the column is NULL.
	if n.UUID != nil && !canonicalUUID().MatchString(*n.UUID) {
		p.add(badField("uuid", quoteValue(n.UUID), "not a UUID (xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx); Placement refuses it as a resource provider uuid"))
	}
	for _, c := range []struct {
		name string
		v    int64
	}{{"vcpus", n.VCPUs}, {"memory_mb", n.MemoryMB}, {"local_gb", n.LocalGB}} {
		if c.v < 0 || c.v > PlacementMaxInt {
			p.add(badField(c.name, intValue(c.v), "a total must be 0 (none) to %d for Placement", PlacementMaxInt))
		}
	}
	for _, r := range []struct {
		name string
		v    *float64
	}{{"cpu_allocation_ratio", n.CPUAllocationRatio}, {"ram_allocation_ratio", n.RAMAllocationRatio}, {"disk_allocation_ratio", n.DiskAllocationRatio}} {
		if r.v != nil && (*r.v < 0 || math.IsNaN(*r.v) || math.IsInf(*r.v, 0) || *r.v > PlacementMaxFloat) {
			p.add(badField(r.name, strconv.FormatFloat(*r.v, 'g', -1, 64), "it must be 0.0 (unset) or above 0 and at most %g (Placement's FLOAT column)", PlacementMaxFloat))
		}
	}
	return p.err()
}

// blobError names the JSON column a parse error comes from; the parsers
// already start their messages with the column's name.
func blobError(field string, raw *string, err error) error {
	if err == nil {
		return nil
	}
	return badField(field, quoteValue(raw), "%s", strings.TrimPrefix(err.Error(), field+": "))
}
