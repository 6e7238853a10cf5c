package candidates

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/rpctl/rpctl/internal/pyjson"
)

// ParseMicroversion reads a Placement microversion as given in the
// OpenStack-API-Version header ("1.39" or "latest"). Versions Placement 8.0.0
// does not serve are rejected with the status and text Placement's
// microversion middleware uses; 1.0–1.9 are accepted because Placement
// accepts them too (ParseQuery then answers 404 as Placement does).
func ParseMicroversion(s string) (Microversion, error) {
	if s == "latest" {
		return MaxMicroversion, nil
	}
	major, minor, ok := strings.Cut(s, ".")
	if !ok || !allASCIIDigits(major) || !allASCIIDigits(minor) {
		return 0, &APIError{Status: 400, Code: DefaultErrorCode,
			Message: fmt.Sprintf("Invalid microversion: invalid version string: %s; want 1.N or latest", s)}
	}
	maj, err1 := strconv.Atoi(major)
	minorN, err2 := strconv.Atoi(minor)
	if err1 != nil || err2 != nil || maj != 1 || minorN > int(MaxMicroversion) {
		return 0, &APIError{Status: 406, Code: DefaultErrorCode,
			Message: "Invalid microversion: Unacceptable version header: " + s}
	}
	return Microversion(minorN), nil
}

func allASCIIDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// ParseQuery parses the raw query string of GET /allocation_candidates the
// way Placement 8.0.0 does at microversion 1.mv. On failure the error is an
// *APIError whose status, code and message are Placement's; when a request has
// several problems the one reported is the one Placement reports, because
// the checks run in Placement's order: version, query decoding, JSON schema,
// request-wide parameters, request groups, group_policy.
func ParseQuery(rawQuery string, mv Microversion) (*Request, error) {
	if mv < MinMicroversion {
		return nil, &APIError{Status: 404, Code: DefaultErrorCode}
	}
	if mv > MaxMicroversion {
		return nil, &APIError{Status: 406, Code: DefaultErrorCode,
			Message: fmt.Sprintf("Invalid microversion: Unacceptable version header: 1.%d", int(mv))}
	}
	q, err := decodeQuery(rawQuery)
	if err != nil {
		return nil, err
	}
	if err := validateSchema(q, mv); err != nil {
		return nil, err
	}
	req := &Request{Microversion: mv}
	if err := parseRequestWide(q, mv, req); err != nil {
		return nil, err
	}
	if err := parseGroups(q, mv, req); err != nil {
		return nil, err
	}
	if req.GroupPolicy == "" {
		suffixed := 0
		for i := range req.Groups {
			if req.Groups[i].Suffix != "" {
				suffixed++
			}
		}
		if suffixed > 1 {
			return nil, badRequest(DefaultErrorCode, `The "group_policy" parameter is required when specifying more than one "resources{N}" parameter.`)
		}
	}
	return req, nil
}

func badRequest(code, msg string) *APIError {
	return &APIError{Status: 400, Code: code, Message: msg}
}

// query is the decoded query string as webob's MultiDict holds it: every
// key=value pair in order, repeats included.
type query []qsPair

type qsPair struct{ key, value string }

// getAll returns every value of key, in order (MultiDict.getall).
func (q query) getAll(key string) []string {
	var out []string
	for _, p := range q {
		if p.key == key {
			out = append(out, p.value)
		}
	}
	return out
}

// dict is what dict(req.GET) gives, the object JSON schema validates: each
// key once, with its last value.
func (q query) dict() map[string]string {
	d := make(map[string]string, len(q))
	for _, p := range q {
		d[p.key] = p.value
	}
	return d
}

// decodeQuery splits and unescapes a query string exactly like webob 1.8's
// parse_qsl_text, which is more lenient than net/url: ';' also separates
// pairs, a pair without '=' has an empty value, and a malformed %-escape is
// kept literally instead of failing. Names and values must then be UTF-8;
// Placement reports a decoding failure as a query-parameter error.
func decodeQuery(raw string) (query, error) {
	raw = strings.ReplaceAll(raw, "+", " ")
	var q query
	for _, amp := range strings.Split(raw, "&") {
		for _, pair := range strings.Split(amp, ";") {
			if pair == "" {
				continue
			}
			k, v, _ := strings.Cut(pair, "=")
			key, value := unquoteLenient(k), unquoteLenient(v)
			for _, s := range []string{key, value} {
				if msg := pyUTF8Error(s); msg != "" {
					return nil, badRequest(DefaultErrorCode, "Invalid query string parameters: "+msg)
				}
			}
			q = append(q, qsPair{key, value})
		}
	}
	return q, nil
}

// unquoteLenient is webob's bytes unquote: split on '%' and, for each piece
// after the first, turn its first two bytes into a byte if Python's
// int(piece[:2], 16) accepts them and gives 0–255, else keep '%' literally.
func unquoteLenient(s string) string {
	pieces := strings.Split(s, "%")
	if len(pieces) == 1 {
		return s
	}
	var b strings.Builder
	b.WriteString(pieces[0])
	for _, p := range pieces[1:] {
		head := p[:min(2, len(p))]
		if v, ok := pyHexByte(head); ok {
			b.WriteByte(v)
			b.WriteString(p[len(head):])
			continue
		}
		b.WriteByte('%')
		b.WriteString(p)
	}
	return b.String()
}

