package candidates

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/big"
	"os"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// goldenCase is one answer of the real Placement 8.0.0, recorded by
// scripts/placement_ref.py --golden from testdata/parse_cases.jsonl.
type goldenCase struct {
	Query        string `json:"query"`
	Microversion string `json:"microversion"`
	// Unordered marks messages that list a Python set, whose order is
	// Placement's hash order.
	Unordered bool            `json:"unordered"`
	Status    int             `json:"status"`
	RawBody   string          `json:"raw_body"`
	Body      json.RawMessage `json:"body"`
	// Parsed is what placement.lib built, present when the query got past
	// parsing (success, or an error only the database raises).
	Parsed *goldenParsed `json:"parsed"`
}

type goldenParsed struct {
	Limit         json.Number   `json:"limit"`
	GroupPolicy   *string       `json:"group_policy"`
	RootRequired  []string      `json:"root_required"`
	RootForbidden []string      `json:"root_forbidden"`
	SameSubtree   [][]string    `json:"same_subtree"`
	Groups        []goldenGroup `json:"groups"`
}

type goldenGroup struct {
	Suffix          string                 `json:"suffix"`
	UseSameProvider bool                   `json:"use_same_provider"`
	Resources       map[string]json.Number `json:"resources"`
	RequiredTraits  [][]string             `json:"required_traits"`
	ForbiddenTraits []string               `json:"forbidden_traits"`
	MemberOf        [][]string             `json:"member_of"`
	ForbiddenAggs   []string               `json:"forbidden_aggs"`
	InTree          *string                `json:"in_tree"`
}

func loadGolden(t *testing.T) []goldenCase {
	t.Helper()
	data, err := os.ReadFile("testdata/parse_golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []goldenCase
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&cases); err != nil {
		t.Fatal(err)
	}
	return cases
}

var requestIDRE = regexp.MustCompile(`"request_id": "([^"]*)"`)

func TestParseGolden(t *testing.T) {
	cases := loadGolden(t)
	if len(cases) < 150 {
		t.Fatalf("only %d golden cases", len(cases))
	}
	for _, c := range cases {
		t.Run(c.Microversion+"?"+c.Query, func(t *testing.T) {
			mv, err := ParseMicroversion(c.Microversion)
			if err != nil {
				t.Fatalf("ParseMicroversion: %v", err)
			}
			req, err := ParseQuery(c.Query, mv)
			switch {
			case c.Parsed != nil && strings.Contains(c.RawBody, "too large to convert to SQLite"):
				// Placement fails only when the amount reaches SQLite; we
				// refuse it while parsing, with the same answer.
				checkError(t, c, mv, err)
			case c.Parsed != nil:
				if err != nil {
					t.Fatalf("got error %v, Placement parsed it", err)
				}
				checkParsed(t, c.Parsed, req)
			default:
				checkError(t, c, mv, err)
			}
		})
	}
}

func checkError(t *testing.T, c goldenCase, mv Microversion, err error) {
	t.Helper()
	var apiErr *APIError
	if !errors.As(err, &apiErr) {
		t.Fatalf("got %v, want Placement's %d: %s", err, c.Status, c.RawBody)
	}
	if apiErr.Status != c.Status {
		t.Errorf("status %d, want %d", apiErr.Status, c.Status)
	}
	id := ""
	if m := requestIDRE.FindStringSubmatch(c.RawBody); m != nil {
		id = m[1]
	}
	got, want := string(apiErr.Body(mv, id)), c.RawBody
	if c.Unordered {
		got, want = sortLists(got), sortLists(want)
	}
	if got != want {
		t.Errorf("body\n got %s\nwant %s", got, want)
	}
}

var listRE = regexp.MustCompile(`[A-Za-z0-9_']+(?:, [A-Za-z0-9_']+)+`)

// sortLists puts the elements of every comma-separated list in order, to
// compare messages that print a Python set.
func sortLists(s string) string {
	return listRE.ReplaceAllStringFunc(s, func(l string) string {
		parts := strings.Split(l, ", ")
		sort.Strings(parts)
		return strings.Join(parts, ", ")
	})
}

