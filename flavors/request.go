// Package flavors turns a Nova flavor (and optionally an image) into the
// Placement request Nova's scheduler sends (Nova 26's, or another
// release's: Options.Release, Rules): what
// nova.scheduler.request_filter adds to the request spec, then
// nova.scheduler.utils.ResourceRequest.from_request_spec, to_querystring.
// It reads nothing itself: callers hand it a flavor from the API database
// or a file.
package flavors

import (
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/rpctl/rpctl/candidates"
	"github.com/rpctl/rpctl/internal/lazyre"
	"github.com/rpctl/rpctl/internal/nova"
	"github.com/rpctl/rpctl/internal/release"
	"github.com/rpctl/rpctl/internal/standards"
)

// NovaMicroversion is the Placement microversion Nova 26 asks
// GET /allocation_candidates at (report.py SAME_SUBTREE_VERSION).
const NovaMicroversion candidates.Microversion = 36

// DefaultLimit is [scheduler]max_placement_results' default.
const DefaultLimit = 1000

// Options are the parts of Nova's configuration and of the boot request
// that change the Placement request.
type Options struct {
	// Limit is [scheduler]max_placement_results; 0 sends no limit.
	Limit int
	// BootFromVolume leaves root_gb out of DISK_GB (RequestSpec.is_bfv).
	BootFromVolume bool
	// NoPinningTranslate builds the second query Nova sends for a pinned
	// flavor (enable_pinning_translate=False: VCPU instead of PCPU).
	NoPinningTranslate bool
	// ImageMetadataPrefilter is [scheduler]image_metadata_prefilter.
	ImageMetadataPrefilter bool
	// ImageTypeSupport is [scheduler]query_placement_for_image_type_support.
	ImageTypeSupport bool
	// Release is the Nova release whose rules build the request ("" is
	// release.Default): see Rules.
	Release release.Name
}

// Group is one request group (nova.objects.RequestGroup): Suffix "" is the
// unsuffixed group.
type Group struct {
	Suffix    string           `json:"suffix"`
	Resources map[string]int64 `json:"resources"`
	Required  []string         `json:"required_traits"`
	Forbidden []string         `json:"forbidden_traits"`
}

// Request is what ResourceRequest holds once from_request_spec is done.
type Request struct {
	// Groups are ordered by suffix, the unsuffixed group first.
	Groups        []Group  `json:"groups"`
	GroupPolicy   string   `json:"group_policy"`
	RootRequired  []string `json:"root_required"`
	RootForbidden []string `json:"root_forbidden"`
	Limit         int      `json:"limit"`
	// CPUPinningRequested is set for hw:cpu_policy=dedicated: Nova then
	// also asks the NoPinningTranslate query and merges both answers.
	CPUPinningRequested bool `json:"cpu_pinning_requested"`
	// Warnings are the extra specs Nova ignores with a log warning.
	Warnings []string `json:"-"`
}

// xsKey is ResourceRequest.XS_KEYPAT; Python's "$" also matches before a
// final newline, which "[^\n]*\n?$" reproduces.
var xsKey = &lazyre.Regexp{Expr: `^(resources|trait)([a-zA-Z0-9_-]{1,64})?:([^\n]*)\n?$`}

// builder is ResourceRequest while it is being built: groups keyed by
// suffix, with sets for the traits.
type builder struct {
	groups      map[string]*bgroup
	order       []string
	groupPolicy string
	rootReq     map[string]bool
	rootForb    map[string]bool
	pinning     bool
	warnings    []string
}

type bgroup struct {
	resources map[string]int64
	required  map[string]bool
	forbidden map[string]bool
}

func (b *builder) group(suffix string) *bgroup {
	g, ok := b.groups[suffix]
	if !ok {
		g = &bgroup{resources: map[string]int64{}, required: map[string]bool{}, forbidden: map[string]bool{}}
		b.groups[suffix] = g
		b.order = append(b.order, suffix)
	}
	return g
}