// pyHexByte is int(t, 16) for t of one or two bytes, limited to what
// bytes([n]) accepts: surrounding ASCII whitespace and a sign are allowed.
func pyHexByte(t string) (byte, bool) {
	t = strings.Trim(t, " \t\n\v\f\r")
	neg := false
	if t != "" && (t[0] == '+' || t[0] == '-') {
		neg = t[0] == '-'
		t = t[1:]
	}
	if t == "" {
		return 0, false
	}
	var v byte
	for i := 0; i < len(t); i++ {
		d, ok := unhex(t[i])
		if !ok {
			return 0, false
		}
		v = v<<4 | d
	}
	if neg && v != 0 {
		return 0, false
	}
	return v, true
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// pyUTF8Error returns the text of the UnicodeDecodeError Python's strict
// UTF-8 decoder raises for s, or "" when s is valid UTF-8.
func pyUTF8Error(s string) string {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r != utf8.RuneError || size > 1 {
			i += size
			continue
		}
		// Python reports the maximal valid prefix of the broken sequence.
		c := s[i]
		var need int
		lo, hi := byte(0x80), byte(0xBF)
		switch {
		case c >= 0xC2 && c <= 0xDF:
			need = 1
		case c >= 0xE0 && c <= 0xEF:
			need = 2
			if c == 0xE0 {
				lo = 0xA0
			} else if c == 0xED {
				hi = 0x9F
			}
		case c >= 0xF0 && c <= 0xF4:
			need = 3
			if c == 0xF0 {
				lo = 0x90
			} else if c == 0xF4 {
				hi = 0x8F
			}
		default:
			return fmt.Sprintf("'utf-8' codec can't decode byte 0x%02x in position %d: invalid start byte", c, i)
		}
		n := 1
		reason := "unexpected end of data"
		for k := 1; k <= need; k++ {
			if i+k >= len(s) {
				break
			}
			b := s[i+k]
			if k == 1 && (b < lo || b > hi) || k > 1 && (b < 0x80 || b > 0xBF) {
				reason = "invalid continuation byte"
				break
			}
			n++
		}
		if n == 1 {
			return fmt.Sprintf("'utf-8' codec can't decode byte 0x%02x in position %d: %s", c, i, reason)
		}
		return fmt.Sprintf("'utf-8' codec can't decode bytes in position %d-%d: %s", i, i+n-1, reason)
	}
	return ""
}

// Python's re `$` also matches just before a final newline, and both the
// schema and placement.lib match keys with such patterns, so "resources\n"
// counts as "resources".
func trimFinalNewline(s string) string { return strings.TrimSuffix(s, "\n") }

// groupKey splits a query key into one of the four group parameter prefixes
// and its suffix, following placement.lib's _QS_KEY_PATTERN(_1_33).
func groupKey(key string, mv Microversion) (prefix, suffix string, ok bool) {
	key = trimFinalNewline(key)
	for _, p := range []string{"resources", "required", "member_of", "in_tree"} {
		if rest, found := strings.CutPrefix(key, p); found && (rest == "" || validSuffix(rest, mv)) {
			return p, rest, true
		}
	}
	return "", "", false
}

func validSuffix(s string, mv Microversion) bool {
	if s == "" {
		return false
	}
	if mv >= 33 {
		if len(s) > 64 {
			return false
		}
		for i := 0; i < len(s); i++ {
			c := s[i]
			if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
				return false
			}
		}
		return true
	}
	return s[0] != '0' && allASCIIDigits(s)
}

// schemaVersion is the microversion whose GET_SCHEMA_1_xx applies at mv.
func schemaVersion(mv Microversion) Microversion {
	for _, v := range []Microversion{36, 35, 33, 31, 25, 21, 17, 16} {
		if mv >= v {
			return v
		}
	}
	return 10
}

// schemaProperties are the schema's fixed property names at mv.
func schemaProperties(mv Microversion) []string {
	if mv >= 25 {
		props := []string{"limit", "group_policy"}
		if mv >= 35 {
			props = append(props, "root_required")
		}
		if mv >= 36 {
			props = append(props, "same_subtree")
		}
		return props
	}
	props := []string{"resources"}
	if mv >= 16 {
		props = append(props, "limit")
	}
	if mv >= 17 {
		props = append(props, "required")
	}
	if mv >= 21 {
		props = append(props, "member_of")
	}
	return props
}

// schemaPatterns are the patternProperties regexes, in sorted order as
// jsonschema lists them in messages.
func schemaPatterns(mv Microversion) []string {
	if mv < 25 {
		return nil
	}
	suffix := `[1-9][0-9]*`
	if mv >= 33 {
		suffix = `[a-zA-Z0-9_-]{1,64}`
	}
	prefixes := []string{"member_of", "required", "resources"}
	if mv >= 31 {
		prefixes = []string{"in_tree", "member_of", "required", "resources"}
	}
	out := make([]string, len(prefixes))
	for i, p := range prefixes {
		out[i] = "^" + p + "(" + suffix + ")?$"
	}
	return out
}

