package difftest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
)

// microversions are every one GET /allocation_candidates has, 1.10..1.39,
// as the issue asks.
var microversions = func() []int {
	var out []int
	for mv := 10; mv <= 39; mv++ {
		out = append(out, mv)
	}
	return out
}()

// classAmounts are plausible amounts per resource class; some are too big
// for any provider on purpose.
var classAmounts = map[string][]int64{
	"VCPU":                       {1, 1, 2, 4, 8, 64},
	"MEMORY_MB":                  {256, 512, 1024, 2048, 4096, 300, 100000},
	"DISK_GB":                    {10, 20, 100, 500, 5000},
	"SRIOV_NET_VF":               {1, 1, 2, 4},
	"NET_BW_EGR_KILOBIT_PER_SEC": {1000, 5000, 20000},
	"VGPU":                       {1, 1, 2, 8},
	"CUSTOM_MAGIC":               {1, 2, 5},
	"IPV4_ADDRESS":               {1, 2},
	"CUSTOM_VF_QUEUE":            {1, 2, 4, 8},
}

var hostClasses = []string{"VCPU", "MEMORY_MB", "DISK_GB"}
var deviceClasses = []string{"SRIOV_NET_VF", "NET_BW_EGR_KILOBIT_PER_SEC", "VGPU", "CUSTOM_MAGIC", "IPV4_ADDRESS", "CUSTOM_VF_QUEUE"}

// gen draws query strings. Most are valid at their microversion; about one
// in eight uses something the microversion does not have yet or is
// malformed, so that rejections (status and message) are compared too.
type gen struct {
	r *rand.Rand
	c *cloud
	// boundary is set when the last query asked some class for exactly
	// int((total - reserved) * ratio) - used of a provider, or one more.
	boundary bool
	// floatEdge is set when that amount is one where Placement's SQL
	// filter and its Python capacity disagree (a FLOAT ratio).
	floatEdge bool
	// invalid is set when the last query was made invalid on purpose.
	invalid bool
}

// next draws query i: its microversion cycles through 1.10..1.39 and every
// tenth query is made invalid on purpose (shifted by one each round of
// microversions, so that every microversion also gets valid queries).
func (g *gen) next(i int) (int, string) {
	n := len(microversions)
	mv := microversions[i%n]
	g.boundary, g.floatEdge, g.invalid = false, false, false
	q := g.query(mv)
	if (i+i/n)%10 == 9 {
		q = g.invalidate(q)
	}
	return mv, q
}

// invalidate adds a parameter Placement rejects at every microversion.
func (g *gen) invalidate(q string) string {
	g.invalid = true
	bad := []string{"bogus=1", "resources1@=VCPU:1", "Resources=VCPU:1"}
	if !strings.Contains(q, "limit=") {
		bad = append(bad, "limit=0", "limit=x")
	}
	if !strings.Contains(q, "in_tree=") {
		bad = append(bad, "in_tree=not-a-uuid")
	}
	if !strings.Contains(q, "group_policy=") {
		bad = append(bad, "group_policy=bogus")
	}
	return q + "&" + g.one(bad)
}

// edge returns, for a random provider with class rc, the amount that sits
// exactly on its room by Placement's Python capacity, or one above it.
func (g *gen) edge(rc string) (int64, bool) {
	var with []*provider
	for _, p := range g.c.providers {
		if _, ok := p.invs[rc]; ok {
			with = append(with, p)
		}
	}
	if len(with) == 0 {
		return 0, false
	}
	// Half the time a provider whose ratio a FLOAT cannot hold.
	var inexact []*provider
	for _, p := range with {
		if slices.Contains(inexactRatios, p.invs[rc].AllocationRatio) {
			inexact = append(inexact, p)
		}
	}
	if len(inexact) > 0 && g.chance(2) {
		with = inexact
	}
	p := with[g.r.IntN(len(with))]
	iv, used := p.invs[rc], g.c.used[p.uuid+"/"+rc]
	n := capacity(iv) - used + int64(g.r.IntN(2))
	if n < 1 {
		return 0, false
	}
	// Where Placement's SQL filter (the FLOAT widened) and its Python
	// capacity disagree about this amount.
	sql := int64(math.Floor(float64(iv.Total-iv.Reserved) * float64(float32(iv.AllocationRatio))))
	if used+n > min(sql, capacity(iv)) && used+n <= max(sql, capacity(iv)) {
		g.floatEdge = true
	}
	return n, true
}

func (g *gen) chance(n int) bool { return g.r.IntN(n) == 0 }

func (g *gen) one(list []string) string { return list[g.r.IntN(len(list))] }

func (g *gen) resources(classes []string, n int) string {
	perm := g.r.Perm(len(classes))
	var parts []string
	for _, i := range perm[:min(n, len(classes))] {
		rc := classes[i]
		amts := classAmounts[rc]
		amt := amts[g.r.IntN(len(amts))]
		if g.chance(3) {
			if n, ok := g.edge(rc); ok {
				amt = n
				g.boundary = true
			}
		}
		parts = append(parts, fmt.Sprintf("%s:%d", rc, amt))
	}
	if g.chance(60) {
		parts = append(parts, g.one([]string{"VCPU:0", "VCPU", "NOT_A_CLASS:1", "CUSTOM_NOPE:1", "VCPU:-1", "VCPU:1.5", "NOT_A_CLASS:1,CUSTOM_NOPE:1"}))
	}
	return strings.Join(parts, ",")
}