// addResource is RequestGroup.add_resource: invalid classes and amounts
// are ignored with a warning.
func (b *builder) addResource(class, amount, suffix string) {
	g := b.group(suffix)
	if !strings.HasPrefix(class, "CUSTOM_") && !standards.IsResourceClass(class) {
		b.warnings = append(b.warnings, fmt.Sprintf("Received an invalid ResourceClass '%s' in extra_specs.", class))
		return
	}
	n, ok := candidates.PyInt(amount)
	if !ok || n < 0 {
		b.warnings = append(b.warnings, fmt.Sprintf("Resource amounts must be nonnegative integers. Received '%s'", amount))
		return
	}
	g.resources[class] = n
}

func (b *builder) addAmount(class string, n int64) {
	b.addResource(class, strconv.FormatInt(n, 10), "")
}

// addTrait is RequestGroup.add_trait.
func (b *builder) addTrait(name, kind, suffix string) {
	g := b.group(suffix)
	switch kind {
	case "required":
		g.required[name] = true
	case "forbidden":
		g.forbidden[name] = true
	default:
		b.warnings = append(b.warnings, fmt.Sprintf("Only (required, forbidden) traits are supported. Received '%s'.", kind))
	}
}

func (b *builder) merged() map[string]int64 {
	out := map[string]int64{}
	for _, g := range b.groups {
		for c, n := range g.resources {
			out[c] += n
		}
	}
	return out
}

// Build is request_filter.process_reqspec (the filters that need no other
// service) followed by resources_from_request_spec for a new boot. img may
// be nil. Errors carry Nova's exception message.
func Build(f *nova.Flavor, img *Image, o Options) (*Request, error) {
	if img == nil {
		img = &Image{}
	}
	rules, err := RulesOf(o.Release)
	if err != nil {
		return nil, err
	}
	// ImageMeta.from_dict comes first: a property its field refuses fails
	// the request before any filter runs.
	props, err := rules.imageProps(img)
	if err != nil {
		return nil, err
	}
	coerced := *img
	coerced.Properties = props
	fi := &flavorImage{f: f, img: &coerced, rules: rules}
	b := &builder{groups: map[string]*bgroup{}, rootReq: map[string]bool{}, rootForb: map[string]bool{}}
	if err := b.requestFilters(fi, o); err != nil {
		return nil, err
	}
	// _process_extra_specs; map order does not matter: every key names
	// its own group and class or trait, and the query is sorted.
	keys := make([]string, 0, len(f.ExtraSpecs))
	for k := range f.ExtraSpecs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := f.ExtraSpecs[k]
		if k == "group_policy" {
			if v != "none" && v != "isolate" {
				b.warnings = append(b.warnings, fmt.Sprintf("Invalid group_policy '%s'. Valid values are 'none' and 'isolate'.", v))
				continue
			}
			b.groupPolicy = v
			continue
		}
		m := xsKey.Get().FindStringSubmatch(k)
		if m == nil {
			continue
		}
		if m[1] == "resources" {
			b.addResource(m[3], v, m[2])
		} else {
			b.addTrait(m[3], v, m[2])
		}
	}
	// _process_image_meta: image traits go to the unsuffixed group.
	for _, t := range img.TraitsRequired {
		b.addTrait(t, "required", "")
	}
	if !o.NoPinningTranslate {
		if err := b.translatePinning(fi); err != nil {
			return nil, err
		}
	}
	merged := b.merged()
	_, hasV := merged["VCPU"]
	_, hasP := merged["PCPU"]
	if !hasV && !hasP {
		b.addAmount("VCPU", f.VCPUs)
	}
	if _, ok := merged["MEMORY_MB"]; !ok {
		b.addAmount("MEMORY_MB", f.MemoryMB)
	}
	if _, ok := merged["DISK_GB"]; !ok {
		disk := f.EphemeralGB + ceilGB(f.Swap)
		if !o.BootFromVolume {
			disk += f.RootGB
		}
		if disk != 0 {
			b.addAmount("DISK_GB", disk)
		}
	}
	if err := b.translateRest(fi); err != nil {
		return nil, err
	}
	return b.finish(o), nil
}

