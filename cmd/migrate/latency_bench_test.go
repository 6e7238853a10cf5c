package migrate_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rpctl/rpctl/cmd/internal/cmdtest"
	"github.com/rpctl/rpctl/internal/mysqlproxy"
	"github.com/rpctl/rpctl/internal/testdb"
)

// roundTrip is the smallest median round trip (SELECT 1) measured through
// the proxy at each one-way delay during the benchmark.
var roundTrip = map[time.Duration]time.Duration{}

// benchDelays are the latency rows of issue 35: loopback, and a database
// 0.5 ms away (a Galera VIP behind HAProxy), the proxy delaying each
// direction by half of it.
var benchDelays = []struct {
	name     string
	oneWay   time.Duration
	roundTrp string
}{{"0ms", 0, "0 ms"}, {"0.5ms", 250 * time.Microsecond, "0.5 ms"}}

// proxiedCloud is a sample cloud whose databases (cells, API, Placement)
// are reached through one counting, delaying proxy: the cell mappings name
// the proxy too, so every connection a tool opens crosses it.
type proxiedCloud struct {
	proxy                 *mysqlproxy.Proxy
	apiDSN                string // the API database's go-sql-driver DSN through the proxy
	cells                 []*testdb.MySQL
	api, placement        *testdb.MySQL
	cellURLs              []string
	apiURL, placementURL  string
	nodes, instances, agg int
}

// newProxiedCloud writes a sample cloud of nodes compute nodes over cells
// cell databases through a new proxy. With reference, the databases get Nova's and Placement's own schemas
// first (their db sync, cell0 included), which Nova's tools need: rpctl's
// schemas hold only the tables rpctl reads and writes.
func newProxiedCloud(b *testing.B, bin string, cells, nodes int, reference bool) *proxiedCloud {
	b.Helper()
	c := &proxiedCloud{api: testdb.NewMySQL(b), placement: testdb.NewMySQL(b)}
	for range cells {
		c.cells = append(c.cells, testdb.NewMySQL(b))
	}
	if reference {
		script := filepath.Join(testdb.RepoRoot(), "scripts", "reference-dbsync.sh")
		prefix := c.api.URL[:strings.LastIndex(c.api.URL, "/")]
		for _, cell := range []string{c.cells[0].Name, c.cells[0].Name + "_cell0"} {
			if _, err := c.api.Admin.Exec("CREATE DATABASE IF NOT EXISTS `" + cell + "` CHARACTER SET utf8mb3"); err != nil {
				b.Fatal(err)
			}
			if out, err := exec.Command(script, prefix, cell, c.api.Name, c.placement.Name).CombinedOutput(); err != nil {
				b.Fatalf("reference db sync: %v\n%s", err, out)
			}
		}
	}
	var err error
	if c.proxy, err = mysqlproxy.Start(c.api.Addr()); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.proxy.Close() })
	via := func(m *testdb.MySQL) string { return m.Through(c.proxy.Addr()).URL }
	c.apiURL, c.placementURL = via(c.api), via(c.placement)
	c.apiDSN = c.api.Through(c.proxy.Addr()).DSN
	args := []string{"--api-db", c.apiURL, "--placement-db", c.placementURL}
	for _, m := range c.cells {
		c.cellURLs = append(c.cellURLs, via(m))
		args = append(args, "--cell-db", via(m))
	}
	cmdtest.MustRun(b, bin, append(args, "sample-cloud", "--nodes", strconv.Itoa(nodes), "--seed", "1")...)
	for _, m := range c.cells {
		c.nodes += countRows(b, m, "SELECT COUNT(*) FROM DB.compute_nodes WHERE deleted = 0")
		c.instances += countRows(b, m, "SELECT COUNT(*) FROM DB.instances WHERE deleted = 0")
	}
	c.agg = countRows(b, c.api, "SELECT COUNT(*) FROM DB.aggregate_hosts")
	return c
}

func countRows(b *testing.B, m *testdb.MySQL, q string) int {
	b.Helper()
	var n int
	if err := m.Admin.QueryRow(strings.ReplaceAll(q, "DB.", "`"+m.Name+"`.")).Scan(&n); err != nil {
		b.Fatalf("%s: %v", q, err)
	}
	return n
}

