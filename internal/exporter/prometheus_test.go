package exporter

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rpctl/rpctl/internal/testdb"
)

// need finds a program of the prometheus package, or skips (fails under
// make test).
func need(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if testdb.Required() {
			t.Fatalf("%s not found: apt-get install prometheus", name)
		}
		t.Skipf("%s not found", name)
	}
	return p
}

// buildRpctl builds rpctl and rpctl-exporter side by side, as make build
// does, so that rpctl exporter runs the way an operator's does.
func buildRpctl(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command("go", "build", "-o", dir, "./cmd/rpctl", "./cmd/rpctl-exporter")
	cmd.Dir = testdb.RepoRoot()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return filepath.Join(dir, "rpctl")
}

// promQuery is one instant query through Prometheus' HTTP API: the
// samples' label sets and values.
type promSample struct {
	Metric map[string]string
	Value  float64
}

func promQuery(t *testing.T, base, q string) []promSample {
	t.Helper()
	resp, err := http.Get(base + "/api/v1/query?query=" + url.QueryEscape(q))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Status string
		Data   struct {
			Result []struct {
				Metric map[string]string
				Value  [2]any
			}
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || body.Status != "success" {
		t.Fatalf("query %s: %v (status %q)", q, err, body.Status)
	}
	var out []promSample
	for _, r := range body.Data.Result {
		v, err := strconv.ParseFloat(r.Value[1].(string), 64)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, promSample{r.Metric, v})
	}
	return out
}

