package difftest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/candidates"
	"github.com/rpctl/rpctl/candidates/internal/oracle"
)

// searchAnswer is the search's unlimited answer in oracle.Canon form, or
// oracle.ErrBadRequest when it rejects the request as Placement would.
func searchAnswer(m *candidates.Model, req *candidates.Request) ([]string, error) {
	full := *req
	full.Limit = 0
	res, err := m.Search(context.Background(), &full, candidates.Options{})
	if err != nil {
		var ae *candidates.APIError
		if errors.As(err, &ae) && ae.Status == 400 {
			return nil, oracle.ErrBadRequest
		}
		return nil, err
	}
	out := make([]string, len(res.Candidates))
	for i, c := range res.Candidates {
		v := res.View(i)
		parts := make([]string, len(v.Parts))
		for k, p := range v.Parts {
			parts[k] = fmt.Sprintf("%s:%s=%d", p.ProviderUUID, p.ResourceClass, p.Amount)
		}
		maps := map[string][]string{}
		for _, mp := range c.Mappings {
			for _, p := range mp.Providers {
				maps[mp.Suffix] = append(maps[mp.Suffix], m.Provider(p).UUID)
			}
		}
		out[i] = oracle.Canon(parts, maps)
	}
	slices.Sort(out)
	return out, nil
}

// agreeWithOracle compares the search with the brute-force oracle on one
// request; nil when they give the same set of requests (or both reject).
func agreeWithOracle(in *candidates.ModelInput, m *candidates.Model, req *candidates.Request) error {
	want, werr := oracle.Candidates(in, req)
	got, gerr := searchAnswer(m, req)
	if werr != nil || gerr != nil {
		if errors.Is(werr, oracle.ErrBadRequest) && errors.Is(gerr, oracle.ErrBadRequest) {
			return nil
		}
		return fmt.Errorf("search error %v, oracle error %v", gerr, werr)
	}
	if slices.Equal(got, want) {
		return nil
	}
	var extra, missing []string
	for _, k := range got {
		if _, ok := slices.BinarySearch(want, k); !ok {
			extra = append(extra, k)
		}
	}
	for _, k := range want {
		if _, ok := slices.BinarySearch(got, k); !ok {
			missing = append(missing, k)
		}
	}
	if len(extra) == 0 && len(missing) == 0 {
		return fmt.Errorf("the search returns duplicates: %d requests, %d distinct", len(got), len(want))
	}
	return fmt.Errorf("search has %d the oracle lacks, e.g. %.300s\noracle has %d the search lacks, e.g. %.300s",
		len(extra), strings.Join(extra, "\n  "), len(missing), strings.Join(missing, "\n  "))
}

// TestSearchMatchesOracle compares the search with the oracle on every
// query the parser accepts, over random clouds of the differential test's
// generator (RPCTL_ORACLE_SEEDS clouds, 200 by default; 150 queries each,
// microversions 1.10..1.39), with the ratios as a MariaDB database hands
// them over.
func TestSearchMatchesOracle(t *testing.T) {
	n := 200
	if s := os.Getenv("RPCTL_ORACLE_SEEDS"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil {
			t.Fatalf("RPCTL_ORACLE_SEEDS: %v", err)
		}
	}
	checked, answered, floatEdge, fails := 0, 0, 0, 0
	forEachQuery(t, n, 150, func(qc queryCase) {
		checked++
		if qc.floatEdge {
			floatEdge++
		}
		if err := agreeWithOracle(qc.in, qc.m, qc.req); err != nil {
			fails++
			if fails <= 5 {
				t.Errorf("seed %d, 1.%d: %s\n%v", qc.seed, qc.req.Microversion, qc.q, err)
			}
			return
		}
		if got, _ := searchAnswer(qc.m, qc.req); len(got) > 0 {
			answered++
		}
	})
	if fails > 5 {
		t.Errorf("... %d disagreements in all", fails)
	}
	t.Logf("%d clouds: the search agrees with the oracle on %d of %d accepted queries (%d with candidates, %d at a FLOAT boundary)", n, checked-fails, checked, answered, floatEdge)
}
