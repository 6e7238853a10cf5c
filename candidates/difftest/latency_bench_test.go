package difftest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rpctl/rpctl/candidates"
	"github.com/rpctl/rpctl/internal/mysqlproxy"
	"github.com/rpctl/rpctl/internal/testdb"
	"github.com/rpctl/rpctl/storage/placementdb"
)

// latencyRow is one data set at one added round trip.
type latencyRow struct {
	set, delay          string
	placement, rpctl    time.Duration
	placementRT, rpctRT float64
	proxyRT             time.Duration // a SELECT 1 through the proxy
}

// BenchmarkCandidatesLatency is issue 35's latency rows for candidates: the
// data sets of Placement's perf jobs in MariaDB behind a proxy that adds 0
// or 0.5 ms per round trip, answered by the real placement-api (its
// database connection through the proxy: the same distance) and by the
// `rpctl candidates` process, with the round trips per query each made,
// counted by the proxy. placement-api keeps its connections open between
// requests; every rpctl process opens its own, and pays for it.
func BenchmarkCandidatesLatency(b *testing.B) {
	benchGuard(b)
	ctx := context.Background()
	bin := buildRpctl(b)
	delays := []struct {
		name   string
		oneWay time.Duration
	}{{"0ms", 0}, {"0.5ms", 250 * time.Microsecond}}
	var rows []latencyRow
	for _, s := range []perfSet{
		{"placement-perfload (1,000 roots)", candidates.PerfloadInput(1000), candidates.PerfloadQuery},
		{"placement-nested-perfload (1,000 x 7)", candidates.NestedPerfloadInput(1000), candidates.NestedPerfloadQuery},
	} {
		my, db := newPlacementDB(b)
		if err := placementdb.WriteSyntheticPlacement(ctx, db, s.input); err != nil {
			b.Fatal(err)
		}
		db.Close()
		proxy, err := mysqlproxy.Start(my.Addr())
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { proxy.Close() })
		via := my.Through(proxy.Addr())
		url, viaDSN := via.URL, via.DSN
		base := testdb.PlacementAPI(b, url)
		path := "/allocation_candidates?" + s.query
		get := func() {
			if status, body := testdb.PlacementGet(b, base, path, "1.39"); status != 200 {
				b.Fatalf("placement-api: %d %s", status, body)
			}
		}
		rpctl := func() {
			runRpctl(b, bin, "--placement-db", url, "candidates", "-f", "json", "--query", s.query)
		}
		for _, d := range delays {
			proxy.SetDelay(d.oneWay)
			proxyRT := testdb.QueryRoundTrip(b, viaDSN, 201)
			get() // warm-up: caches, connections, first-request sync
			rpctl()
			// Alternated (timePairs), each one's round trips counted apart.
			const runs = pairs
			var plTrips, rpTrips int64
			proxy.Reset()
			pl, rp := timePairs(runs, func() {
				get()
				plTrips += proxy.Reset().RoundTrips
			}, func() {
				rpctl()
				rpTrips += proxy.Reset().RoundTrips
			})
			plRT, rpRT := float64(plTrips)/runs, float64(rpTrips)/runs
			rows = append(rows, latencyRow{set: s.name, delay: d.name, placement: pl.mean, rpctl: rp.mean, placementRT: plRT, rpctRT: rpRT, proxyRT: proxyRT})
		}
		proxy.SetDelay(0)
	}
	fmt.Printf("\n%-40s %7s %10s %14s %10s %12s %10s %8s\n", "candidates through a proxy", "added", "SELECT 1", "placement-api", "(trips)", "rpctl e2e", "(trips)", "e2e x")
	for _, r := range rows {
		fmt.Printf("%-40s %7s %10v %14v %10.1f %12v %10.1f %7.1fx\n", r.set, r.delay, r.proxyRT.Round(time.Microsecond), r.placement.Round(100*time.Microsecond), r.placementRT,
			r.rpctl.Round(100*time.Microsecond), r.rpctRT, float64(r.placement)/float64(r.rpctl))
	}
	fmt.Printf("(placement-api and rpctl processes: means of the middle 80%% of %d each, alternated, after a warm-up (see times); trips = round trips per query through the proxy)\n", pairs)
	for b.Loop() {
	}
	for _, r := range rows {
		key := strings.Fields(r.set)[0] + "-" + r.delay
		b.ReportMetric(r.placement.Seconds()*1e3, key+"-placement-ms")
		b.ReportMetric(r.rpctl.Seconds()*1e3, key+"-rpctl-ms")
		b.ReportMetric(r.placementRT, key+"-placement-rt")
		b.ReportMetric(r.rpctRT, key+"-rpctl-rt")
		b.ReportMetric(r.proxyRT.Seconds()*1e3, key+"-proxy-rt-ms")
	}
}