func checkParsed(t *testing.T, want *goldenParsed, got *Request) {
	t.Helper()
	wantLimit, ok := new(big.Int).SetString(want.Limit.String(), 10)
	if !ok {
		t.Fatalf("bad golden limit %q", want.Limit)
	}
	if !wantLimit.IsInt64() || wantLimit.Int64() > int64(^uint(0)>>1) {
		wantLimit.SetInt64(0) // beyond any result count: no limit
	}
	if int64(got.Limit) != wantLimit.Int64() {
		t.Errorf("Limit %d, want %s", got.Limit, want.Limit)
	}
	wantPolicy := ""
	if want.GroupPolicy != nil {
		wantPolicy = *want.GroupPolicy
		if wantPolicy != "" && wantPolicy != "isolate" {
			wantPolicy = "none"
		}
	}
	if got.GroupPolicy != wantPolicy {
		t.Errorf("GroupPolicy %q, want %q", got.GroupPolicy, wantPolicy)
	}
	eqSet(t, "RootRequired", got.RootRequired, want.RootRequired)
	eqSet(t, "RootForbidden", got.RootForbidden, want.RootForbidden)
	eqSets(t, "SameSubtree", got.SameSubtree, want.SameSubtree)
	if len(got.Groups) != len(want.Groups) {
		t.Fatalf("%d groups %+v, want %d %+v", len(got.Groups), got.Groups, len(want.Groups), want.Groups)
	}
	for i, wg := range want.Groups {
		g := got.Groups[i]
		if g.Suffix != wg.Suffix {
			t.Errorf("group %d suffix %q, want %q", i, g.Suffix, wg.Suffix)
			continue
		}
		if g.UseSameProvider() != wg.UseSameProvider {
			t.Errorf("group %q UseSameProvider %v", g.Suffix, g.UseSameProvider())
		}
		gotRes := map[string]json.Number{}
		for rc, n := range g.Resources {
			gotRes[rc] = json.Number(strconv.FormatInt(n, 10))
		}
		if len(g.Resources)+len(wg.Resources) > 0 && !reflect.DeepEqual(gotRes, wg.Resources) {
			t.Errorf("group %q resources %v, want %v", g.Suffix, g.Resources, wg.Resources)
		}
		eqSets(t, "group "+g.Suffix+" RequiredTraits", g.RequiredTraits, wg.RequiredTraits)
		eqSet(t, "group "+g.Suffix+" ForbiddenTraits", g.ForbiddenTraits, wg.ForbiddenTraits)
		eqSets(t, "group "+g.Suffix+" MemberOf", g.MemberOf, wg.MemberOf)
		eqSet(t, "group "+g.Suffix+" ForbiddenAggs", g.ForbiddenAggs, wg.ForbiddenAggs)
		wantTree := ""
		if wg.InTree != nil {
			wantTree = *wg.InTree
		}
		if g.InTree != wantTree {
			t.Errorf("group %q InTree %q, want %q", g.Suffix, g.InTree, wantTree)
		}
	}
}

// eqSet compares a Go slice standing for a Python set with its sorted dump;
// the slice must not repeat an element.
func eqSet(t *testing.T, what string, got, want []string) {
	t.Helper()
	s := slices.Clone(got)
	sort.Strings(s)
	if len(s) != len(slices.Compact(slices.Clone(s))) {
		t.Errorf("%s has duplicates: %q", what, got)
	}
	if len(s)+len(want) > 0 && !reflect.DeepEqual(s, want) {
		t.Errorf("%s %q, want %q", what, got, want)
	}
}

// eqSets compares a list of sets, order of the list kept.
func eqSets(t *testing.T, what string, got, want [][]string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s %q, want %q", what, got, want)
		return
	}
	for i := range got {
		eqSet(t, what, got[i], want[i])
	}
}

func TestParseMicroversion(t *testing.T) {
	for _, c := range []struct {
		in     string
		want   Microversion
		status int
	}{
		{"1.39", 39, 0}, {"latest", 39, 0}, {"1.10", 10, 0}, {"1.0", 0, 0}, {"1.9", 9, 0},
		{"1.40", 0, 406}, {"2.0", 0, 406}, {"1.x", 0, 400}, {"", 0, 400}, {"1", 0, 400},
		{"1.-1", 0, 400}, {" 1.39", 0, 400}, {"Latest", 0, 400},
	} {
		got, err := ParseMicroversion(c.in)
		if c.status == 0 {
			if err != nil || got != c.want {
				t.Errorf("ParseMicroversion(%q) = %d, %v; want %d", c.in, got, err, c.want)
			}
			continue
		}
		var apiErr *APIError
		if !errors.As(err, &apiErr) || apiErr.Status != c.status {
			t.Errorf("ParseMicroversion(%q) = %d, %v; want status %d", c.in, got, err, c.status)
		}
	}
	// Placement's own wording for an unserved version.
	_, err := ParseMicroversion("1.40")
	if err.Error() != "Invalid microversion: Unacceptable version header: 1.40" {
		t.Errorf("message %q", err.Error())
	}
}