// ceilGB is compute_utils.convert_mb_to_ceil_gb.
func ceilGB(mb int64) int64 {
	if mb == 0 {
		return 0
	}
	q := mb / 1024
	if mb%1024 != 0 && mb > 0 {
		q++
	}
	return q
}

// finish is strip_zeros plus the request's final shape.
func (b *builder) finish(o Options) *Request {
	r := &Request{GroupPolicy: b.groupPolicy, Limit: o.Limit, CPUPinningRequested: b.pinning, Warnings: b.warnings}
	for _, s := range b.order {
		g := b.groups[s]
		for c, n := range g.resources {
			if n == 0 {
				delete(g.resources, c)
			}
		}
		if len(g.resources) == 0 && len(g.required) == 0 && len(g.forbidden) == 0 {
			continue
		}
		r.Groups = append(r.Groups, Group{Suffix: s, Resources: g.resources, Required: setList(g.required), Forbidden: setList(g.forbidden)})
	}
	slices.SortFunc(r.Groups, func(a, b Group) int { return strings.Compare(a.Suffix, b.Suffix) })
	r.RootRequired, r.RootForbidden = setList(b.rootReq), setList(b.rootForb)
	return r
}

func setList(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Group returns the group with that suffix, or nil.
func (r *Request) Group(suffix string) *Group {
	for i := range r.Groups {
		if r.Groups[i].Suffix == suffix {
			return &r.Groups[i]
		}
	}
	return nil
}

// QueryString is ResourceRequest.to_querystring(): every parameter sorted by
// (name, value) and encoded by urllib's urlencode (quote_plus).
func (r *Request) QueryString() string {
	type kv struct{ k, v string }
	var ps []kv
	if r.Limit > 0 {
		ps = append(ps, kv{"limit", strconv.Itoa(r.Limit)})
	}
	if r.GroupPolicy != "" {
		ps = append(ps, kv{"group_policy", r.GroupPolicy})
	}
	if len(r.RootRequired)+len(r.RootForbidden) > 0 {
		ps = append(ps, kv{"root_required", traitList(r.RootRequired, r.RootForbidden)})
	}
	for _, g := range r.Groups {
		res := make([]string, 0, len(g.Resources))
		for c, n := range g.Resources {
			res = append(res, fmt.Sprintf("%s:%d", c, n))
		}
		sort.Strings(res)
		ps = append(ps, kv{"resources" + g.Suffix, strings.Join(res, ",")})
		if len(g.Required)+len(g.Forbidden) > 0 {
			ps = append(ps, kv{"required" + g.Suffix, traitList(g.Required, g.Forbidden)})
		}
	}
	slices.SortFunc(ps, func(a, b kv) int {
		if c := strings.Compare(a.k, b.k); c != 0 {
			return c
		}
		return strings.Compare(a.v, b.v)
	})
	parts := make([]string, len(ps))
	for i, p := range ps {
		parts[i] = url.QueryEscape(p.k) + "=" + quotePlus(p.v)
	}
	return strings.Join(parts, "&")
}

func traitList(req, forb []string) string {
	vals := slices.Clone(req)
	for _, t := range forb {
		vals = append(vals, "!"+t)
	}
	return strings.Join(vals, ",")
}

// quotePlus is urllib.parse.quote_plus: only letters, digits and "_.-~"
// stay as they are; a space becomes "+". (Go's QueryEscape keeps "~"
// escaped, which Python does not.)
func quotePlus(s string) string {
	return strings.ReplaceAll(url.QueryEscape(s), "%7E", "~")
}

// Candidates parses the query as Placement would at Nova's microversion, so
// that the built-in core answers exactly what Nova would be told.
func (r *Request) Candidates() (*candidates.Request, error) {
	return candidates.ParseQuery(r.QueryString(), NovaMicroversion)
}
