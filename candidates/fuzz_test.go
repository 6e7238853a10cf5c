package candidates

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/internal/fuzzcheck"
)

// FuzzParseQuery: no query string, at any microversion, panics or hangs the
// parser, or the search and explanation of what it accepts. An accepted
// query must mean exactly what it says: every part of the Request is well
// formed, and writing the Request back as a query string and parsing that
// gives the same Request (nothing was half-read or dropped). Rejections
// are Placement error bodies, on one line each. Seeds are the parser's
// golden cases (Placement's own answers in testdata/parse_golden.json).
func FuzzParseQuery(f *testing.F) {
	fh, err := os.Open("testdata/parse_cases.jsonl")
	if err != nil {
		f.Fatal(err)
	}
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		var c struct{ Query, Microversion string }
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			f.Fatal(err)
		}
		mv, err := ParseMicroversion(c.Microversion)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(c.Query, uint8(mv))
	}
	fh.Close()
	m := numaNetworkFixture(true).toModel(f)
	f.Fuzz(func(t *testing.T, q string, minor uint8) {
		mv := Microversion(minor)
		var req *Request
		fuzzcheck.Within(t, func() { req, err = ParseQuery(q, mv) })
		if err != nil {
			var ae *APIError
			if !errors.As(err, &ae) || ae.Status < 400 {
				t.Fatalf("rejected with %T %v, not a Placement error", err, err)
			}
			if !json.Valid(ae.Body(mv, "req-fuzz")) {
				t.Fatalf("error body is not JSON: %s", ae.Body(mv, "req-fuzz"))
			}
			return
		}
		checkWellFormed(t, req)
		again := encodeRequest(req)
		req2, err := ParseQuery(again, mv)
		if err != nil {
			t.Fatalf("accepted as %+v, but that request written back (%s) is rejected: %v", req, again, err)
		}
		if a, b := normalized(req), normalized(req2); !reflect.DeepEqual(a, b) {
			t.Fatalf("accepted as\n  %+v\nbut written back (%s) it reads\n  %+v", a, again, b)
		}
		fuzzcheck.Within(t, func() {
			if _, err := m.Search(context.Background(), req, Options{}); err != nil {
				var ae *APIError
				if !errors.As(err, &ae) {
					t.Errorf("search: %v", err)
				}
			}
			m.explainAll(req)
		})
	})
}

func checkWellFormed(t *testing.T, req *Request) {
	t.Helper()
	if req.Microversion < MinMicroversion || req.Microversion > MaxMicroversion {
		t.Fatalf("accepted at 1.%d", req.Microversion)
	}
	if !slices.Contains([]string{"", "none", "isolate"}, req.GroupPolicy) {
		t.Fatalf("group_policy %q", req.GroupPolicy)
	}
	seen := map[string]bool{}
	for _, g := range req.Groups {
		if seen[g.Suffix] || g.Suffix != "" && !validSuffix(g.Suffix, req.Microversion) {
			t.Fatalf("group suffix %q", g.Suffix)
		}
		seen[g.Suffix] = true
		if len(g.Resources) == 0 && (g.Suffix == "" || req.Microversion < 36) {
			t.Fatalf("group %q without resources at 1.%d", g.Suffix, req.Microversion)
		}
		for rc, n := range g.Resources {
			if n < 1 || strings.ContainsAny(rc, ",:") {
				t.Fatalf("resources %q: %d", rc, n)
			}
		}
		for _, set := range g.MemberOf {
			for _, a := range set {
				if !UUIDLike(a) {
					t.Fatalf("member_of %q", a)
				}
			}
		}
		for _, a := range g.ForbiddenAggs {
			if !UUIDLike(a) {
				t.Fatalf("forbidden aggregate %q", a)
			}
		}
		if g.InTree != "" && !UUIDLike(g.InTree) {
			t.Fatalf("in_tree %q", g.InTree)
		}
		for _, set := range g.RequiredTraits {
			for _, tr := range set {
				if tr == "" || strings.HasPrefix(tr, "!") || strings.Contains(tr, ",") {
					t.Fatalf("required trait %q", tr)
				}
			}
		}
	}
}

// encodeRequest writes req as a query string Placement reads back as req.
func encodeRequest(req *Request) string {
	var keys []string
	add := func(k, val string) {
		keys = append(keys, url.QueryEscape(k)+"="+url.QueryEscape(val))
	}
	for _, g := range req.Groups {
		s := g.Suffix
		if len(g.Resources) > 0 {
			var parts []string
			order := g.ResourceOrder
			if order == nil {
				order = slices.Sorted(func(yield func(string) bool) {
					for k := range g.Resources {
						if !yield(k) {
							return
						}
					}
				})
			}
			for _, rc := range order {
				parts = append(parts, fmt.Sprintf("%s:%d", rc, g.Resources[rc]))
			}
			add("resources"+s, strings.Join(parts, ","))
		}
		var plain []string
		var anyOf [][]string
		for _, set := range g.RequiredTraits {
			if len(set) == 1 {
				plain = append(plain, set[0])
			} else {
				anyOf = append(anyOf, set)
			}
		}
		for _, tr := range g.ForbiddenTraits {
			plain = append(plain, "!"+tr)
		}
		// A plain trait named "in:X": Placement reads in: only at the very
		// start of a value, and strips the space.
		if len(plain) > 0 && strings.HasPrefix(plain[0], "in:") {
			plain[0] = " " + plain[0]
		}
		if len(plain) > 0 {
			add("required"+s, strings.Join(plain, ","))
		}
		for _, set := range anyOf {
			add("required"+s, "in:"+strings.Join(set, ","))
		}
		for _, set := range g.MemberOf {
			if len(set) == 1 {
				add("member_of"+s, set[0])
			} else {
				add("member_of"+s, "in:"+strings.Join(set, ","))
			}
		}
		if len(g.ForbiddenAggs) > 0 {
			add("member_of"+s, "!in:"+strings.Join(g.ForbiddenAggs, ","))
		}
		if g.InTree != "" {
			add("in_tree"+s, g.InTree)
		}
	}
	if req.GroupPolicy != "" {
		add("group_policy", req.GroupPolicy)
	}
	if req.Limit > 0 {
		add("limit", fmt.Sprint(req.Limit))
	}
	if len(req.RootRequired)+len(req.RootForbidden) > 0 {
		parts := slices.Clone(req.RootRequired)
		for _, tr := range req.RootForbidden {
			parts = append(parts, "!"+tr)
		}
		add("root_required", strings.Join(parts, ","))
	}
	for _, ss := range req.SameSubtree {
		add("same_subtree", strings.Join(ss, ","))
	}
	return strings.Join(keys, "&")
}

// normalized drops what a query string cannot say twice the same way: a
// limit that is not a positive number (Placement's quirks turn some into
// "no limit" or a negative slice) and the order of the ANDed trait sets.
func normalized(req *Request) Request {
	r := *req
	if r.Limit < 0 {
		r.Limit = 0
	}
	r.Groups = slices.Clone(r.Groups)
	for i := range r.Groups {
		sets := slices.Clone(r.Groups[i].RequiredTraits)
		slices.SortStableFunc(sets, func(a, b []string) int { return strings.Compare(strings.Join(a, ","), strings.Join(b, ",")) })
		r.Groups[i].RequiredTraits = sets
	}
	return r
}
