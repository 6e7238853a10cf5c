// Package candcompare compares two GET /allocation_candidates answers (the
// live Placement API's and the built-in core's) by meaning: allocation
// requests as a multiset, provider summaries per provider, trait lists and
// mappings as sets (Placement builds them from Python sets and dicts), and
// error answers by status, code and message.
package candcompare

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Answer is one side's HTTP status and body.
type Answer struct {
	Status int
	Body   []byte
}

// Diff returns one line per difference between Placement's answer and
// rpctl's; none means they agree.
func Diff(placement, rpctl Answer) ([]string, error) {
	if placement.Status != rpctl.Status {
		return []string{fmt.Sprintf("status: Placement %d, rpctl %d: Placement said %s; rpctl said %s",
			placement.Status, rpctl.Status, brief(placement), brief(rpctl))}, nil
	}
	if placement.Status != 200 {
		p, err := errorOf(placement.Body)
		if err != nil {
			return nil, fmt.Errorf("error body from Placement: %w", err)
		}
		r, err := errorOf(rpctl.Body)
		if err != nil {
			return nil, fmt.Errorf("rpctl's error body: %w", err)
		}
		if p != r {
			return []string{fmt.Sprintf("error: Placement %q, rpctl %q", p, r)}, nil
		}
		return nil, nil
	}
	p, err := parse(placement.Body)
	if err != nil {
		return nil, fmt.Errorf("body from Placement: %w", err)
	}
	r, err := parse(rpctl.Body)
	if err != nil {
		return nil, fmt.Errorf("rpctl's body: %w", err)
	}
	var out []string
	for _, k := range sortedKeys(p.requests, r.requests) {
		if d := p.requests[k] - r.requests[k]; d > 0 {
			out = append(out, fmt.Sprintf("allocation request only from Placement (%dx): %s", d, k))
		} else if d < 0 {
			out = append(out, fmt.Sprintf("allocation request only from rpctl (%dx): %s", -d, k))
		}
	}
	for _, k := range sortedKeys(p.summaries, r.summaries) {
		ps, pok := p.summaries[k]
		rs, rok := r.summaries[k]
		switch {
		case !rok:
			out = append(out, fmt.Sprintf("provider summary only from Placement: %s %s", k, ps))
		case !pok:
			out = append(out, fmt.Sprintf("provider summary only from rpctl: %s %s", k, rs))
		case ps != rs:
			out = append(out, fmt.Sprintf("provider summary of %s: Placement %s, rpctl %s", k, ps, rs))
		}
	}
	return out, nil
}

// Count is the number of allocation requests in a 200 body.
func Count(body []byte) int {
	var b struct {
		AllocationRequests []json.RawMessage `json:"allocation_requests"`
	}
	json.Unmarshal(body, &b)
	return len(b.AllocationRequests)
}

type canon struct {
	requests  map[string]int
	summaries map[string]string
}

func parse(body []byte) (*canon, error) {
	var b struct {
		AllocationRequests []map[string]any          `json:"allocation_requests"`
		ProviderSummaries  map[string]map[string]any `json:"provider_summaries"`
	}
	if err := json.Unmarshal(body, &b); err != nil {
		return nil, err
	}
	c := &canon{requests: map[string]int{}, summaries: map[string]string{}}
	for _, ar := range b.AllocationRequests {
		// Before 1.12 allocations are a list of {resource_provider, resources}.
		if l, ok := ar["allocations"].([]any); ok {
			sort.Slice(l, func(i, j int) bool { return fmt.Sprint(l[i]) < fmt.Sprint(l[j]) })
		}
		if m, ok := ar["mappings"].(map[string]any); ok {
			for _, v := range m {
				sortAny(v)
			}
		}
		s, err := json.Marshal(ar)
		if err != nil {
			return nil, err
		}
		c.requests[string(s)]++
	}
	for uuid, s := range b.ProviderSummaries {
		sortAny(s["traits"])
		j, err := json.Marshal(s)
		if err != nil {
			return nil, err
		}
		c.summaries[uuid] = string(j)
	}
	return c, nil
}

func sortAny(v any) {
	if l, ok := v.([]any); ok {
		sort.Slice(l, func(i, j int) bool { return fmt.Sprint(l[i]) < fmt.Sprint(l[j]) })
	}
}

func errorOf(body []byte) (string, error) {
	var e struct {
		Errors []struct {
			Status int    `json:"status"`
			Code   string `json:"code"`
			Detail string `json:"detail"`
		} `json:"errors"`
	}
	if err := json.Unmarshal(body, &e); err != nil {
		return "", err
	}
	if len(e.Errors) == 0 {
		return "", fmt.Errorf("no errors in %.200s", body)
	}
	x := e.Errors[0]
	return fmt.Sprintf("%d %s: %s", x.Status, x.Code, strings.TrimSpace(x.Detail)), nil
}

func brief(a Answer) string {
	if a.Status == 200 {
		return fmt.Sprintf("%d allocation requests", Count(a.Body))
	}
	if s, err := errorOf(a.Body); err == nil {
		return strings.ReplaceAll(s, "\n", " ")
	}
	return fmt.Sprintf("%.200s", a.Body)
}

func sortedKeys[V any](a, b map[string]V) []string {
	var keys []string
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}
