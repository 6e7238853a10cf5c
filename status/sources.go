package status

import "strings"

// Reads says what a check reads; Env.Sources says where each of them is,
// so that every result says where it read from (the -f json "source", the
// Source column of the other formats). oslo.upgradecheck's table stays
// the upstream tools' own.
type Reads uint8

// What checks read.
const (
	ReadsCells Reads = 1 << iota
	ReadsAPIDB
	ReadsPlacement
	ReadsPlacementAPI
	ReadsCinderAPI
	ReadsConfig
)

// Sources describe where each of Reads is, as the wiring found it: a
// database and the config line or flag that gave it, or an API and the
// section that names it ("" for what is not configured).
type Sources struct {
	Cells        string
	APIDB        string
	Placement    string
	PlacementAPI string
	CinderAPI    string
	Config       string
}

// source is the check's Source: what it reads, where.
func (e *Env) source(r Reads) func() string {
	return func() string {
		var parts []string
		add := func(bit Reads, where, missing string) {
			if r&bit == 0 {
				return
			}
			if where == "" {
				where = missing
			}
			parts = append(parts, where)
		}
		s := e.Sources
		add(ReadsConfig, s.Config, "the config files (none given)")
		add(ReadsCells, s.Cells, "the cell databases (none configured)")
		add(ReadsAPIDB, s.APIDB, "the API database (none configured)")
		add(ReadsPlacement, s.Placement, "Placement (no database, no API configured)")
		add(ReadsPlacementAPI, s.PlacementAPI, "the Placement API (nova.conf [placement]: not configured)")
		add(ReadsCinderAPI, s.CinderAPI, "the Cinder API (nova.conf [cinder]: not configured)")
		return strings.Join(parts, "; ")
	}
}

// policySource is a policy check's Source: the file it read, found as the
// tool's oslo.config finds it.
func (e *Env) policySource(file func() string) func() string {
	return func() string {
		if f := file(); f != "" {
			return "policy file " + f
		}
		return "no policy file found beside the config files"
	}
}
