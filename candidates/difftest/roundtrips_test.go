package difftest

import (
	"context"
	"testing"

	"github.com/rpctl/rpctl/candidates"
	"github.com/rpctl/rpctl/internal/mysqlproxy"
	"github.com/rpctl/rpctl/storage/placementdb"
)

// maxCandidatesRoundTrips is issue 35's bound for one `rpctl candidates`
// query on the database backend, the connection and its handshake
// included: to a database 0.5–1 ms away every round trip is as long as
// the search.
const maxCandidatesRoundTrips = 8

// TestCandidatesRoundTrips (issue 35) runs `rpctl candidates` on the two
// data sets of Placement's perf jobs through the counting proxy, as asked
// (both are below placementdb.NarrowFrom, so the read is whole) and with
// --explain (the whole model always), and on a cloud of NarrowFrom
// providers with a request few trees meet, whose read is narrowed (one
// statement more), and fails above the bound: counts, not times. The
// answers are compared with placement-api's by the difftest suites.
func TestCandidatesRoundTrips(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: two 1,000-tree data sets")
	}
	ctx := context.Background()
	bin := buildRpctl(t)
	// The exact counts, besides the bound: the connection's two (its
	// handshake), the server's kind (probeGalera), the providers with what
	// narrowing needs, and the rest of the read, whose script also ends
	// the transaction (storage.LastRead); a narrowed read has its
	// conditions' statement between the last two.
	const whole = 5
	for _, s := range []struct {
		name     string
		input    *candidates.ModelInput
		query    string
		narrowed bool
	}{
		{"placement-perfload", candidates.PerfloadInput(1000), candidates.PerfloadQuery, false},
		{"placement-nested-perfload", candidates.NestedPerfloadInput(1000), candidates.NestedPerfloadQuery, false},
		{"narrowed", candidates.ScaleInput(placementdb.NarrowFrom), "resources=VCPU:2,MEMORY_MB:4096&member_of=" + candidates.SyntheticUUID(5, 3), true},
	} {
		t.Run(s.name, func(t *testing.T) {
			my, db := newPlacementDB(t)
			if err := placementdb.WriteSyntheticPlacement(ctx, db, s.input); err != nil {
				t.Fatal(err)
			}
			// The read `rpctl candidates` makes is narrowed, or not, as
			// the case says.
			req, err := candidates.ParseQuery(s.query, candidates.MaxMicroversion)
			if err != nil {
				t.Fatal(err)
			}
			m, err := placementdb.LoadPlacementFor(ctx, openReadScripts(t, my), req)
			if err != nil {
				t.Fatal(err)
			}
			if narrowed := m.NumProviders() < len(s.input.Providers); narrowed != s.narrowed {
				t.Fatalf("read %d of %d providers, want narrowed %v", m.NumProviders(), len(s.input.Providers), s.narrowed)
			}
			proxy, err := mysqlproxy.Start(my.Addr())
			if err != nil {
				t.Fatal(err)
			}
			defer proxy.Close()
			url := my.Through(proxy.Addr()).URL
			for _, extra := range [][]string{nil, {"--explain"}} {
				proxy.Reset()
				_, out := runRpctl(t, bin, append([]string{"--placement-db", url, "candidates", "-f", "json", "--query", s.query}, extra...)...)
				got := proxy.Reset()
				if got.Unreadable != 0 || got.Connections == 0 {
					t.Fatalf("%v: %+v: the proxy did not see the run", extra, got)
				}
				if len(out) == 0 {
					t.Fatalf("%v: no answer", extra)
				}
				t.Logf("%s %v: %d round trips (%d connections, %d commands)", s.name, extra, got.RoundTrips, got.Connections, got.Commands)
				if got.RoundTrips > maxCandidatesRoundTrips {
					t.Errorf("%v: %d round trips, want at most %d", extra, got.RoundTrips, maxCandidatesRoundTrips)
				}
				want := int64(whole)
				if s.narrowed && extra == nil {
					want++
				}
				if got.RoundTrips != want {
					t.Errorf("%v: %d round trips, want %d", extra, got.RoundTrips, want)
				}
			}
		})
	}
}
