// Package providerconfig reads Nova's provider config files
// (provider.yaml, schema 1.0; nova/compute/provider_config.py) with Nova's
// validation, and applies them to Placement: missing custom resource
// classes and traits are created, the named inventories and traits added
// or updated, through the inventory domain's Store (database or API).
package providerconfig

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/rpctl/rpctl/internal/lazyre"
	"github.com/rpctl/rpctl/internal/readlimit"
	"github.com/rpctl/rpctl/migrate"
)

// ComputeNode is the identification that means every compute node.
const ComputeNode = "$COMPUTE_NODE"

// Inventory is one additional inventory; nil fields take Placement's
// defaults when written.
type Inventory struct {
	Total           int64
	Reserved        *int64
	MinUnit         *int64
	MaxUnit         *int64
	StepSize        *int64
	AllocationRatio *float64
}

// Provider is one valid entry of providers[].
type Provider struct {
	File  string // the file it came from
	Index int    // its position in the file's providers list
	// ID is the uuid, the name or $COMPUTE_NODE; ByName tells which.
	ID     string
	ByName bool
	// Inventories in file order (class, record).
	Classes     []string
	Inventories map[string]Inventory
	Traits      []string
}

// Label names the entry in messages: `provider.yaml: providers[0] (name
// "gpu-host")`.
func (p *Provider) Label() string { return entryLabel(p.File, p.Index, p.ByName, p.ID) }

func entryLabel(file string, i int, byName bool, id string) string {
	kind := "uuid"
	if byName {
		kind = "name"
	}
	if id == "" {
		return fmt.Sprintf("%s: providers[%d]", file, i)
	}
	return fmt.Sprintf("%s: providers[%d] (%s %q)", file, i, kind, id)
}

// Config is every file read, in order.
type Config struct {
	Files     []string
	Providers []*Provider
	// Warnings are what Nova only logs: an unknown minor schema version,
	// an entry with nothing to add.
	Warnings []string
}

// Errors are every problem found, one line each, in file order.
type Errors []string

func (e Errors) Error() string { return strings.Join(e, "\n") }

// ArgError is a -f argument that names no file or directory to read
// (missing, unreadable, or a directory without *.yaml files).
type ArgError struct {
	Arg string
	Err error
}

func (e *ArgError) Error() string { return e.Arg + ": " + e.Err.Error() }

func (e *ArgError) Unwrap() error { return e.Err }

// Paths expands the -f arguments: a directory gives its *.yaml files in
// name order, as Nova's glob + sort does; a file is taken as it is.
func Paths(args []string) ([]string, error) {
	var out []string
	for _, a := range args {
		st, err := os.Stat(a)
		if err != nil {
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			return nil, &ArgError{Arg: a, Err: err}
		}
		if !st.IsDir() {
			out = append(out, a)
			continue
		}
		m, err := filepath.Glob(filepath.Join(a, "*.yaml"))
		if err != nil {
			return nil, err
		}
		if len(m) == 0 {
			return nil, &ArgError{Arg: a, Err: errors.New("no *.yaml provider config file in it")}
		}
		sort.Strings(m)
		out = append(out, m...)
	}
	return out, nil
}

// MaxFileBytes bounds one provider config file: thousands of providers'
// entries fit in it; /dev/zero does not.
const MaxFileBytes = 16 << 20