// validateSchema reproduces util.validate_query_params: jsonschema 4.10
// validates dict(req.GET) and best_match picks the error. Root-level errors
// (required, then additionalProperties, in schema key order) beat property
// errors (limit, then group_policy).
func validateSchema(q query, mv Microversion) error {
	d := q.dict()
	props := schemaProperties(mv)
	var msg, validator, schemaPath, instancePath, schemaText, instanceText string
	if _, ok := d["resources"]; mv < 25 && !ok {
		msg, validator = "'resources' is a required property", "required"
	} else {
		var extras []string
		for k := range d {
			if slices.Contains(props, k) {
				continue
			}
			if p, _, ok := groupKey(k, mv); ok && mv >= 25 && (p != "in_tree" || mv >= 31) {
				continue
			}
			extras = append(extras, k)
		}
		sort.Strings(extras)
		if len(extras) > 0 {
			validator = "additionalProperties"
			quoted := make([]string, len(extras))
			for i, e := range extras {
				quoted[i] = pyjson.Repr(e)
			}
			joined := strings.Join(quoted, ", ")
			switch {
			case mv >= 25:
				verb := "does"
				if len(extras) > 1 {
					verb = "do"
				}
				pats := schemaPatterns(mv)
				for i, p := range pats {
					pats[i] = pyjson.Repr(p)
				}
				msg = fmt.Sprintf("%s %s not match any of the regexes: %s", joined, verb, strings.Join(pats, ", "))
			case len(extras) == 1:
				msg = fmt.Sprintf("Additional properties are not allowed (%s was unexpected)", joined)
			default:
				msg = fmt.Sprintf("Additional properties are not allowed (%s were unexpected)", joined)
			}
		}
	}
	if msg != "" {
		schemaPath, instancePath = "schema", "instance"
		schemaText = schemaPformat(schemaVersion(mv))
		instanceText = pformatDict(d)
	} else {
		if v, ok := d["limit"]; ok && mv >= 16 && !limitPatternOK(v) {
			msg = fmt.Sprintf("%s does not match '^[1-9][0-9]*$'", pyjson.Repr(v))
			validator = "pattern"
			schemaPath, instancePath = "schema['properties']['limit']", "instance['limit']"
			schemaText = limitSchemaPformat
			instanceText = pformatString(v)
		} else if v, ok := d["group_policy"]; ok && mv >= 25 && v != "none" && v != "isolate" {
			msg = fmt.Sprintf("%s is not one of ['none', 'isolate']", pyjson.Repr(v))
			validator = "enum"
			schemaPath, instancePath = "schema['properties']['group_policy']", "instance['group_policy']"
			schemaText = groupPolicySchemaPformat
			instanceText = pformatString(v)
		}
	}
	if msg == "" {
		return nil
	}
	// jsonschema's ValidationError.__str__ layout, after textwrap.dedent.
	text := fmt.Sprintf("%s\n\nFailed validating %s in %s:\n    %s\n\nOn %s:\n    %s",
		msg, pyjson.Repr(validator), schemaPath, indentLines(schemaText), instancePath, indentLines(instanceText))
	return badRequest(DefaultErrorCode, "Invalid query string parameters: "+text)
}

func indentLines(s string) string { return strings.ReplaceAll(s, "\n", "\n    ") }

func limitPatternOK(v string) bool {
	v = trimFinalNewline(v)
	return v != "" && v[0] != '0' && allASCIIDigits(v)
}

// parseRequestWide mirrors lib.RequestWideParams.from_request.
func parseRequestWide(q query, mv Microversion, req *Request) error {
	// The schema checked the last limit; Placement uses the first, so a bad
	// first value gets through to int() and becomes a 500.
	if limits := q.getAll("limit"); len(limits) > 0 {
		n, ok := pyInt(limits[0])
		if !ok {
			return &APIError{Status: 500, Code: DefaultErrorCode,
				Message: "invalid literal for int() with base 10: " + pyjson.Repr(limits[0])}
		}
		switch {
		case n.overflow || n.v > math.MaxInt:
			if n.neg {
				req.Limit = math.MinInt
			} else {
				req.Limit = 0 // larger than any result set: no limit at all
			}
		case n.neg:
			// Placement slices [:limit], so a negative limit drops that
			// many candidates from the end.
			req.Limit = -int(n.v)
		default:
			req.Limit = int(n.v)
		}
	}
	if gp := q.getAll("group_policy"); len(gp) > 0 {
		// The schema checked only the last value, so the first may be
		// anything; Placement only ever tests for "isolate".
		switch gp[0] {
		case "", "isolate":
			req.GroupPolicy = gp[0]
		default:
			req.GroupPolicy = "none"
		}
	}
	if rr := q.getAll("root_required"); len(rr) > 0 {
		if len(rr) > 1 {
			return badRequest(CodeDuplicateKey, "Query parameter 'root_required' may be specified only once.")
		}
		// root_required has no any-of form even at 1.39.
		required, forbidden, err := parseTraits(rr[0], true, false)
		if err != nil {
			return err
		}
		var conflicts []string
		for _, set := range required {
			t := set[0]
			if slices.Contains(forbidden, t) {
				if !slices.Contains(conflicts, t) {
					conflicts = append(conflicts, t)
				}
				continue
			}
			if !slices.Contains(req.RootRequired, t) {
				req.RootRequired = append(req.RootRequired, t)
			}
		}
		if len(conflicts) > 0 {
			sort.Strings(conflicts) // Python prints a set; any order is Placement's
			return badRequest(CodeBadValue, "Conflicting required and forbidden traits found in root_required: "+strings.Join(conflicts, ", "))
		}
		req.RootForbidden = forbidden
	}
	for _, v := range q.getAll("same_subtree") {
		var suffixes []string
		for _, s := range strings.Split(v, ",") {
			s = pyStrip(s)
			if s == "" {
				return badRequest(CodeBadValue, "Empty string (unsuffixed group) can not be specified in `same_subtree` ")
			}
			if !slices.Contains(suffixes, s) {
				suffixes = append(suffixes, s)
			}
		}
		req.SameSubtree = append(req.SameSubtree, suffixes)
	}
	return nil
}