// traits builds a required value: plain, forbidden (!T, 1.22+), any-of
// (in:A,B, 1.39).
func (g *gen) traits(mv int, pool []string) string {
	var parts []string
	for range 1 + g.r.IntN(2) {
		t := g.one(pool)
		switch {
		case (mv >= 22 || g.chance(12)) && g.chance(4):
			parts = append(parts, "!"+t)
		default:
			parts = append(parts, t)
		}
	}
	if g.chance(50) {
		parts = append(parts, g.one([]string{"CUSTOM_NOPE", "lowercase", "!"}))
	}
	return strings.Join(parts, ",")
}

func (g *gen) anyOf(pool []string) string {
	a, b := g.one(pool), g.one(pool)
	return "in:" + a + "," + b
}

func (g *gen) memberOf(mv int) string {
	aggs := g.c.aggs
	unknown := "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee"
	switch {
	case g.chance(20):
		return g.one([]string{"not-a-uuid", unknown, "in:" + unknown})
	case (mv >= 32 || g.chance(12)) && g.chance(4):
		if g.chance(2) {
			return "!" + g.one(aggs)
		}
		return "!in:" + g.one(aggs) + "," + g.one(aggs)
	case g.chance(2):
		return "in:" + g.one(aggs) + "," + g.one(aggs)
	}
	return g.one(aggs)
}

func (g *gen) treeUUID() string {
	if g.chance(15) {
		return g.one([]string{"aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee", "not-a-uuid"})
	}
	return g.c.providers[g.r.IntN(len(g.c.providers))].uuid
}

// query draws one query string at microversion mv.
func (g *gen) query(mv int) string {
	var q []string
	add := func(k, v string) { q = append(q, k+"="+v) }
	feature := func(since int) bool { return mv >= since || g.chance(25) }
	hasUnsuffixed := g.r.IntN(5) > 0
	if hasUnsuffixed {
		classes := hostClasses
		if g.chance(3) {
			classes = append(append([]string{}, hostClasses...), deviceClasses...)
		}
		add("resources", g.resources(classes, 1+g.r.IntN(3)))
		if feature(17) && g.chance(3) {
			add("required", g.traits(mv, allTraits))
			if feature(39) && g.chance(4) {
				add("required", g.anyOf(allTraits))
			}
		}
		if feature(21) && g.chance(4) {
			add("member_of", g.memberOf(mv))
			if feature(24) && g.chance(3) {
				add("member_of", g.memberOf(mv))
			}
		}
		if feature(31) && g.chance(6) {
			add("in_tree", g.treeUUID())
		}
	}
	var suffixes, resourceless []string
	if feature(25) && (!hasUnsuffixed || g.chance(2)) {
		n := 1 + g.r.IntN(3)
		for i := range n {
			s := fmt.Sprint(i + 1)
			if feature(33) && g.chance(2) {
				s = g.one([]string{"_NET", "_GPU", "_COMPUTE", "_X-1"}) + fmt.Sprint(i)
			}
			suffixes = append(suffixes, s)
			switch {
			case feature(36) && g.chance(10):
				// resourceless: only traits or aggregates
				resourceless = append(resourceless, s)
				if g.chance(2) {
					add("required"+s, g.traits(mv, allTraits))
				} else {
					add("member_of"+s, g.memberOf(mv))
				}
			default:
				pool := hostClasses
				if g.chance(2) {
					pool = deviceClasses
				}
				add("resources"+s, g.resources(pool, 1+g.r.IntN(2)))
				if g.chance(2) {
					tp := pfTraits
					switch {
					case g.chance(3):
						tp = gpuTraits
					case g.chance(3):
						tp = numaTraits
					case g.chance(3):
						tp = allTraits
					}
					add("required"+s, g.traits(mv, tp))
				}
				if g.chance(5) {
					add("member_of"+s, g.memberOf(mv))
				}
				if feature(31) && g.chance(8) {
					add("in_tree"+s, g.treeUUID())
				}
			}
		}
		if len(suffixes) > 1 || g.chance(2) {
			if !g.chance(25) {
				add("group_policy", g.one([]string{"none", "isolate"}))
			}
		} else if g.chance(40) {
			add("group_policy", "bogus")
		}
	}
	// A resourceless group must be named in same_subtree (else 400), so
	// mostly it is, with a group that has resources.
	if len(resourceless) > 0 && !g.chance(8) {
		ss := append([]string{}, resourceless...)
		for _, s := range suffixes {
			if !slices.Contains(ss, s) && g.chance(2) {
				ss = append(ss, s)
			}
		}
		add("same_subtree", strings.Join(ss, ","))
	} else if feature(36) && len(suffixes) > 0 && g.chance(3) {
		perm := g.r.Perm(len(suffixes))
		var ss []string
		for _, i := range perm[:1+g.r.IntN(len(suffixes))] {
			ss = append(ss, suffixes[i])
		}
		if g.chance(20) {
			ss = append(ss, "_UNKNOWN")
		}
		add("same_subtree", strings.Join(ss, ","))
	}
	if feature(35) && g.chance(6) {
		t := g.one(hostTraits)
		if g.chance(3) {
			t = "!" + t
		}
		add("root_required", t)
	}
	if feature(16) && g.chance(4) {
		add("limit", g.one([]string{"1", "2", "3", "5", "0", "-1", "x"}[:g.r.IntN(7)+1]))
	}
	if len(q) == 0 || g.chance(100) {
		add("resources", "VCPU:1")
	}
	return strings.Join(q, "&")
}
