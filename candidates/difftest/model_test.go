package difftest

import (
	"context"
	"errors"
	"fmt"
	"hash"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"testing"

	"github.com/rpctl/rpctl/candidates"
	"github.com/rpctl/rpctl/candidates/internal/acbody"
)

// modelInput builds the rows a MariaDB-backed Placement database holds for
// the cloud, the way placement-api would number them (providers and custom
// classes in creation order) and the way storage reads its FLOAT ratios
// back, so the model-only tests below need no services.
func (c *cloud) modelInput() *candidates.ModelInput {
	in := &candidates.ModelInput{Ratios: candidates.RatioMySQLFloat}
	ids := map[string]int64{}
	classIDs := map[string]int64{}
	for i, n := range candidates.StandardResourceClasses() {
		classIDs[n] = int64(i)
	}
	traitIDs := map[string]int64{}
	trait := func(n string) int64 {
		if id, ok := traitIDs[n]; ok {
			return id
		}
		traitIDs[n] = int64(len(traitIDs) + 1)
		in.Traits = append(in.Traits, candidates.NamedRow{ID: traitIDs[n], Name: n})
		return traitIDs[n]
	}
	for _, n := range candidates.StandardTraits() {
		trait(n)
	}
	aggIDs := map[string]int64{}
	for i, a := range c.aggs {
		aggIDs[a] = int64(i + 1)
		in.Aggregates = append(in.Aggregates, candidates.NamedRow{ID: int64(i + 1), Name: a})
	}
	for i, p := range c.providers {
		ids[p.uuid] = int64(i + 1)
		row := candidates.ProviderRow{ID: int64(i + 1), UUID: p.uuid, Name: p.name, Generation: 1}
		if p.parent != "" {
			row.ParentID = ids[p.parent]
		}
		in.Providers = append(in.Providers, row)
		rcs := make([]string, 0, len(p.invs))
		for rc := range p.invs {
			rcs = append(rcs, rc)
		}
		slices.Sort(rcs)
		for _, rc := range rcs {
			if _, ok := classIDs[rc]; !ok {
				classIDs[rc] = int64(candidates.FirstCustomResourceClassID + len(in.ResourceClasses))
				in.ResourceClasses = append(in.ResourceClasses, candidates.NamedRow{ID: classIDs[rc], Name: rc})
			}
			iv := p.invs[rc]
			in.Inventories = append(in.Inventories, candidates.InventoryRow{ProviderID: row.ID,
				ResourceClassID: classIDs[rc], Total: iv.Total, Reserved: iv.Reserved, MinUnit: iv.MinUnit,
				MaxUnit: iv.MaxUnit, StepSize: iv.StepSize, AllocationRatio: mariadbText(iv.AllocationRatio),
				SQLRatio: float64(float32(iv.AllocationRatio))})
		}
		for _, t := range p.traits {
			in.ProviderTraits = append(in.ProviderTraits, candidates.LinkRow{ProviderID: row.ID, OtherID: trait(t)})
		}
		for _, a := range p.aggs {
			in.ProviderAggregates = append(in.ProviderAggregates, candidates.LinkRow{ProviderID: row.ID, OtherID: aggIDs[a]})
		}
	}
	for _, a := range c.allocs {
		for u, res := range a {
			for rc, n := range res {
				in.Usages = append(in.Usages, candidates.UsageRow{ProviderID: ids[u], ResourceClassID: classIDs[rc], Used: n})
			}
		}
	}
	return in
}

// mariadbText is the ratio as PyMySQL (and go-sql-driver) get it from
// MariaDB: the stored float32 printed with six significant digits.
func mariadbText(r float64) float64 {
	v, _ := strconv.ParseFloat(strconv.FormatFloat(float64(float32(r)), 'g', 6, 32), 64)
	return v
}

// modelSeeds is how many random clouds the model-only tests draw
// (RPCTL_EXPLAIN_SEEDS overrides).
func modelSeeds(t *testing.T) int {
	if s := os.Getenv("RPCTL_EXPLAIN_SEEDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("RPCTL_EXPLAIN_SEEDS: %v", err)
		}
		return n
	}
	return 60
}

// queryCase is one accepted query of a random cloud.
type queryCase struct {
	seed uint64
	in   *candidates.ModelInput
	m    *candidates.Model
	q    string
	req  *candidates.Request
	// floatEdge: an amount where Placement's SQL filter and its Python
	// capacity disagree (gen.floatEdge).
	floatEdge bool
}

