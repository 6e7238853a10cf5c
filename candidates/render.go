package candidates

import (
	"io"
	"slices"
	"strconv"

	"github.com/rpctl/rpctl/internal/pyjson"
)

// MarshalPlacement renders the GET /allocation_candidates response body that
// Placement returns at microversion mv, formatted the way Python's
// json.dumps does (", " and ": " separators, ASCII-only), with our
// deterministic order where Placement's is undefined (candidate order, keys
// of provider_summaries, trait lists and mapping lists).
func (r *Result) MarshalPlacement(mv Microversion) ([]byte, error) {
	// The buffer is sized from the pre-encoded strings and digit counts, so
	// it is allocated (and zeroed) once at about the final size: both the
	// regrowth of a small buffer and the clearing of a generous one showed
	// up in profiles of million-byte answers. The writers append to a local
	// slice, which the compiler keeps in registers.
	return r.encodePlacement(make([]byte, 0, r.sizeHint(mv)), mv, nil)
}

// WritePlacementTo writes MarshalPlacement's body and a newline to w, in
// pieces of about 64 KiB as the body is encoded. A one-shot command that
// only prints the body (rpctl candidates -f json) touches 64 KiB of memory
// instead of the whole body and a copy of it with the newline: on
// placement-perfload (a 490 KiB body) that was 0.48 ms of the process's
// 16 (paired median of 101 alternated runs; issue 35), each new page of
// memory costing a page fault of about 2 µs on the machines measured.
func (r *Result) WritePlacementTo(w io.Writer, mv Microversion) error {
	return r.writePlacement(w, mv, 64<<10)
}

