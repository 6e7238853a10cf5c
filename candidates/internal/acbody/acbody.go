// Package acbody is what the tests of package candidates and its
// differential test count as the same GET /allocation_candidates answer, so
// that the golden comparison and the differential one apply one rule. It
// also pins answers to recorded fingerprints. Only tests import it.
package acbody

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// Body is a response body, its parts left raw for Canon and Summaries.
type Body struct {
	AllocationRequests []json.RawMessage          `json:"allocation_requests"`
	ProviderSummaries  map[string]json.RawMessage `json:"provider_summaries"`
}

// Canon turns one allocation request into a comparable string: list-form
// allocations sorted by provider, mapping lists sorted (both are Python sets
// or dicts in Placement, so their order means nothing).
func Canon(raw json.RawMessage) (string, error) {
	var v map[string]any
	if err := json.Unmarshal(raw, &v); err != nil {
		return "", err
	}
	if l, ok := v["allocations"].([]any); ok {
		sort.Slice(l, func(i, j int) bool {
			return fmt.Sprint(l[i].(map[string]any)["resource_provider"]) < fmt.Sprint(l[j].(map[string]any)["resource_provider"])
		})
	}
	if mp, ok := v["mappings"].(map[string]any); ok {
		for k, l := range mp {
			s := l.([]any)
			sort.Slice(s, func(i, j int) bool { return s[i].(string) < s[j].(string) })
			mp[k] = s
		}
	}
	b, err := json.Marshal(v)
	return string(b), err
}

// Summaries decodes provider summaries with their trait lists sorted (a set
// in Placement). An entry that does not decode is kept as nil and the first
// such error returned.
func Summaries(in map[string]json.RawMessage) (map[string]any, error) {
	out := map[string]any{}
	var first error
	for k, raw := range in {
		var v map[string]any
		if err := json.Unmarshal(raw, &v); err != nil && first == nil {
			first = err
		}
		if tr, ok := v["traits"].([]any); ok {
			sort.Slice(tr, func(i, j int) bool { return tr[i].(string) < tr[j].(string) })
		}
		out[k] = v
	}
	return out, first
}

// Dump lists a multiset of canonical requests for a failure message, sorted,
// at most most lines of them (0: all).
func Dump(m map[string]int, most int) string {
	var ks []string
	for k, n := range m {
		ks = append(ks, fmt.Sprintf("  %dx %s", n, k))
	}
	sort.Strings(ks)
	if most > 0 && len(ks) > most {
		ks = append(ks[:most], fmt.Sprintf("  ... %d more", len(ks)-most))
	}
	return strings.Join(ks, "\n")
}

// CheckFingerprints compares lines with the file at path, or with
// RPCTL_WRITE_FINGERPRINTS=1 (after an intended change) rewrites the file.
func CheckFingerprints(t testing.TB, path string, lines []string) {
	t.Helper()
	got := strings.Join(lines, "\n") + "\n"
	if os.Getenv("RPCTL_WRITE_FINGERPRINTS") != "" {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (RPCTL_WRITE_FINGERPRINTS=1 records it)", err)
	}
	if string(want) != got {
		t.Fatalf("answers changed:\nwant\n%s\ngot\n%s", want, got)
	}
}