// parseGroups mirrors lib.RequestGroup.dict_from_request: one pass over the
// parameters in query order (so the first malformed one is reported), then
// the structural checks.
func parseGroups(q query, mv Microversion, req *Request) error {
	for _, p := range q {
		prefix, suffix, ok := groupKey(p.key, mv)
		if !ok {
			continue
		}
		g := req.Group(suffix)
		if g == nil {
			req.Groups = append(req.Groups, RequestGroup{Suffix: suffix})
			g = &req.Groups[len(req.Groups)-1]
		}
		switch prefix {
		case "resources":
			res, order, err := parseResources(p.value)
			if err != nil {
				return err
			}
			g.Resources = res // a repeated resources[N]: the last one wins
			g.ResourceOrder = order
		case "required":
			// Gathered by the canonical key, so "required1\n" contributes
			// nothing but still creates group "1", as in Placement.
			values := q.getAll("required" + suffix)
			if mv < 39 && len(values) > 1 {
				values = values[len(values)-1:]
			}
			g.RequiredTraits, g.ForbiddenTraits = nil, nil
			for _, v := range values {
				r, f, err := parseTraits(v, mv >= 22, mv >= 39)
				if err != nil {
					return err
				}
				g.RequiredTraits = append(g.RequiredTraits, r...)
				for _, t := range f {
					if !slices.Contains(g.ForbiddenTraits, t) {
						g.ForbiddenTraits = append(g.ForbiddenTraits, t)
					}
				}
			}
		case "member_of":
			values := q.getAll("member_of" + suffix)
			if mv < 24 && len(values) > 1 {
				return badRequest(DefaultErrorCode, fmt.Sprintf("Multiple member_of%s parameters are not supported", suffix))
			}
			g.MemberOf, g.ForbiddenAggs = nil, nil
			for _, v := range values {
				required, forbidden, err := parseMemberOf(v)
				if err != nil {
					return err
				}
				if len(required) > 0 {
					g.MemberOf = append(g.MemberOf, required)
				}
				if len(forbidden) > 0 {
					if mv < 32 {
						return badRequest(DefaultErrorCode, fmt.Sprintf("Forbidden member_of%s parameters are not supported in the specified microversion", suffix))
					}
					for _, a := range forbidden {
						if !slices.Contains(g.ForbiddenAggs, a) {
							g.ForbiddenAggs = append(g.ForbiddenAggs, a)
						}
					}
				}
			}
		case "in_tree":
			v := pyStrip(p.value)
			if !UUIDLike(v) {
				return badRequest(DefaultErrorCode, "Invalid query string parameters: Expected 'in_tree' parameter to be a format of uuid. Got: "+p.value)
			}
			g.InTree = v
		}
	}

	if mv >= 36 {
		return checkSameSubtree(req)
	}
	if err := checkOrphans(req); err != nil {
		return err
	}
	if mv >= 22 {
		return checkConflicts(req)
	}
	return nil
}

func checkSameSubtree(req *Request) error {
	var resourceless []string
	for _, g := range req.Groups {
		if len(g.Resources) == 0 {
			resourceless = append(resourceless, g.Suffix)
		}
	}
	if len(resourceless) == len(req.Groups) {
		return badRequest(CodeMissingValue, "There must be at least one resources or resources[$S] parameter.")
	}
	var inSubtree []string
	for _, ss := range req.SameSubtree {
		for _, s := range ss {
			if !slices.Contains(inSubtree, s) {
				inSubtree = append(inSubtree, s)
			}
		}
	}
	// Placement lists these from Python sets, in hash order; sorted is as
	// good an order as any and stable.
	var bad []string
	for _, s := range resourceless {
		if !slices.Contains(inSubtree, s) {
			bad = append(bad, s)
		}
	}
	if len(bad) > 0 {
		sort.Strings(bad)
		return badRequest(CodeBadValue, fmt.Sprintf("Resourceless suffixed group request should be specified in `same_subtree` query param: bad group(s) - %s.", pyList(bad)))
	}
	var all []string
	for _, g := range req.Groups {
		all = append(all, g.Suffix)
	}
	for _, s := range inSubtree {
		if req.Group(s) == nil {
			bad = append(bad, s)
		}
	}
	if len(bad) > 0 {
		sort.Strings(bad)
		return badRequest(CodeBadValue, fmt.Sprintf("Real suffixes should be specified in `same_subtree`: %s not found in %s.", pyList(bad), pyList(all)))
	}
	return checkConflicts(req)
}