// Codes that the golden bodies below 1.23 cannot show.
func TestParseErrorCodes(t *testing.T) {
	for _, c := range []struct {
		query string
		mv    Microversion
		code  string
	}{
		{"resources=VCPU:1&root_required=A&root_required=B", 35, CodeDuplicateKey},
		{"resources=VCPU:1&root_required=A,!A", 35, CodeBadValue},
		{"resources=VCPU:1&same_subtree=", 36, CodeBadValue},
		{"required=A", 36, CodeMissingValue},
		{"resources=", 10, DefaultErrorCode},
		{"foo=1", 10, DefaultErrorCode},
	} {
		_, err := ParseQuery(c.query, c.mv)
		var apiErr *APIError
		if !errors.As(err, &apiErr) || apiErr.Code != c.code {
			t.Errorf("ParseQuery(%q, %d) = %v, want code %s", c.query, c.mv, err, c.code)
		}
	}
}

func TestParseGroupOrder(t *testing.T) {
	req, err := ParseQuery("required_b=X&resources_a=VCPU:1&resources=DISK_GB:1&resources_b=VCPU:1&group_policy=none&required_a=Y", 39)
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, g := range req.Groups {
		order = append(order, g.Suffix)
	}
	if want := []string{"_b", "_a", ""}; !reflect.DeepEqual(order, want) {
		t.Errorf("group order %q, want %q", order, want)
	}
}

func TestAPIErrorBody(t *testing.T) {
	e := &APIError{Status: 400, Code: CodeBadValue, Message: "bad <b>thing</b>\nhere é \U0001F600 \x7f"}
	want := `{"errors": [{"status": 400, "title": "Bad Request", "detail": "The server could not comply with the request since it is either malformed or otherwise incorrect.\n\n bad thing here \u00e9 \ud83d\ude00 \u007f  ", "code": "placement.query.bad_value", "request_id": "req-1"}]}`
	if got := string(e.Body(23, "req-1")); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	want = `{"errors": [{"status": 400, "title": "Bad Request", "detail": "The server could not comply with the request since it is either malformed or otherwise incorrect.\n\n bad thing here \u00e9 \ud83d\ude00 \u007f  "}]}`
	if got := string(e.Body(22, "")); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestAPIErrorBody406(t *testing.T) {
	// Recorded from Placement 8.0.0 for OpenStack-API-Version: placement 1.40.
	want := `{"errors": [{"status": 406, "title": "Not Acceptable", "detail": "The resource could not be generated that was acceptable to your browser (content of type application/json. \n\n Invalid microversion: Unacceptable version header: 1.40", "request_id": "req-05cb3275-472d-4e55-9280-97b07f810276", "max_version": "1.39", "min_version": "1.0"}]}`
	_, err := ParseMicroversion("1.40")
	var apiErr *APIError
	if !errors.As(err, &apiErr) {
		t.Fatal(err)
	}
	if got := string(apiErr.Body(0, "req-05cb3275-472d-4e55-9280-97b07f810276")); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// TestCanonicalUUID: every spelling Placement accepts (oslo's
// is_uuid_like) becomes str(uuid.UUID(s)), the form it stores.
func TestCanonicalUUID(t *testing.T) {
	const want = "aaaaaaaa-0000-4000-8000-00000000abce"
	for _, tc := range []struct {
		in string
		ok bool
	}{
		{want, true},
		{"aaaaaaaa00004000800000000000abce", true},
		{"AAAAAAAA-0000-4000-8000-00000000ABCE", true},
		{"{aaaaaaaa-0000-4000-8000-00000000abce}", true},
		{"urn:uuid:aaaaaaaa-0000-4000-8000-00000000abce", true},
		{"aaaa-aaaa0000-4000-8000-00000000abce", true}, // dashes anywhere, as Python's
		{"aaaaaaaa-0000-4000-8000-00000000abc", false},
		{"aaaaaaaa-0000-4000-8000-00000000abcg", false},
		{" aaaaaaaa00004000800000000000abce", false},
		{"", false},
	} {
		got, ok := CanonicalUUID(tc.in)
		if ok != tc.ok || ok && got != want {
			t.Errorf("CanonicalUUID(%q) = %q, %v; want %v", tc.in, got, ok, tc.ok)
		}
	}
}