// Load reads and validates the files (see Paths) as nova-compute does at
// start-up, plus what its resource tracker checks when merging: only
// CUSTOM_ classes and traits, required fields and types, no provider named
// twice across the files, and no class Nova (or rpctl's `migrate
// inventory`) manages. Every problem is reported, not only the first.
func Load(args []string) (*Config, error) {
	paths, err := Paths(args)
	if err != nil {
		return nil, err
	}
	cfg := &Config{Files: paths}
	var errs Errors
	seen := map[string]*Provider{}
	for _, path := range paths {
		data, err := readlimit.File(path, MaxFileBytes, "a provider config file")
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s: Unable to read yaml config file: %v", path, err))
			continue
		}
		provs, warns, fileErrs := parseFile(path, data)
		cfg.Warnings = append(cfg.Warnings, warns...)
		errs = append(errs, fileErrs...)
		for _, p := range provs {
			if prev, dup := seen[p.ID]; dup {
				files := []string{prev.File, p.File}
				sort.Strings(files)
				if files[0] == files[1] {
					files = files[:1]
				}
				errs = append(errs, fmt.Sprintf("%s: identification: Provider %s has multiple definitions in source file(s): %s (first at %s)",
					p.Label(), p.ID, strings.Join(files, ", "), prev.Label()))
				continue
			}
			seen[p.ID] = p
			cfg.Providers = append(cfg.Providers, p)
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return cfg, nil
}

var (
	namePattern    = &lazyre.Regexp{Expr: `^[A-Z0-9_]{1,255}$`}
	uuidPattern    = &lazyre.Regexp{Expr: `^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$`}
	versionPattern = &lazyre.Regexp{Expr: `^1.([0-9]|[1-9][0-9]+)$`}
)

// nova manages these custom classes itself (PCI devices in Placement,
// persistent memory namespaces): an additional inventory of them would
// collide with the driver's.
var novaCustomPrefixes = []string{"CUSTOM_PCI_", "CUSTOM_PMEM_NAMESPACE_"}

// parseFile is _parse_provider_yaml and _validate_provider_config for one
// file.
func parseFile(path string, data []byte) ([]*Provider, []string, Errors) {
	var doc any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, nil, Errors{fmt.Sprintf("%s: Unable to load yaml file: %v", path, err)}
	}
	top, ok := doc.(map[string]any)
	if !ok {
		return nil, nil, Errors{fmt.Sprintf("%s: Unable to detect schema version: the file is not a mapping with meta.schema_version", path)}
	}
	var errs Errors
	var warns []string
	meta, ok := top["meta"].(map[string]any)
	if !ok {
		return nil, nil, Errors{fmt.Sprintf("%s: meta.schema_version: Unable to detect schema version (meta is required)", path)}
	}
	sv, ok := meta["schema_version"].(string)
	if !ok {
		return nil, nil, Errors{fmt.Sprintf("%s: meta.schema_version: Unable to detect schema version (want a string such as '1.0')", path)}
	}
	major, minor, perr := parseVersion(sv)
	switch {
	case perr != nil:
		return nil, nil, Errors{fmt.Sprintf("%s: meta.schema_version: Unable to detect schema version: %v", path, perr)}
	case major != 1:
		return nil, nil, Errors{fmt.Sprintf("%s: meta.schema_version: Unsupported schema major version: %d", path, major)}
	case !versionPattern.Get().MatchString(sv):
		return nil, nil, Errors{fmt.Sprintf("%s: meta.schema_version: %q does not match '^1.([0-9]|[1-9][0-9]+)$'", path, sv)}
	case minor != 0:
		warns = append(warns, fmt.Sprintf("Provider config file [%s] is at schema version %d.%d. Nova supports the major version, but not the minor. Some fields may be ignored.", path, major, minor))
	}
	if _, ok := top["__source_file"]; ok {
		errs = append(errs, fmt.Sprintf("%s: __source_file: is reserved and must not be set", path))
	}
	rawProvs, present := top["providers"]
	list, ok := rawProvs.([]any)
	if present && !ok {
		return nil, warns, append(errs, fmt.Sprintf("%s: providers: want a list", path))
	}
	var out []*Provider
	for i, raw := range list {
		p, warn, perrs := parseProvider(path, i, raw)
		errs = append(errs, perrs...)
		if warn != "" {
			warns = append(warns, warn)
		}
		if p != nil && len(perrs) == 0 && warn == "" {
			out = append(out, p)
		}
	}
	return out, warns, errs
}

// parseVersion is microversion_parse.parse_version_string: "X.Y" with
// integers.
func parseVersion(s string) (int, int, error) {
	a, b, ok := strings.Cut(strings.TrimSpace(s), ".")
	if !ok {
		return 0, 0, fmt.Errorf("%q is not MAJOR.MINOR", s)
	}
	major, err1 := strconv.Atoi(a)
	minor, err2 := strconv.Atoi(b)
	if err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("%q is not MAJOR.MINOR", s)
	}
	return major, minor, nil
}