func checkOrphans(req *Request) error {
	var orphans []string
	for _, g := range req.Groups {
		if len(g.RequiredTraits) > 0 && len(g.Resources) == 0 {
			orphans = append(orphans, "required"+g.Suffix)
		}
	}
	if len(orphans) > 0 {
		return badRequest(DefaultErrorCode, "All traits parameters must be associated with resources.  Found the following orphaned traits keys: "+strings.Join(orphans, ", "))
	}
	for _, g := range req.Groups {
		if len(g.Resources) == 0 && (len(g.MemberOf) > 0 || len(g.ForbiddenAggs) > 0) {
			orphans = append(orphans, "member_of"+g.Suffix)
		}
	}
	if len(orphans) > 0 {
		return badRequest(DefaultErrorCode, "All member_of parameters must be associated with resources. Found the following orphaned member_of keys: "+strings.Join(orphans, ", "))
	}
	for _, g := range req.Groups {
		if len(g.Resources) == 0 {
			return badRequest(DefaultErrorCode, "All request groups must specify resources.")
		}
	}
	if len(req.Groups) == 0 {
		return badRequest(DefaultErrorCode, "At least one request group (`resources` or `resources{$S}`) is required.")
	}
	return nil
}

// checkConflicts is lib._check_forbidden: an any-of set conflicts when every
// member of it is forbidden in the same group.
func checkConflicts(req *Request) error {
	var conflicts []string
	for _, g := range req.Groups {
		for _, set := range g.RequiredTraits {
			all := true
			for _, t := range set {
				if !slices.Contains(g.ForbiddenTraits, t) {
					all = false
					break
				}
			}
			if all {
				sorted := slices.Clone(set)
				sort.Strings(sorted)
				conflicts = append(conflicts, fmt.Sprintf("required%s: (%s)", g.Suffix, strings.Join(sorted, ", ")))
			}
		}
	}
	if len(conflicts) == 0 {
		return nil
	}
	sort.Strings(conflicts)
	return badRequest(DefaultErrorCode, "Conflicting required and forbidden traits found in the following traits keys: "+strings.Join(conflicts, ", "))
}

const resourcesForm = "Badly formed resources parameter. Expected resources query string parameter in form: ?resources=VCPU:2,MEMORY_MB:1024. Got: "

// parseResources is util.normalize_resources_qs_param. Resource class names
// are not checked here: unknown names need the database. Placement accepts
// amounts of any size and then fails storing them in SQLite.
func parseResources(v string) (map[string]int64, []string, error) {
	return parseResourceAmounts(v, func(string) (int64, error) {
		return 0, &APIError{Status: 500, Code: DefaultErrorCode, Message: "Python int too large to convert to SQLite INTEGER"}
	})
}

// parseResourceAmounts is parseResources with huge deciding what an amount
// beyond int64 becomes.
func parseResourceAmounts(v string, huge func(class string) (int64, error)) (map[string]int64, []string, error) {
	if pyStrip(v) == "" {
		return nil, nil, badRequest(DefaultErrorCode, resourcesForm+"empty string.")
	}
	res := map[string]int64{}
	var order []string
	for _, item := range strings.Split(v, ",") {
		parts := strings.Split(item, ":")
		if len(parts) != 2 {
			return nil, nil, badRequest(DefaultErrorCode, resourcesForm+item+".")
		}
		rc, amount := parts[0], parts[1]
		n, ok := pyInt(amount)
		if !ok {
			return nil, nil, badRequest(DefaultErrorCode, fmt.Sprintf("Requested resource %s expected positive integer amount. Got: %s.", rc, amount))
		}
		if n.neg || n.v == 0 && !n.overflow {
			return nil, nil, badRequest(DefaultErrorCode, fmt.Sprintf("Requested resource %s requires amount >= 1. Got: %s.", rc, n.decimal()))
		}
		amt := int64(n.v)
		if n.overflow || n.v > math.MaxInt64 {
			var err error
			if amt, err = huge(rc); err != nil {
				return nil, nil, err
			}
		}
		if _, dup := res[rc]; !dup {
			order = append(order, rc)
		}
		res[rc] = amt
	}
	return res, order, nil
}