// timed runs f with the proxy delaying by d and returns its wall time and
// the round trips it made through the proxy. Before, it measures what a
// round trip through the proxy costs at that delay (roundTrip[d]).
func (c *proxiedCloud) timed(b *testing.B, d time.Duration, f func()) (time.Duration, mysqlproxy.Counts) {
	c.proxy.SetDelay(d)
	measured := testdb.QueryRoundTrip(b, c.apiDSN, 201)
	if old, ok := roundTrip[d]; !ok || measured < old {
		roundTrip[d] = measured
	}
	c.proxy.Reset()
	start := time.Now()
	f()
	took := time.Since(start)
	got := c.proxy.Reset()
	c.proxy.SetDelay(0)
	return took, got
}

// BenchmarkMigrateAllLatency is issue 35's latency rows: `rpctl migrate
// all` as a process on a 100,000-node sample cloud in 4 cells, its
// databases behind a proxy at 0 and 0.5 ms round trip, with the round
// trips counted; and on a 500-node sample beside Nova's own tools for the
// same work — nova-manage db online_data_migrations, placement
// sync_aggregates and placement heal_allocations, in an already imported
// nova-manage, with the real placement-api reaching its database through
// the same proxy. Both sides start from providers made by `rpctl migrate
// inventory` (nova-compute's job, which no Nova tool does), untimed.
// RPCTL_BENCH_ALL_N sets the big cloud's size to try the benchmark out.
func BenchmarkMigrateAllLatency(b *testing.B) {
	if os.Getenv("RPCTL_BENCH") == "" {
		b.Skip("set RPCTL_BENCH=1 (make bench): needs MariaDB, placement-api, python3-nova and many minutes")
	}
	testdb.RequirePython(b, "nova.cmd.manage", "pymysql")
	bigN := 100000
	if v, err := strconv.Atoi(os.Getenv("RPCTL_BENCH_ALL_N")); err == nil && v > 0 {
		bigN = v
	}
	// Nova's tools take about 100 round trips per node (heal_allocations a
	// GET and a PUT per instance through the placement-api): minutes at
	// 0.5 ms on a small sample already. RPCTL_BENCH_ALL_SAMPLE sets it.
	sampleN := 500
	if v, err := strconv.Atoi(os.Getenv("RPCTL_BENCH_ALL_SAMPLE")); err == nil && v > 0 {
		sampleN = v
	}
	bin := testdb.BuildRpctl(b)
	type row struct {
		wall  time.Duration
		trips mysqlproxy.Counts
	}
	big := map[string]row{}
	novaRows, rpctlRows := map[string]row{}, map[string]row{}
	var bigNodes, sampleNodes, sampleInstances int
	for range b.N {
		for _, d := range benchDelays {
			c := newProxiedCloud(b, bin, 4, bigN, false)
			bigNodes = c.nodes
			args := append([]string{"--api-db", c.apiURL, "--placement-db", c.placementURL}, "migrate", "all")
			var out string
			wall, trips := c.timed(b, d.oneWay, func() { out = cmdtest.MustRun(b, bin, args...) })
			big[d.name] = row{wall, trips}
			b.Logf("migrate all, %d nodes at %s: %v, %d round trips (%d connections)\n%s", c.nodes, d.roundTrp, wall.Round(time.Millisecond), trips.RoundTrips, trips.Connections, out)
		}
		for _, d := range benchDelays {
			// Nova's side.
			c := newProxiedCloud(b, bin, 1, sampleN, true)
			sampleNodes, sampleInstances = c.nodes, c.instances
			cmdtest.MustRun(b, bin, "--api-db", c.apiURL, "--placement-db", c.placementURL, "migrate", "inventory")
			side := &cmdtest.HealSide{Cell: c.cells[0], API: c.api, Placement: c.placement}
			side.URL = testdb.PlacementAPI(b, c.placementURL)
			conf := filepath.Join(b.TempDir(), "nova.conf")
			if err := os.WriteFile(conf, fmt.Appendf(nil, "[DEFAULT]\ntransport_url = fake://\n[database]\nconnection = %s\n[api_database]\nconnection = %s\n"+
				"[placement]\nauth_type = admin_token\nendpoint = %s\ntoken = admin\n", c.cellURLs[0], c.apiURL, side.URL), 0o600); err != nil {
				b.Fatal(err)
			}
			nm := cmdtest.StartNovaManage(b)
			if _, code := nm.Run(b, "--config-file", conf, "placement", "heal_allocations", "--max-count", "0"); code != 127 {
				b.Fatalf("nova-manage warm-up: exit %d", code)
			}
			wall, trips := c.timed(b, d.oneWay, func() {
				for _, step := range [][]string{{"db", "online_data_migrations"}, {"placement", "sync_aggregates"}, {"placement", "heal_allocations", "--skip-port-allocations"}} {
					out, code := nm.Run(b, append([]string{"--config-file", conf}, step...)...)
					if code != 0 {
						b.Fatalf("nova-manage %v: exit %d\n%s", step, code, out)
					}
				}
			})
			novaRows[d.name] = row{wall, trips}
			// rpctl's side, on the same cloud (the same seed).
			r := newProxiedCloud(b, bin, 1, sampleN, true)
			cmdtest.MustRun(b, bin, "--api-db", r.apiURL, "--placement-db", r.placementURL, "migrate", "inventory")
			wall, trips = r.timed(b, d.oneWay, func() {
				cmdtest.MustRun(b, bin, "--api-db", r.apiURL, "--placement-db", r.placementURL, "-f", "json", "migrate", "all")
			})
			rpctlRows[d.name] = row{wall, trips}
		}
	}
	per := func(c mysqlproxy.Counts, n int) float64 { return float64(c.RoundTrips) / float64(n) }
	fmt.Printf("\n%-58s %12s %12s %10s %14s\n", "migrate all through a proxy (round trip added)", "0 ms", "0.5 ms", "slower x", "round trips")
	fmt.Printf("%-58s %12v %12v %9.2fx %7d (%.3f/node)\n", fmt.Sprintf("rpctl migrate all, %d nodes in 4 cells", bigNodes),
		big["0ms"].wall.Round(time.Millisecond), big["0.5ms"].wall.Round(time.Millisecond), big["0.5ms"].wall.Seconds()/big["0ms"].wall.Seconds(),
		big["0.5ms"].trips.RoundTrips, per(big["0.5ms"].trips, bigNodes))
	fmt.Printf("%-58s %12v %12v %9.2fx %7d (%.3f/node)\n", fmt.Sprintf("Nova's tools, %d nodes, %d instances", sampleNodes, sampleInstances),
		novaRows["0ms"].wall.Round(time.Millisecond), novaRows["0.5ms"].wall.Round(time.Millisecond), novaRows["0.5ms"].wall.Seconds()/novaRows["0ms"].wall.Seconds(),
		novaRows["0.5ms"].trips.RoundTrips, per(novaRows["0.5ms"].trips, sampleNodes))
	fmt.Printf("%-58s %12v %12v %9.2fx %7d (%.3f/node)\n", fmt.Sprintf("rpctl migrate all, the same %d nodes", sampleNodes),
		rpctlRows["0ms"].wall.Round(time.Millisecond), rpctlRows["0.5ms"].wall.Round(time.Millisecond), rpctlRows["0.5ms"].wall.Seconds()/rpctlRows["0ms"].wall.Seconds(),
		rpctlRows["0.5ms"].trips.RoundTrips, per(rpctlRows["0.5ms"].trips, sampleNodes))
	fmt.Printf("(a round trip through the proxy, SELECT 1 median: %v at 0 ms added, %v at 0.5 ms added)\n",
		roundTrip[0].Round(time.Microsecond), roundTrip[benchDelays[1].oneWay].Round(time.Microsecond))
	fmt.Println("(one run each; Nova's tools: online_data_migrations + sync_aggregates + heal_allocations in one imported nova-manage,")
	fmt.Println(" with the placement-api's database behind the same proxy; round trips are every client's, counted by the proxy)")
	b.ReportMetric(big["0ms"].wall.Seconds(), "rpctl-big-0ms-s")
	b.ReportMetric(big["0.5ms"].wall.Seconds(), "rpctl-big-0.5ms-s")
	b.ReportMetric(big["0.5ms"].wall.Seconds()/big["0ms"].wall.Seconds(), "rpctl-big-slower-x")
	b.ReportMetric(per(big["0.5ms"].trips, bigNodes), "rpctl-big-rt/node")
	b.ReportMetric(float64(bigNodes), "big-nodes")
	b.ReportMetric(float64(sampleNodes), "sample-nodes")
	b.ReportMetric(roundTrip[0].Seconds()*1e3, "proxy-rt-0ms-ms")
	b.ReportMetric(roundTrip[benchDelays[1].oneWay].Seconds()*1e3, "proxy-rt-0.5ms-ms")
	for _, d := range benchDelays {
		b.ReportMetric(novaRows[d.name].wall.Seconds(), "nova-sample-"+d.name+"-s")
		b.ReportMetric(rpctlRows[d.name].wall.Seconds(), "rpctl-sample-"+d.name+"-s")
	}
	b.ReportMetric(per(novaRows["0.5ms"].trips, sampleNodes), "nova-sample-rt/node")
	b.ReportMetric(per(rpctlRows["0.5ms"].trips, sampleNodes), "rpctl-sample-rt/node")
}