// waitFor polls until ok holds; the test's own deadline (go test -timeout)
// bounds it, nothing here times the exporter.
func waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for !ok() {
		if dl, has := t.Deadline(); has && time.Until(dl) < 5*time.Second {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func run(t testing.TB, bin string, args ...string) string {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		// The database URLs hold the test server's password: left out.
		var shown []string
		for _, a := range args {
			if !strings.Contains(a, "://") {
				shown = append(shown, a)
			}
		}
		t.Fatalf("rpctl %s: %v\n%s", strings.Join(shown, " "), err, errOut.String())
	}
	return out.String()
}

func scrape(t testing.TB, addr string) string {
	t.Helper()
	_, body := get(t, "http://"+addr+"/metrics")
	return body
}

// sampleCloud makes a sample cloud of nodes hosts on three fresh MariaDB
// databases, migrated, and returns the flags that name them.
func sampleCloud(t testing.TB, rpctl string, nodes int, seed int) []string {
	t.Helper()
	cell, api, placement := testdb.NewMySQL(t), testdb.NewMySQL(t), testdb.NewMySQL(t)
	dbs := []string{"--cell-db", cell.URL, "--api-db", api.URL, "--placement-db", placement.URL}
	run(t, rpctl, append(dbs, "init")...)
	run(t, rpctl, append(dbs, "sample-cloud", "--nodes", strconv.Itoa(nodes), "--seed", strconv.Itoa(seed))...)
	// The sample cloud has bad rows on purpose: migrate may skip them (exit 2).
	if out, err := exec.Command(rpctl, append(dbs, "migrate", "all")...).CombinedOutput(); err != nil && !strings.Contains(string(out), "skipped") {
		t.Fatalf("migrate all: %v\n%.2000s", err, out)
	}
	return dbs
}

// value reads an unlabelled sample of a scrape.
func value(body, name string) float64 {
	for _, l := range strings.Split(body, "\n") {
		if rest, ok := strings.CutPrefix(l, name+" "); ok {
			v, _ := strconv.ParseFloat(rest, 64)
			return v
		}
	}
	return -1
}

// TestRealPrometheusScrapesExporter: Debian's Prometheus scrapes rpctl
// exporter, which reads a sample cloud on MariaDB. PromQL gives the same
// per-flavor totals as rpctl capacity -f json; an orphan planted with
// rpctl claims create shows as 1 in the orphan gauge from the first
// collection that starts after it; promtool check metrics is clean on the
// exporter's page; SIGTERM stops the exporter with exit 0.
func TestRealPrometheusScrapesExporter(t *testing.T) {
	prometheus := need(t, "prometheus")
	promtool := need(t, "promtool")
	rpctl := buildRpctl(t)
	dbs := sampleCloud(t, rpctl, 12, 2)
	with := func(args ...string) []string { return append(append([]string{}, dbs...), args...) }

	var capJSON struct {
		Total map[string]int64 `json:"total"`
	}
	if err := json.Unmarshal([]byte(run(t, rpctl, with("-f", "json", "capacity")...)), &capJSON); err != nil {
		t.Fatal(err)
	}

	exAddr := fmt.Sprintf("127.0.0.1:%d", testdb.FreePort(t))
	var exErr bytes.Buffer
	ex := exec.Command(rpctl, with("exporter", "--listen", exAddr, "--interval", "1s", "--expiry", "0s")...)
	ex.Stderr = &exErr
	if err := ex.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- ex.Wait() }()
	stopped := false
	defer func() {
		if !stopped {
			ex.Process.Kill()
			<-exited
		}
	}()

	dir := t.TempDir()
	conf := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: rpctl
    static_configs:
      - targets: ['%s']
`, exAddr)), 0o600); err != nil {
		t.Fatal(err)
	}
	promAddr := fmt.Sprintf("127.0.0.1:%d", testdb.FreePort(t))
	var promLog bytes.Buffer
	prom := exec.Command(prometheus, "--config.file="+conf, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+promAddr, "--log.level=warn")
	prom.Stdout, prom.Stderr = &promLog, &promLog
	if err := prom.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		prom.Process.Signal(syscall.SIGTERM)
		prom.Wait()
		if t.Failed() && stopped {
			t.Logf("prometheus:\n%s\nexporter:\n%s", promLog.String(), exErr.String())
		}
	}()
	base := "http://" + promAddr
	ready := func() bool {
		resp, err := http.Get(base + "/-/ready")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	}
	waitFor(t, "Prometheus to start", ready)
	// The first successful scrape of a page with the capacity on it.
	waitFor(t, "the first successful scrape", func() bool {
		up := promQuery(t, base, `up{job="rpctl"} == 1 and on() count(openstack_free_capacity_by_flavor_total) > 0`)
		return len(up) == 1
	})

	got := map[string]float64{}
	for _, s := range promQuery(t, base, `openstack_free_capacity_by_flavor_total`) {
		got[s.Metric["flavor_name"]] = s.Value
	}
	if len(got) != len(capJSON.Total) || len(got) == 0 {
		t.Errorf("PromQL has %d flavors, capacity -f json %d", len(got), len(capJSON.Total))
	}
	for fl, n := range capJSON.Total {
		if got[fl] != float64(n) {
			t.Errorf("%s: PromQL %v, capacity -f json %d", fl, got[fl], n)
		}
	}
	for _, s := range promQuery(t, base, `rpctl_capacity_free_slots{mode="independent"}`) {
		if want := capJSON.Total[s.Metric["flavor_name"]]; s.Value != float64(want) {
			t.Errorf("rpctl_capacity_free_slots %s: %v, want %d", s.Metric["flavor_name"], s.Value, want)
		}
	}
	if o := promQuery(t, base, `rpctl_claims_orphans`); len(o) != 1 || o[0].Value != 0 {
		t.Fatalf("orphans before the plant: %v", o)
	}

	// Plant an orphan: an allocation whose consumer is no instance.
	const orphan = "0d0d0d0d-0000-4000-8000-00000000000f"
	run(t, rpctl, with("claims", "create", "--consumer", orphan,
		"--project", "p-orphan", "--user", "u", "--resources", "VCPU:1,MEMORY_MB:64")...)
	planted := value(scrape(t, exAddr), "rpctl_exporter_collections_total")
	// Collection planted+1 may have started before the plant; planted+2
	// started after it. Wait until Prometheus has scraped that one.
	next := planted + 2
	waitFor(t, "Prometheus to scrape the collection after the plant", func() bool {
		return len(promQuery(t, base, fmt.Sprintf(`rpctl_exporter_collections_total >= %v`, next))) == 1
	})
	if o := promQuery(t, base, `rpctl_claims_orphans`); len(o) != 1 || o[0].Value != 1 {
		t.Errorf("rpctl_claims_orphans after the plant: %v, want 1", o)
	}
	byClass := map[string]float64{}
	for _, s := range promQuery(t, base, `rpctl_claims_orphaned_allocations`) {
		byClass[s.Metric["resource_class"]] += s.Value
	}
	if byClass["VCPU"] != 1 || byClass["MEMORY_MB"] != 1 || len(byClass) != 2 {
		t.Errorf("rpctl_claims_orphaned_allocations by class: %v, want VCPU 1 and MEMORY_MB 1", byClass)
	}

	page := scrape(t, exAddr)
	check := exec.Command(promtool, "check", "metrics")
	check.Stdin = strings.NewReader(page)
	if out, err := check.CombinedOutput(); err != nil || len(out) > 0 {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
	for _, want := range []string{"rpctl_exporter_last_success_timestamp_seconds", "rpctl_exporter_collect_duration_seconds",
		`rpctl_exporter_collect_errors{part="audit"} 0`, `rpctl_status_check_result{check="Inventory Drift",tool="rpctl"}`} {
		if !strings.Contains(page, want) {
			t.Errorf("the page has no %s", want)
		}
	}

	if err := ex.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err := <-exited
	stopped = true
	if err != nil {
		t.Errorf("exporter after SIGTERM: %v (want exit 0)\n%s", err, exErr.String())
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := (&net.Dialer{}).DialContext(ctx, "tcp", exAddr); err == nil {
		t.Error("the exporter still listens after SIGTERM")
	}
}