// parseTraits is util.normalize_traits_qs_param for one value of a
// required[N] (or root_required) parameter. Each inner slice of required is
// an any-of set; duplicates of plain traits are kept as Placement keeps them
// (they matter for its conflict message).
func parseTraits(v string, allowForbidden, allowAnyOf bool) (required [][]string, forbidden []string, err error) {
	if rest, ok := strings.CutPrefix(v, "in:"); ok {
		if !allowAnyOf {
			return nil, nil, badRequest(DefaultErrorCode, "Invalid query string parameters: The format 'in:HW_CPU_X86_VMX,CUSTOM_MAGIC' only supported since microversion 1.39. Got: "+v)
		}
		var anyOf []string
		for _, t := range strings.Split(rest, ",") {
			t = pyStrip(t)
			if t == "" {
				return nil, nil, badRequest(DefaultErrorCode, "Invalid query string parameters: Expected 'required' parameter value of the form: in:HW_CPU_X86_VMX,CUSTOM_MAGIC. Got an empty trait in: "+v)
			}
			if !slices.Contains(anyOf, t) {
				anyOf = append(anyOf, t)
			}
		}
		for _, t := range anyOf {
			if strings.HasPrefix(t, "!") {
				return nil, nil, badRequest(DefaultErrorCode, "Invalid query string parameters: The format 'in:HW_CPU_X86_VMX,CUSTOM_MAGIC' does not support forbidden traits. Got: "+v)
			}
		}
		return [][]string{anyOf}, nil, nil
	}
	form := "HW_CPU_X86_VMX,CUSTOM_MAGIC"
	if allowForbidden {
		form = "HW_CPU_X86_VMX,!CUSTOM_MAGIC"
	}
	for _, t := range strings.Split(v, ",") {
		t = pyStrip(t)
		if bare, isForbidden := strings.CutPrefix(t, "!"); isForbidden {
			// Every leading '!' goes (lstrip): "!!!FOO" forbids FOO.
			bare = strings.TrimLeft(bare, "!")
			if bare == "" {
				return nil, nil, badRequest(DefaultErrorCode, fmt.Sprintf("Invalid query string parameters: Expected 'required' parameter value of the form: %s. Got an empty trait in: %s", form, v))
			}
			if !slices.Contains(forbidden, bare) {
				forbidden = append(forbidden, bare)
			}
			continue
		}
		if t == "" {
			return nil, nil, badRequest(DefaultErrorCode, fmt.Sprintf("Invalid query string parameters: Expected 'required' parameter value of the form: %s. Got an empty trait in: %s", form, v))
		}
		required = append(required, []string{t})
	}
	if len(forbidden) > 0 && !allowForbidden {
		return nil, nil, badRequest(DefaultErrorCode, "Invalid query string parameters: Expected 'required' parameter value of the form: HW_CPU_X86_VMX,CUSTOM_MAGIC. Got: "+v)
	}
	return required, forbidden, nil
}

// parseMemberOf is util.normalize_member_of_qs_param. UUIDs are kept as
// written; Placement compares them to the database as written too.
func parseMemberOf(v string) (required, forbidden []string, err error) {
	if strings.Contains(v, ",") && !strings.HasPrefix(v, "in:") && !strings.HasPrefix(v, "!in:") {
		return nil, nil, badRequest(DefaultErrorCode, "Multiple values for 'member_of' must be prefixed with the 'in:' or '!in:' keyword using the valid microversion. Got: "+v)
	}
	var list []string
	neg := false
	switch {
	case strings.HasPrefix(v, "!in:"):
		list, neg = strings.Split(v[4:], ","), true
	case strings.HasPrefix(v, "!"):
		list, neg = []string{v[1:]}, true
	case strings.HasPrefix(v, "in:"):
		list = strings.Split(v[3:], ",")
	default:
		list = []string{v}
	}
	var uniq []string
	for _, a := range list {
		if !slices.Contains(uniq, a) {
			uniq = append(uniq, a)
		}
	}
	for _, a := range uniq {
		if !UUIDLike(a) {
			return nil, nil, badRequest(DefaultErrorCode, "Invalid query string parameters: Expected 'member_of' parameter to contain valid UUID(s). Got: "+a)
		}
	}
	if neg {
		return nil, uniq, nil
	}
	return uniq, nil, nil
}

// UUIDLike is oslo_utils.uuidutils.is_uuid_like: 32 hex digits once "urn:"
// and "uuid:", surrounding braces and all hyphens are removed.
func UUIDLike(s string) bool {
	_, ok := CanonicalUUID(s)
	return ok
}

// CanonicalUUID is the form Placement stores and compares a uuid in,
// str(uuid.UUID(s)): lowercase, dashed 8-4-4-4-12, for any s UUIDLike
// accepts (upper case, no dashes, braces, a urn:uuid: prefix); ok is false
// for anything else.
func CanonicalUUID(s string) (canonical string, ok bool) {
	s = strings.ReplaceAll(s, "urn:", "")
	s = strings.ReplaceAll(s, "uuid:", "")
	s = strings.Trim(s, "{}")
	s = strings.ReplaceAll(s, "-", "")
	if len(s) != 32 {
		return "", false
	}
	var b strings.Builder
	b.Grow(36)
	for i := 0; i < len(s); i++ {
		if _, ok := unhex(s[i]); !ok {
			return "", false
		}
		if i == 8 || i == 12 || i == 16 || i == 20 {
			b.WriteByte('-')
		}
		c := s[i]
		if 'A' <= c && c <= 'F' {
			c += 'a' - 'A'
		}
		b.WriteByte(c)
	}
	return b.String(), true
}

// pyNum is the result of Python's int(str): magnitude v, or overflow when
// it does not fit in a uint64.
type pyNum struct {
	v        uint64
	neg      bool
	overflow bool
	digits   string // normalised digits, for messages about huge values
}

func (n pyNum) decimal() string {
	s := strings.TrimLeft(n.digits, "0")
	if s == "" {
		return "0"
	}
	if n.neg {
		return "-" + s
	}
	return s
}

