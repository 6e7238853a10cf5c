package candidates

import (
	"slices"
	"strconv"

	"github.com/rpctl/rpctl/pyjson"
)

// MarshalPlacement renders the GET /allocation_candidates response body that
// Placement returns at microversion mv, formatted the way Python's
// json.dumps does (", " and ": " separators, ASCII-only), with our
// deterministic order where Placement's is undefined (candidate order, keys
// of provider_summaries, trait lists and mapping lists).
func (r *Result) MarshalPlacement(mv Microversion) ([]byte, error) {
	m := r.model
	// Sized up front: growing a multi-megabyte buffer by doubling was a
	// third of the time of a large answer.
	size := 64
	for i := range r.Candidates {
		size += 120 + 110*len(r.Candidates[i].Resources) + 60*len(r.Candidates[i].Mappings)
	}
	for _, p := range r.Summaries {
		pr := &m.providers[p]
		size += 160 + 72*len(pr.Inventories) + 40*len(pr.Traits)
	}
	w := &pyJSON{b: make([]byte, 0, size)}
	w.raw(`{"allocation_requests": [`)
	for i := range r.Candidates {
		if i > 0 {
			w.raw(", ")
		}
		r.writeRequest(w, &r.Candidates[i], mv)
	}
	w.raw(`], "provider_summaries": {`)
	for i, p := range r.Summaries {
		if i > 0 {
			w.raw(", ")
		}
		pr := &m.providers[p]
		w.str(pr.UUID)
		w.raw(`: {"resources": {`)
		first := true
		for _, inv := range pr.Inventories {
			if mv < 27 {
				if _, ok := slices.BinarySearch(r.requested, inv.Class); !ok {
					continue
				}
			}
			if !first {
				w.raw(", ")
			}
			first = false
			w.str(m.classes[inv.Class].name)
			w.raw(`: {"capacity": `)
			w.int(inv.Capacity)
			w.raw(`, "used": `)
			w.int(inv.Used)
			w.raw("}")
		}
		w.raw("}")
		if mv >= 17 {
			w.raw(`, "traits": [`)
			for k, t := range m.TraitNames(p) {
				if k > 0 {
					w.raw(", ")
				}
				w.str(t)
			}
			w.raw("]")
		}
		if mv >= 29 {
			w.raw(`, "parent_provider_uuid": `)
			if pr.Parent >= 0 {
				w.str(m.providers[pr.Parent].UUID)
			} else {
				w.raw("null")
			}
			w.raw(`, "root_provider_uuid": `)
			w.str(m.providers[pr.Root].UUID)
		}
		w.raw("}")
	}
	w.raw("}}")
	return w.b, nil
}

func (r *Result) writeRequest(w *pyJSON, c *Candidate, mv Microversion) {
	m := r.model
	// Resources are ordered by provider, so each provider's classes are
	// contiguous.
	type span struct{ lo, hi int }
	var spans []span
	for i := range c.Resources {
		if i == 0 || c.Resources[i].Provider != c.Resources[i-1].Provider {
			spans = append(spans, span{i, i + 1})
		} else {
			spans[len(spans)-1].hi = i + 1
		}
	}
	writeRes := func(sp span) {
		w.raw("{")
		for k := sp.lo; k < sp.hi; k++ {
			if k > sp.lo {
				w.raw(", ")
			}
			w.str(m.classes[c.Resources[k].Class].name)
			w.raw(": ")
			w.int(c.Resources[k].Amount)
		}
		w.raw("}")
	}
	if mv < 12 {
		w.raw(`{"allocations": [`)
		for i, sp := range spans {
			if i > 0 {
				w.raw(", ")
			}
			w.raw(`{"resource_provider": {"uuid": `)
			w.str(m.providers[c.Resources[sp.lo].Provider].UUID)
			w.raw(`}, "resources": `)
			writeRes(sp)
			w.raw("}")
		}
		w.raw("]}")
		return
	}
	w.raw(`{"allocations": {`)
	for i, sp := range spans {
		if i > 0 {
			w.raw(", ")
		}
		w.str(m.providers[c.Resources[sp.lo].Provider].UUID)
		w.raw(`: {"resources": `)
		writeRes(sp)
		w.raw("}")
	}
	w.raw("}")
	if mv >= 34 {
		w.raw(`, "mappings": {`)
		for i, mp := range c.Mappings {
			if i > 0 {
				w.raw(", ")
			}
			w.str(mp.Suffix)
			w.raw(": [")
			for k, p := range mp.Providers {
				if k > 0 {
					w.raw(", ")
				}
				w.str(m.providers[p].UUID)
			}
			w.raw("]")
		}
		w.raw("}")
	}
	w.raw("}")
}

// pyJSON appends JSON the way Python's json.dumps writes it by default.
type pyJSON struct{ b []byte }

func (w *pyJSON) raw(s string) { w.b = append(w.b, s...) }
func (w *pyJSON) int(n int64)  { w.b = strconv.AppendInt(w.b, n, 10) }

func (w *pyJSON) str(s string) { w.b = pyjson.AppendString(w.b, s) }

// CandidateView is one candidate in operator terms, for table renderers.
type CandidateView struct {
	RootUUID string
	RootName string
	Parts    []PartView
	// Mappings maps group suffix ("" for the unsuffixed group) to the names
	// of the providers that satisfied it.
	Mappings map[string][]string
}

// PartView is what one provider gives for one resource class, and how full
// that inventory would be after the allocation.
type PartView struct {
	ProviderUUID  string
	ProviderName  string
	ResourceClass string
	Amount        int64
	UsedBefore    int64
	UsedAfter     int64
	Capacity      int64
}

// Views returns every candidate as a CandidateView, in result order.
func (r *Result) Views() []CandidateView {
	out := make([]CandidateView, len(r.Candidates))
	for i := range r.Candidates {
		out[i] = r.View(i)
	}
	return out
}

// View returns candidate i as a CandidateView.
func (r *Result) View(i int) CandidateView {
	m := r.model
	c := &r.Candidates[i]
	root := &m.providers[c.Anchor]
	v := CandidateView{RootUUID: root.UUID, RootName: root.Name, Mappings: map[string][]string{}}
	for _, a := range c.Resources {
		p := &m.providers[a.Provider]
		inv := p.inventory(a.Class)
		v.Parts = append(v.Parts, PartView{
			ProviderUUID: p.UUID, ProviderName: p.Name,
			ResourceClass: m.classes[a.Class].name, Amount: a.Amount,
			UsedBefore: inv.Used, UsedAfter: inv.Used + a.Amount, Capacity: inv.Capacity,
		})
	}
	for _, mp := range c.Mappings {
		names := make([]string, len(mp.Providers))
		for k, p := range mp.Providers {
			names[k] = m.providers[p].Name
		}
		v.Mappings[mp.Suffix] = names
	}
	return v
}