func (r *Result) writePlacement(w io.Writer, mv Microversion, chunk int) error {
	flush := func(b []byte) ([]byte, error) {
		if len(b) < chunk {
			return b, nil
		}
		_, err := w.Write(b)
		return b[:0], err
	}
	// Room for a piece of the answer past the chunk: flushing comes
	// after each candidate or summary, so that the buffer rarely grows.
	b, err := r.encodePlacement(make([]byte, 0, chunk+chunk/8), mv, flush)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// encodePlacement appends the body to b, passing it to flush (when not
// nil) after each candidate and each provider summary: flush returns what
// to append to next.
func (r *Result) encodePlacement(b []byte, mv Microversion, flush func([]byte) ([]byte, error)) ([]byte, error) {
	m := r.model
	var err error
	b = append(b, `{"allocation_requests": [`...)
	for i := range r.Candidates {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = r.appendRequest(b, &r.Candidates[i], mv)
		if flush != nil {
			if b, err = flush(b); err != nil {
				return nil, err
			}
		}
	}
	b = append(b, `], "provider_summaries": {`...)
	for i, p := range r.Summaries {
		if i > 0 {
			b = append(b, ", "...)
		}
		if flush != nil {
			if b, err = flush(b); err != nil {
				return nil, err
			}
		}
		pr := &m.providers[p]
		b = append(b, m.uuidLit(p)...)
		b = append(b, `: {"resources": {`...)
		first := true
		for k := range pr.Inventories {
			inv := &pr.Inventories[k]
			if mv < 27 {
				if _, ok := slices.BinarySearch(r.requested, inv.Class); !ok {
					continue
				}
			}
			if !first {
				b = append(b, ", "...)
			}
			first = false
			b = append(b, m.classCapJSON[inv.Class]...)
			b = strconv.AppendInt(b, inv.Capacity, 10)
			b = append(b, `, "used": `...)
			b = strconv.AppendInt(b, inv.Used, 10)
			b = append(b, '}')
		}
		b = append(b, '}')
		if mv >= 17 {
			b = append(b, `, "traits": [`...)
			// Trait indexes are in name order.
			for k, t := range pr.Traits {
				if k > 0 {
					b = append(b, ", "...)
				}
				b = append(b, m.traitJSON[t]...)
			}
			b = append(b, ']')
		}
		if mv >= 29 {
			b = append(b, `, "parent_provider_uuid": `...)
			if pr.Parent >= 0 {
				b = append(b, m.uuidLit(pr.Parent)...)
			} else {
				b = append(b, "null"...)
			}
			b = append(b, `, "root_provider_uuid": `...)
			b = append(b, m.uuidLit(pr.Root)...)
		}
		b = append(b, '}')
	}
	b = append(b, "}}"...)
	return b, nil
}

func digits(n int64) int {
	d := 1
	if n < 0 {
		d, n = 2, -n
	}
	for n >= 10 {
		n /= 10
		d++
	}
	return d
}

// sizeHint is the body's length, give or take a few separators: the
// constants are the lengths of the literals the writers below append.
func (r *Result) sizeHint(mv Microversion) int {
	m := r.model
	size := 64
	for i := range r.Candidates {
		c := &r.Candidates[i]
		size += 17 + 1 + 2 + 2 // {"allocations": { ... } ... }, separator
		for k, a := range c.Resources {
			if k == 0 || a.Provider != c.Resources[k-1].Provider {
				size += len(m.uuidLit(a.Provider)) + 16 + 2 + 1 + 2
				if mv < 12 {
					size += 32
				}
			}
			size += len(m.classJSON[a.Class]) + 2 + digits(a.Amount) + 2
		}
		if mv >= 34 {
			size += 15 + 1
			for _, mp := range c.Mappings {
				size += len(mp.Suffix) + 2 + 3 + 1 + 2
				for _, p := range mp.Providers {
					size += len(m.uuidLit(p)) + 2
				}
			}
		}
	}
	for _, p := range r.Summaries {
		pr := &m.providers[p]
		size += len(m.uuidLit(p)) + 17 + 1 + 1 + 2
		for k := range pr.Inventories {
			inv := &pr.Inventories[k]
			size += len(m.classJSON[inv.Class]) + 15 + digits(inv.Capacity) + 10 + digits(inv.Used) + 1 + 2
		}
		if mv >= 17 {
			size += 13 + 1
			for _, t := range pr.Traits {
				size += len(m.traitJSON[t]) + 2
			}
		}
		if mv >= 29 {
			size += 26 + 24 + 2*len(m.uuidLit(pr.Root))
		}
	}
	return size
}

func (r *Result) appendRes(b []byte, res []Amount) []byte {
	m := r.model
	b = append(b, '{')
	for k := range res {
		if k > 0 {
			b = append(b, ", "...)
		}
		b = append(b, m.classKeyJSON[res[k].Class]...)
		b = strconv.AppendInt(b, res[k].Amount, 10)
	}
	return append(b, '}')
}

func (r *Result) appendRequest(b []byte, c *Candidate, mv Microversion) []byte {
	m := r.model
	// Resources are ordered by provider, so each provider's classes are
	// contiguous.
	if mv < 12 {
		b = append(b, `{"allocations": [`...)
		for lo := 0; lo < len(c.Resources); {
			hi := lo + 1
			for hi < len(c.Resources) && c.Resources[hi].Provider == c.Resources[lo].Provider {
				hi++
			}
			if lo > 0 {
				b = append(b, ", "...)
			}
			b = append(b, `{"resource_provider": {"uuid": `...)
			b = append(b, m.uuidLit(c.Resources[lo].Provider)...)
			b = append(b, `}, "resources": `...)
			b = r.appendRes(b, c.Resources[lo:hi])
			b = append(b, '}')
			lo = hi
		}
		return append(b, "]}"...)
	}
	b = append(b, `{"allocations": {`...)
	for lo := 0; lo < len(c.Resources); {
		hi := lo + 1
		for hi < len(c.Resources) && c.Resources[hi].Provider == c.Resources[lo].Provider {
			hi++
		}
		if lo > 0 {
			b = append(b, ", "...)
		}
		b = append(b, m.uuidLit(c.Resources[lo].Provider)...)
		b = append(b, `: {"resources": `...)
		b = r.appendRes(b, c.Resources[lo:hi])
		b = append(b, '}')
		lo = hi
	}
	b = append(b, '}')
	if mv >= 34 {
		b = append(b, `, "mappings": {`...)
		for i, mp := range c.Mappings {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = pyjson.AppendString(b, mp.Suffix)
			b = append(b, ": ["...)
			for k, p := range mp.Providers {
				if k > 0 {
					b = append(b, ", "...)
				}
				b = append(b, m.uuidLit(p)...)
			}
			b = append(b, ']')
		}
		b = append(b, '}')
	}
	return append(b, '}')
}

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
			UsedAfter: inv.Used + a.Amount, Capacity: inv.Capacity,
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