// pyInt parses like Python's int(s): surrounding whitespace, a sign,
// underscores between digits and any Unicode decimal digits are accepted.
func pyInt(s string) (pyNum, bool) {
	s = pyStrip(s)
	var n pyNum
	if s != "" && (s[0] == '+' || s[0] == '-') {
		n.neg = s[0] == '-'
		s = s[1:]
	}
	if s == "" {
		return n, false
	}
	var digits strings.Builder
	prevUnderscore := true // no leading underscore
	for _, r := range s {
		if r == '_' {
			if prevUnderscore {
				return n, false
			}
			prevUnderscore = true
			continue
		}
		d, ok := decimalValue(r)
		if !ok {
			return n, false
		}
		prevUnderscore = false
		digits.WriteByte(byte('0' + d))
		if !n.overflow {
			if n.v > (math.MaxUint64-uint64(d))/10 {
				n.overflow = true
			} else {
				n.v = n.v*10 + uint64(d)
			}
		}
	}
	if prevUnderscore {
		return n, false
	}
	n.digits = digits.String()
	if n.v == 0 && !n.overflow {
		n.neg = false
	}
	return n, true
}

// PyInt parses s as Python's int(s) does (for Nova's reading of flavor
// extra specs); ok is false for what int() rejects and for values outside
// int64.
func PyInt(s string) (int64, bool) {
	n, ok := pyInt(s)
	if !ok || n.overflow || n.v > math.MaxInt64 {
		return 0, false
	}
	if n.neg {
		return -int64(n.v), true
	}
	return int64(n.v), true
}

// decimalValue gives the value of a Unicode decimal digit (category Nd);
// Nd ranges are runs of complete 0–9 sequences.
func decimalValue(r rune) (int, bool) {
	if '0' <= r && r <= '9' {
		return int(r - '0'), true
	}
	if r < 0x80 || !unicode.Is(unicode.Nd, r) {
		return 0, false
	}
	for _, rg := range unicode.Nd.R16 {
		if rune(rg.Lo) <= r && r <= rune(rg.Hi) {
			return int(r-rune(rg.Lo)) % 10, true
		}
	}
	for _, rg := range unicode.Nd.R32 {
		if rune(rg.Lo) <= r && r <= rune(rg.Hi) {
			return int(r-rune(rg.Lo)) % 10, true
		}
	}
	return 0, false
}

// pyIsSpace is Python's str.isspace for one character, which unlike
// unicode.IsSpace includes the information separators U+001C–U+001F.
func pyIsSpace(r rune) bool {
	switch {
	case r == ' ' || '\t' <= r && r <= '\r' || 0x1c <= r && r <= 0x1f:
		return true
	case r == 0x85 || r == 0xa0 || r == 0x1680 || 0x2000 <= r && r <= 0x200a,
		r == 0x2028 || r == 0x2029 || r == 0x202f || r == 0x205f || r == 0x3000:
		return true
	}
	return false
}

func pyStrip(s string) string { return strings.TrimFunc(s, pyIsSpace) }

// pyList is repr() of a Python list of str.
func pyList(items []string) string {
	quoted := make([]string, len(items))
	for i, s := range items {
		quoted[i] = pyjson.Repr(s)
	}
	return "[" + strings.Join(quoted, ", ") + "]"
}

// pprint.pformat(width=72) of the query dict and of single strings, as they
// appear in jsonschema's error text.
const pformatWidth = 72

func runeLen(s string) int { return utf8.RuneCountInString(s) }

func pformatDict(d map[string]string) string {
	keys := make([]string, 0, len(d))
	for k := range d {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = pyjson.Repr(k) + ": " + pyjson.Repr(d[k])
	}
	flat := "{" + strings.Join(parts, ", ") + "}"
	if runeLen(flat) <= pformatWidth {
		return flat
	}
	var b strings.Builder
	b.WriteByte('{')
	const indent = 1
	for i, k := range keys {
		kr := pyjson.Repr(k)
		b.WriteString(kr)
		b.WriteString(": ")
		// One character is kept free for the ',' or the closing '}'.
		b.WriteString(pformatValue(d[k], indent+runeLen(kr)+2, 1, false))
		if i < len(keys)-1 {
			b.WriteString(",\n" + strings.Repeat(" ", indent))
		}
	}
	b.WriteByte('}')
	return b.String()
}

func pformatString(s string) string { return pformatValue(s, 0, 0, true) }

// pformatValue is PrettyPrinter._format + _pprint_str for a str at the given
// indent; top-level strings get parentheses when split.
func pformatValue(s string, indent, allowance int, top bool) string {
	rep := pyjson.Repr(s)
	if runeLen(rep) <= pformatWidth-indent-allowance || s == "" {
		return rep
	}
	if top {
		indent++
		allowance++
	}
	maxWidth := pformatWidth - indent
	maxWidth1 := maxWidth
	lines := pySplitLinesKeepEnds(s)
	var chunks []string
	for i, line := range lines {
		lrep := pyjson.Repr(line)
		last := i == len(lines)-1
		if last {
			maxWidth1 -= allowance
		}
		if runeLen(lrep) <= maxWidth1 {
			chunks = append(chunks, lrep)
			continue
		}
		parts := pyWordParts(line)
		maxWidth2 := maxWidth
		current := ""
		for j, part := range parts {
			candidate := current + part
			if j == len(parts)-1 && last {
				maxWidth2 -= allowance
			}
			if runeLen(pyjson.Repr(candidate)) > maxWidth2 {
				if current != "" {
					chunks = append(chunks, pyjson.Repr(current))
				}
				current = part
			} else {
				current = candidate
			}
		}
		if current != "" {
			chunks = append(chunks, pyjson.Repr(current))
		}
	}
	if len(chunks) == 1 {
		return chunks[0]
	}
	out := strings.Join(chunks, "\n"+strings.Repeat(" ", indent))
	if top {
		out = "(" + out + ")"
	}
	return out
}

