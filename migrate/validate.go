package migrate

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/rpctl/rpctl/internal/nova"
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

// checkInventory reports an inventory field outside Placement's API
// schema (the inventory domain's CheckSchema: total 1..2^31-1, reserved
// 0..2^31-1, min_unit, max_unit and step_size 1..2^31-1), naming the
// column the inventory comes from.
func checkInventory(rc string, v DesiredInventory) error {
	if err := inventory.CheckSchema(rc, inventory.Inventory(v.Inventory)); err != nil {
		return badField(v.src, v.value(), "Placement would refuse the inventory: %v", err)
	}
	return nil
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
	h := n.HypervisorHostname
	if h == nil || strings.TrimSpace(*h) == "" {
		return badField("hypervisor_hostname", quoteValue(h), "empty; it would be the resource provider's name")
	}
	if err := checkName("hypervisor_hostname", h, *h); err != nil {
		return err
	}
	// NULL is a uuid to generate (Nova's Mitaka rule); an empty string is
	// not NULL to Nova either, and the generated uuid is only ever stored
	// where the column is NULL.
	if n.UUID != nil && !canonicalUUID().MatchString(*n.UUID) {
		return badField("uuid", quoteValue(n.UUID), "not a UUID (xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx); Placement refuses it as a resource provider uuid")
	}
	for _, c := range []struct {
		name string
		v    int64
	}{{"vcpus", n.VCPUs}, {"memory_mb", n.MemoryMB}, {"local_gb", n.LocalGB}} {
		if c.v < 0 || c.v > PlacementMaxInt {
			return badField(c.name, intValue(c.v), "a total must be 0 (none) to %d for Placement", PlacementMaxInt)
		}
	}
	for _, r := range []struct {
		name string
		v    *float64
	}{{"cpu_allocation_ratio", n.CPUAllocationRatio}, {"ram_allocation_ratio", n.RAMAllocationRatio}, {"disk_allocation_ratio", n.DiskAllocationRatio}} {
		if r.v != nil && (*r.v < 0 || math.IsNaN(*r.v) || math.IsInf(*r.v, 0) || *r.v > PlacementMaxFloat) {
			return badField(r.name, strconv.FormatFloat(*r.v, 'g', -1, 64), "it must be 0.0 (unset) or above 0 and at most %g (Placement's FLOAT column)", PlacementMaxFloat)
		}
	}
	return nil
}

// blobError names the JSON column a parse error comes from; the parsers
// already start their messages with the column's name.
func blobError(field string, raw *string, err error) error {
	return badField(field, quoteValue(raw), "%s", strings.TrimPrefix(err.Error(), field+": "))
}