// forEachQuery draws the differential test's clouds and queries (the same
// generators, seeds 1..n) and calls f with every query the parser accepts.
func forEachQuery(t *testing.T, n, perCloud int, f func(c queryCase)) {
	for seed := uint64(1); seed <= uint64(n); seed++ {
		c := newCloud(seed)
		in := c.modelInput()
		m, err := candidates.NewModel(in)
		if err != nil {
			t.Fatal(err)
		}
		g := &gen{r: rand.New(rand.NewPCG(seed, 0x5eed)), c: c}
		for i := range perCloud {
			mv, q := g.next(i)
			req, err := candidates.ParseQuery(q, candidates.Microversion(mv))
			if err != nil {
				continue
			}
			f(queryCase{seed: seed, in: in, m: m, q: q, req: req, floatEdge: g.floatEdge})
		}
	}
}

// TestExplainConsistent proves Explain on the differential test's random
// clouds and queries: for each accepted query the roots it names are exactly
// those that anchor no candidate of the unlimited answer, and every reason's
// kind is re-derived from the model (candidates.Model.CheckExplain).
func TestExplainConsistent(t *testing.T) {
	kinds := map[candidates.ReasonKind]int{}
	checked, fails := 0, 0
	forEachQuery(t, modelSeeds(t), 300, func(qc queryCase) {
		seed, m, q, req := qc.seed, qc.m, qc.q, qc.req
		checked++
		if err := m.CheckExplain(req); err != nil {
			var ae *candidates.APIError
			if errors.As(err, &ae) {
				return
			}
			fails++
			if fails <= 10 {
				t.Errorf("seed %d, 1.%d: %s\n%v", seed, req.Microversion, q, err)
			}
			return
		}
		for _, e := range explainAll(m, req) {
			kinds[e.Kind]++
		}
	})
	if fails > 10 {
		t.Errorf("... %d inconsistent in all", fails)
	}
	t.Logf("%d accepted queries explained consistently; reasons given: %v", checked-fails, kinds)
}

// TestResultsUnchanged pins the exact answers (bodies, order included) of
// the random clouds' queries, unlimited, limited, capped by MaxCandidates
// and breadth-first, to a fingerprint per cloud recorded before the
// multi-provider search became lazy: a refactoring of the search must not
// change a byte. RPCTL_WRITE_FINGERPRINTS=1 rewrites the file after an
// intended change.
func TestResultsUnchanged(t *testing.T) {
	const path = "testdata/fingerprints.txt"
	var lines []string
	for seed := uint64(1); seed <= 40; seed++ {
		h := fnv.New64a()
		c := newCloud(seed)
		m, err := candidates.NewModel(c.modelInput())
		if err != nil {
			t.Fatal(err)
		}
		g := &gen{r: rand.New(rand.NewPCG(seed, 0x5eed)), c: c}
		for i := range 300 {
			mv, q := g.next(i)
			req, err := candidates.ParseQuery(q, candidates.Microversion(mv))
			if err != nil {
				addRecord(h, err.Error())
				continue
			}
			for _, opt := range []candidates.Options{{}, {MaxCandidates: 2}, {MaxCandidates: 3, Strategy: "breadth-first"}} {
				r, err := m.Search(context.Background(), req, opt)
				if err != nil {
					addRecord(h, err.Error())
					continue
				}
				b, _ := r.MarshalPlacement(req.Microversion)
				addRecord(h, string(b))
			}
		}
		lines = append(lines, fmt.Sprintf("seed %d %016x", seed, h.Sum64()))
	}
	acbody.CheckFingerprints(t, path, lines)
}

// addRecord hashes s and a 0xff byte, which no UTF-8 text holds, so that
// records cannot run into each other.
func addRecord(h hash.Hash64, s string) {
	_, _ = io.WriteString(h, s)
	_, _ = h.Write([]byte{0xff})
}

// explainAll is Explain under the default bounds, which no test here
// reaches.
func explainAll(m *candidates.Model, req *candidates.Request) []candidates.Explanation {
	ex, err := m.Explain(context.Background(), req, candidates.Options{})
	if err != nil {
		panic(err)
	}
	return ex
}