// pySplitLinesKeepEnds is str.splitlines(True).
func pySplitLinesKeepEnds(s string) []string {
	var lines []string
	start := 0
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		switch rs[i] {
		case '\n', '\v', '\f', 0x1c, 0x1d, 0x1e, 0x85, 0x2028, 0x2029:
		case '\r':
			if i+1 < len(rs) && rs[i+1] == '\n' {
				i++
			}
		default:
			continue
		}
		lines = append(lines, string(rs[start:i+1]))
		start = i + 1
	}
	if start < len(rs) {
		lines = append(lines, string(rs[start:]))
	}
	return lines
}

// pyWordParts is re.findall(r'\S*\s*', line) without the final empty match.
func pyWordParts(line string) []string {
	var parts []string
	rs := []rune(line)
	for i := 0; i < len(rs); {
		j := i
		for j < len(rs) && !pyIsSpace(rs[j]) {
			j++
		}
		for j < len(rs) && pyIsSpace(rs[j]) {
			j++
		}
		parts = append(parts, string(rs[i:j]))
		i = j
	}
	return parts
}

// schemaPformat is pprint.pformat(schema, width=72) of GET_SCHEMA_1_xx (a
// switch, not a map: nothing is built at init).
func schemaPformat(xx Microversion) string {
	switch xx {
	case 10:
		return "{'additionalProperties': False,\n 'properties': {'resources': {'type': 'string'}},\n 'required': ['resources'],\n 'type': 'object'}"
	case 16:
		return "{'additionalProperties': False,\n 'properties': {" + limitProp + ",\n                'resources': {'type': 'string'}},\n 'required': ['resources'],\n 'type': 'object'}"
	case 17:
		return "{'additionalProperties': False,\n 'properties': {" + limitProp + ",\n                'required': {'type': ['string']},\n                'resources': {'type': 'string'}},\n 'required': ['resources'],\n 'type': 'object'}"
	case 21:
		return "{'additionalProperties': False,\n 'properties': {" + limitProp + ",\n                'member_of': {'type': ['string']},\n                'required': {'type': ['string']},\n                'resources': {'type': 'string'}},\n 'required': ['resources'],\n 'type': 'object'}"
	case 25:
		return "{'additionalProperties': False,\n 'patternProperties': {'^member_of([1-9][0-9]*)?$': {'type': 'string'},\n                       '^required([1-9][0-9]*)?$': {'type': 'string'},\n                       '^resources([1-9][0-9]*)?$': {'type': 'string'}},\n" + props125 + "},\n 'type': 'object'}"
	case 31:
		return "{'additionalProperties': False,\n 'patternProperties': {'^in_tree([1-9][0-9]*)?$': {'type': 'string'},\n                       '^member_of([1-9][0-9]*)?$': {'type': 'string'},\n                       '^required([1-9][0-9]*)?$': {'type': 'string'},\n                       '^resources([1-9][0-9]*)?$': {'type': 'string'}},\n" + props125 + "},\n 'type': 'object'}"
	case 33:
		return patterns133 + props125 + "},\n 'type': 'object'}"
	case 35:
		return patterns133 + props125 + ",\n                'root_required': {'type': ['string']}},\n 'type': 'object'}"
	case 36:
		return patterns133 + props125 + ",\n                'root_required': {'type': ['string']},\n                'same_subtree': {'type': ['string']}},\n 'type': 'object'}"
	}
	return ""
}

const (
	limitProp   = "'limit': {'minLength': 1,\n                          'minimum': 1,\n                          'pattern': '^[1-9][0-9]*$',\n                          'type': ['integer', 'string']}"
	props125    = " 'properties': {'group_policy': {'enum': ['none', 'isolate'],\n                                 'type': 'string'},\n                " + limitProp
	patterns133 = "{'additionalProperties': False,\n 'patternProperties': {'^in_tree([a-zA-Z0-9_-]{1,64})?$': {'type': 'string'},\n                       '^member_of([a-zA-Z0-9_-]{1,64})?$': {'type': 'string'},\n                       '^required([a-zA-Z0-9_-]{1,64})?$': {'type': 'string'},\n                       '^resources([a-zA-Z0-9_-]{1,64})?$': {'type': 'string'}},\n"

	limitSchemaPformat       = "{'minLength': 1,\n 'minimum': 1,\n 'pattern': '^[1-9][0-9]*$',\n 'type': ['integer', 'string']}"
	groupPolicySchemaPformat = "{'enum': ['none', 'isolate'], 'type': 'string'}"
)