func parseProvider(path string, i int, raw any) (*Provider, string, Errors) {
	var errs Errors
	m, ok := raw.(map[string]any)
	if !ok {
		return nil, "", Errors{fmt.Sprintf("%s: want a mapping with identification", entryLabel(path, i, false, ""))}
	}
	p := &Provider{File: path, Index: i, Inventories: map[string]Inventory{}}
	fail := func(field, format string, args ...any) {
		errs = append(errs, fmt.Sprintf("%s: %s: %s", p.Label(), field, fmt.Sprintf(format, args...)))
	}
	ident, ok := m["identification"].(map[string]any)
	switch {
	case m["identification"] == nil:
		fail("identification", "is required")
	case !ok:
		fail("identification", "want a mapping with uuid or name")
	case len(ident) != 1:
		fail("identification", "give exactly one of uuid and name (found %d keys)", len(ident))
	default:
		for k, v := range ident {
			s, isStr := v.(string)
			switch {
			case k != "uuid" && k != "name":
				fail("identification."+k, "unknown key: give uuid or name")
			case !isStr:
				fail("identification."+k, "want a string")
			case k == "uuid" && s != ComputeNode && !uuidPattern.Get().MatchString(s):
				fail("identification.uuid", "%q is neither a UUID nor %s", s, ComputeNode)
			case k == "name" && (len([]rune(s)) < 1 || len([]rune(s)) > 200):
				fail("identification.name", "want 1 to 200 characters")
			default:
				p.ID, p.ByName = s, k == "name"
			}
		}
	}
	if len(errs) > 0 {
		return nil, "", errs
	}
	if inv, present := m["inventories"]; present {
		im, ok := inv.(map[string]any)
		if !ok {
			fail("inventories", "want a mapping with additional")
		} else if add, present := im["additional"]; present {
			list, ok := add.([]any)
			if !ok {
				fail("inventories.additional", "want a list")
			}
			for k, item := range list {
				p.parseInventoryItem(fmt.Sprintf("inventories.additional[%d]", k), item, fail)
			}
		}
	}
	if tr, present := m["traits"]; present {
		tm, ok := tr.(map[string]any)
		if !ok {
			fail("traits", "want a mapping with additional")
		} else if add, present := tm["additional"]; present {
			list, ok := add.([]any)
			if !ok {
				fail("traits.additional", "want a list")
			}
			seen := map[string]bool{}
			for k, item := range list {
				field := fmt.Sprintf("traits.additional[%d]", k)
				s, ok := item.(string)
				switch {
				case !ok:
					fail(field, "want a string")
				case !namePattern.Get().MatchString(s):
					fail(field, "%q does not match '^[A-Z0-9_]{1,255}$'", s)
				case !strings.HasPrefix(s, "CUSTOM_"):
					fail(field, "Invalid traits, only custom traits are allowed: %s", s)
				case !seen[s]:
					seen[s] = true
					p.Traits = append(p.Traits, s)
				}
			}
		}
	}
	if len(errs) > 0 {
		return nil, "", errs
	}
	if len(p.Classes) == 0 && len(p.Traits) == 0 {
		return nil, fmt.Sprintf("Provider %s defined in %s has no additional inventories or traits and will be ignored.", p.ID, path), nil
	}
	return p, "", nil
}

var inventoryFields = []string{"total", "reserved", "min_unit", "max_unit", "step_size", "allocation_ratio"}

func (p *Provider) parseInventoryItem(field string, item any, fail func(field, format string, args ...any)) {
	m, ok := item.(map[string]any)
	if !ok {
		fail(field, "want a mapping of resource class to inventory")
		return
	}
	classes := make([]string, 0, len(m))
	for rc := range m {
		classes = append(classes, rc)
	}
	sort.Strings(classes)
	for _, rc := range classes {
		f := field + "." + rc
		switch {
		case !namePattern.Get().MatchString(rc):
			fail(f, "resource class %q does not match '^[A-Z0-9_]{1,255}$'", rc)
			continue
		case !strings.HasPrefix(rc, "CUSTOM_"):
			fail(f, "Invalid resource class, only custom resource classes are allowed: %s", rc)
			continue
		case migrate.ManagesClass(rc):
			fail(f, "%s is managed by rpctl migrate inventory (and Nova's resource tracker); a provider config may not set it", rc)
			continue
		}
		for _, pre := range novaCustomPrefixes {
			if strings.HasPrefix(rc, pre) {
				fail(f, "classes %s* are reported by Nova itself; a provider config may not set them", pre)
			}
		}
		if _, dup := p.Inventories[rc]; dup {
			fail(f, "%s is given twice for this provider", rc)
			continue
		}
		rec, ok := m[rc].(map[string]any)
		if !ok {
			fail(f, "want a mapping with total")
			continue
		}
		var inv Inventory
		good := true
		for k, v := range rec {
			switch k {
			case "total", "reserved", "min_unit", "max_unit", "step_size":
				n, ok := wholeNumber(v)
				if !ok {
					fail(f+"."+k, "want an integer, got %v", v)
					good = false
					continue
				}
				switch k {
				case "total":
					inv.Total = n
				case "reserved":
					inv.Reserved = &n
				case "min_unit":
					inv.MinUnit = &n
				case "max_unit":
					inv.MaxUnit = &n
				case "step_size":
					inv.StepSize = &n
				}
			case "allocation_ratio":
				x, ok := number(v)
				if !ok {
					fail(f+"."+k, "want a number, got %v", v)
					good = false
					continue
				}
				inv.AllocationRatio = &x
			default:
				fail(f+"."+k, "unknown field: only %s are allowed", strings.Join(inventoryFields, ", "))
				good = false
			}
		}
		if _, ok := rec["total"]; !ok {
			fail(f+".total", "is required")
			good = false
		}
		if good {
			p.Classes = append(p.Classes, rc)
			p.Inventories[rc] = inv
		}
	}
}

// wholeNumber accepts what JSON schema calls an integer (booleans are not).
func wholeNumber(v any) (int64, bool) {
	switch x := v.(type) {
	case int:
		return int64(x), true
	case float64:
		if x == float64(int64(x)) {
			return int64(x), true
		}
	}
	return 0, false
}

func number(v any) (float64, bool) {
	switch x := v.(type) {
	case int:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}
