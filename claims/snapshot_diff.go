package claims

import (
	"sort"
	"strconv"
	"strings"
)

// The kinds of change Diff reports.
const (
	ChangeNew      = "new"
	ChangeReleased = "released"
	ChangeResized  = "resized"
	ChangeMoved    = "moved"
)

// Change is what happened to one consumer's claims between two snapshots.
type Change struct {
	Kind     string
	Consumer string
	Before   string // "node: CLASS=N,…; …", "" for a new claim
	After    string // "" for a released claim
}

// place names where a claim is: its provider when both sides know it (v1
// files did not record it), else its host and node.
type place struct{ provider, host, node string }

func (p place) String() string {
	switch {
	case p.node != "":
		return p.node
	case p.provider != "":
		return p.provider
	}
	return "?"
}

type holding map[place]map[string]int64

func group(claims []Claim) map[string]holding {
	out := map[string]holding{}
	for _, c := range claims {
		h := out[c.InstanceUUID]
		if h == nil {
			h = holding{}
			out[c.InstanceUUID] = h
		}
		p := place{c.ProviderUUID, c.Host, c.Node}
		r := h[p]
		if r == nil {
			r = map[string]int64{}
			h[p] = r
		}
		for rc, v := range c.Resources {
			r[rc] += v
		}
	}
	return out
}

// withoutProviders drops provider uuids so that a side that lacks them (an
// upgraded v1 file) compares by host and node.
func (h holding) withoutProviders() holding {
	out := holding{}
	for p, r := range h {
		q := place{host: p.host, node: p.node}
		if out[q] == nil {
			out[q] = map[string]int64{}
		}
		for rc, v := range r {
			out[q][rc] += v
		}
	}
	return out
}

func (h holding) knowsProviders() bool {
	for p := range h {
		if p.provider == "" {
			return false
		}
	}
	return true
}

func (h holding) places() []place {
	ps := make([]place, 0, len(h))
	for p := range h {
		ps = append(ps, p)
	}
	sort.Slice(ps, func(i, j int) bool {
		a, b := ps[i], ps[j]
		if a.node != b.node {
			return a.node < b.node
		}
		return a.provider < b.provider
	})
	return ps
}

func (h holding) String() string {
	var parts []string
	for _, p := range h.places() {
		parts = append(parts, p.String()+": "+formatResources(h[p]))
	}
	return strings.Join(parts, "; ")
}

func formatResources(r map[string]int64) string {
	var parts []string
	for _, rc := range sortedKeys(r) {
		parts = append(parts, rc+"="+strconv.FormatInt(r[rc], 10))
	}
	return strings.Join(parts, ",")
}

func samePlaces(a, b holding) bool {
	if len(a) != len(b) {
		return false
	}
	for p := range a {
		if _, ok := b[p]; !ok {
			return false
		}
	}
	return true
}

func sameResources(a, b holding) bool {
	for p, r := range a {
		if formatResources(r) != formatResources(b[p]) {
			return false
		}
	}
	return true
}

// Diff compares two snapshots consumer by consumer: a consumer only in after
// is new, only in before released; one whose set of places changed moved (a
// move that also changed size is reported as moved); same places with
// different amounts resized. Changes are ordered by consumer.
func Diff(before, after []Claim) []Change {
	b, a := group(before), group(after)
	var consumers []string
	for c := range b {
		consumers = append(consumers, c)
	}
	for c := range a {
		if b[c] == nil {
			consumers = append(consumers, c)
		}
	}
	sort.Strings(consumers)
	var out []Change
	for _, c := range consumers {
		hb, ha := b[c], a[c]
		switch {
		case hb == nil:
			out = append(out, Change{ChangeNew, c, "", ha.String()})
		case ha == nil:
			out = append(out, Change{ChangeReleased, c, hb.String(), ""})
		default:
			cb, ca := hb, ha
			if !hb.knowsProviders() || !ha.knowsProviders() {
				cb, ca = hb.withoutProviders(), ha.withoutProviders()
			}
			switch {
			case !samePlaces(cb, ca):
				out = append(out, Change{ChangeMoved, c, hb.String(), ha.String()})
			case !sameResources(cb, ca):
				out = append(out, Change{ChangeResized, c, hb.String(), ha.String()})
			}
		}
	}
	return out
}
