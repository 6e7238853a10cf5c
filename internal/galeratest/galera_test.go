package galeratest

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/rpctl/rpctl/internal/testdb"
	"github.com/rpctl/rpctl/inventory"
	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/placementdb"
	"github.com/rpctl/rpctl/storage/schema"
)

// The sample cloud of these tests: seed 6 with 400 nodes is one whose
// single clean `migrate all` exits 0 and leaves status at 0 (other seeds
// and sizes add instances whose flavors do not fit, which are skipped rows
// by design and would hide a race's failures behind an expected exit 2).
const (
	sampleNodes = "400"
	sampleSeed  = "6"
)

// cloud is one set of Nova and Placement databases on the cluster, with
// its URLs through each node.
type cloud struct {
	cell, api, placement [3]string
	names                [3]string
}

func newCloud(t *testing.T, g *testdb.Galera, prefix string) cloud {
	t.Helper()
	c := cloud{names: [3]string{prefix + "_cell1", prefix + "_api", prefix + "_placement"}}
	c.cell = g.NewDatabase(t, c.names[0])
	c.api = g.NewDatabase(t, c.names[1])
	c.placement = g.NewDatabase(t, c.names[2])
	return c
}

// flags are the database flags of c through node i.
func (c cloud) flags(i int, args ...string) []string {
	return append([]string{"--cell-db", c.cell[i], "--api-db", c.api[i], "--placement-db", c.placement[i]}, args...)
}

type result struct {
	out, errOut string
	code        int
}

func run(bin string, args ...string) result {
	cmd := exec.Command(bin, args...)
	cmd.Env = append(cmd.Environ(), "RPCTL_DEFAULT_CONFIG_FILES=")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		code = -1
		errOut.WriteString(err.Error())
	}
	return result{out.String(), errOut.String(), code}
}

func mustRun(t *testing.T, bin string, args ...string) result {
	t.Helper()
	r := run(bin, args...)
	if r.code != 0 {
		t.Fatalf("rpctl %s: exit %d\n%s%s", strings.Join(args, " "), r.code, r.out, r.errOut)
	}
	return r
}

// completed reads a `-f json migrate all` summary: migration -> completed.
func completed(t *testing.T, r result) map[string]int {
	t.Helper()
	var rows []struct {
		Migration string `json:"migration"`
		Completed int    `json:"completed"`
	}
	if err := json.Unmarshal([]byte(r.out), &rows); err != nil {
		t.Fatalf("migrate summary: %v\n%s%s", err, r.out, r.errOut)
	}
	m := map[string]int{}
	for _, row := range rows {
		m[row.Migration] = row.Completed
	}
	return m
}

// state is the content of a cloud's Placement database and cell that a
// migration decides, without what differs between two correct runs (ids,
// generated compute node uuids, timestamps, generations): providers by
// name with their tree, inventories, traits, aggregates, consumers with
// project and user, allocations by consumer and provider name, and which
// compute nodes have a uuid.
func state(t *testing.T, g *testdb.Galera, node int, c cloud) string {
	t.Helper()
	p := g.Open(t, node, c.names[2])
	cell := g.Open(t, node, c.names[0])
	var b strings.Builder
	dump := func(db *sql.DB, title, q string) {
		rows, err := db.Query(q)
		if err != nil {
			t.Fatalf("%s: %v", title, err)
		}
		defer rows.Close()
		cols, _ := rows.Columns()
		fmt.Fprintf(&b, "== %s\n", title)
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		for rows.Next() {
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			for i, v := range vals {
				if i > 0 {
					b.WriteByte('|')
				}
				b.WriteString(v.String)
			}
			b.WriteByte('\n')
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
	}
	dump(p, "providers", `SELECT rp.name, COALESCE(par.name, ''), root.name FROM resource_providers rp
		LEFT JOIN resource_providers par ON par.id = rp.parent_provider_id JOIN resource_providers root ON root.id = rp.root_provider_id ORDER BY rp.name`)
	dump(p, "inventories", `SELECT rp.name, rc.name, i.total, i.reserved, i.min_unit, i.max_unit, i.step_size, i.allocation_ratio
		FROM inventories i JOIN resource_providers rp ON rp.id = i.resource_provider_id JOIN resource_classes rc ON rc.id = i.resource_class_id ORDER BY rp.name, rc.name`)
	dump(p, "traits", `SELECT rp.name, t.name FROM resource_provider_traits x JOIN resource_providers rp ON rp.id = x.resource_provider_id
		JOIN traits t ON t.id = x.trait_id ORDER BY rp.name, t.name`)
	dump(p, "aggregates", `SELECT rp.name, a.uuid FROM resource_provider_aggregates x JOIN resource_providers rp ON rp.id = x.resource_provider_id
		JOIN placement_aggregates a ON a.id = x.aggregate_id ORDER BY rp.name, a.uuid`)
	dump(p, "consumers", `SELECT c.uuid, pr.external_id, u.external_id FROM consumers c JOIN projects pr ON pr.id = c.project_id
		JOIN users u ON u.id = c.user_id ORDER BY c.uuid`)
	dump(p, "allocations", `SELECT a.consumer_id, rp.name, rc.name, a.used FROM allocations a JOIN resource_providers rp ON rp.id = a.resource_provider_id
		JOIN resource_classes rc ON rc.id = a.resource_class_id ORDER BY a.consumer_id, rp.name, rc.name`)
	dump(cell, "compute nodes", `SELECT id, hypervisor_hostname, uuid IS NOT NULL, cpu_allocation_ratio, ram_allocation_ratio, disk_allocation_ratio
		FROM compute_nodes ORDER BY id`)
	return b.String()
}

// firstDiff is the first line where two states differ, for the failure
// message (states are thousands of lines).
func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range min(len(al), len(bl)) {
		if al[i] != bl[i] {
			return fmt.Sprintf("line %d: %q vs %q", i+1, al[i], bl[i])
		}
	}
	return fmt.Sprintf("%d vs %d lines", len(al), len(bl))
}

// apiConsumers are the consumers the placement-api writes while claims
// heal runs: fixed uuids, so that both clouds get the same ones.
const apiConsumers = 40

func apiConsumer(i int) string { return fmt.Sprintf("00000000-0000-4000-8000-%012d", i) }

// placementWrites PUTs one allocation per apiConsumer through the real
// placement-api at base, each on a provider it looks up by name, and
// returns what went wrong (a 409, and a 500 on a deadlock, are sent again).
func placementWrites(base string, providers []string) error {
	do := func(method, path, body string) (int, []byte, error) {
		req, err := http.NewRequest(method, base+path, strings.NewReader(body))
		if err != nil {
			return 0, nil, err
		}
		req.Header.Set("X-Auth-Token", "admin")
		req.Header.Set("OpenStack-API-Version", "placement 1.28")
		req.Header.Set("Accept", "application/json")
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, nil, err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return resp.StatusCode, b, err
	}
	for i := range apiConsumers {
		name := providers[i%len(providers)]
		code, b, err := do("GET", "/resource_providers?name="+name, "")
		if err != nil || code != 200 {
			return fmt.Errorf("GET provider %s: %d %v %s", name, code, err, b)
		}
		var list struct {
			ResourceProviders []struct{ UUID string } `json:"resource_providers"`
		}
		if err := json.Unmarshal(b, &list); err != nil || len(list.ResourceProviders) != 1 {
			return fmt.Errorf("provider %s: %v %s", name, err, b)
		}
		body := fmt.Sprintf(`{"allocations": {%q: {"resources": {"VCPU": 1, "MEMORY_MB": 64}}}, "project_id": "api-project", "user_id": "api-user", "consumer_generation": null}`,
			list.ResourceProviders[0].UUID)
		for try := 0; ; try++ {
			code, b, err = do("PUT", "/allocations/"+apiConsumer(i), body)
			if err == nil && code == 204 {
				break
			}
			// A 500 naming a deadlock (1213: on Galera, a certification
			// failure too) is a transaction placement-api rolled back, as
			// rpctl's placementclient treats it: the consumer generation
			// (null: a new consumer) makes a repeat safe, since a write
			// already applied would be refused with a 409.
			deadlock := code == 500 && bytes.Contains(b, []byte("1213"))
			if (code != 409 && !deadlock) || try == 20 {
				return fmt.Errorf("PUT /allocations/%s: %d %v %s", apiConsumer(i), code, err, b)
			}
		}
	}
	return nil
}

// unheal deletes the allocations of the first n instances (by uuid) so
// that claims heal has work to do.
func unheal(t *testing.T, g *testdb.Galera, c cloud, n int) {
	t.Helper()
	p := g.Open(t, 0, c.names[2])
	if _, err := p.Exec(`DELETE a FROM allocations a JOIN (SELECT uuid FROM consumers WHERE uuid NOT LIKE '00000000-%' ORDER BY uuid LIMIT ?) c ON c.uuid = a.consumer_id`, n); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Exec(`DELETE FROM consumers WHERE uuid NOT IN (SELECT DISTINCT consumer_id FROM allocations)`); err != nil {
		t.Fatal(err)
	}
}

func providerNames(t *testing.T, g *testdb.Galera, c cloud) []string {
	t.Helper()
	var names []string
	rows, err := g.Open(t, 0, c.names[2]).Query(`SELECT name FROM resource_providers WHERE parent_provider_id IS NULL ORDER BY name LIMIT 8`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var n string
		rows.Scan(&n)
		names = append(names, n)
	}
	return names
}

// TestGaleraConcurrentMigrations: two `migrate all` runs through two nodes
// at once, then `claims heal` through the third while the real
// placement-api writes allocations through the second. The end state
// equals that of one clean run (same steps, one at a time), the two
// summaries add up to the clean run's (each counts only its own writes),
// and status exits 0 through every node.
func TestGaleraConcurrentMigrations(t *testing.T) {
	began := time.Now()
	g := testdb.NewGalera(t)
	bin := testdb.BuildRpctl(t)
	t.Logf("cluster up and rpctl built in %v", time.Since(began).Round(time.Millisecond))

	ref, race := newCloud(t, g, "ref"), newCloud(t, g, "race")
	for _, c := range []cloud{ref, race} {
		mustRun(t, bin, c.flags(0, "init")...)
		mustRun(t, bin, c.flags(0, "sample-cloud", "--nodes", sampleNodes, "--seed", sampleSeed)...)
	}

	// The clean run, one step at a time through node 1.
	clean := completed(t, mustRun(t, bin, ref.flags(0, "-f", "json", "migrate", "all")...))
	unheal(t, g, ref, 25)
	refAPI := testdb.PlacementAPI(t, ref.placement[1])
	if err := placementWrites(refAPI, providerNames(t, g, ref)); err != nil {
		t.Fatal(err)
	}
	refHeal := run(bin, ref.flags(0, "claims", "heal")...)
	if refHeal.code != 0 {
		t.Fatalf("clean claims heal: exit %d\n%s%s", refHeal.code, refHeal.out, refHeal.errOut)
	}

	// The race.
	t0 := time.Now()
	var a, b result
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); a = run(bin, race.flags(0, "-f", "json", "migrate", "all")...) }()
	go func() { defer wg.Done(); b = run(bin, race.flags(1, "-f", "json", "migrate", "all")...) }()
	wg.Wait()
	t.Logf("two migrate all at once: %v", time.Since(t0).Round(time.Millisecond))
	for i, r := range []result{a, b} {
		if r.code != 0 {
			t.Errorf("migrate all through node %d: exit %d\n%s%s", i+1, r.code, r.out, r.errOut)
		}
	}
	ca, cb := completed(t, a), completed(t, b)
	t.Logf("completed: node 1 %v, node 2 %v, clean run %v", ca, cb, clean)
	for m, n := range clean {
		if ca[m]+cb[m] != n {
			t.Errorf("%s: the runs report %d + %d completed, the clean run %d: a run counted another's writes\nnode 1: %s\nnode 2: %s", m, ca[m], cb[m], n, a.errOut, b.errOut)
		}
	}
	unheal(t, g, race, 25)
	raceAPI := testdb.PlacementAPI(t, race.placement[1])
	names := providerNames(t, g, race)
	var heal result
	var apiErr error
	wg.Add(2)
	go func() { defer wg.Done(); heal = run(bin, race.flags(2, "claims", "heal")...) }()
	go func() { defer wg.Done(); apiErr = placementWrites(raceAPI, names) }()
	wg.Wait()
	if apiErr != nil {
		t.Errorf("placement-api writes during claims heal: %v", apiErr)
	}
	if heal.code != refHeal.code {
		t.Errorf("claims heal through node 3: exit %d, the clean run's %d\n%s%s", heal.code, refHeal.code, heal.out, heal.errOut)
	}

	want := state(t, g, 0, ref)
	for node := range 3 {
		if got := state(t, g, node, race); got != want {
			t.Errorf("end state read through node %d differs from the clean run's: %s", node+1, firstDiff(got, want))
		}
		if r := run(bin, race.flags(node, "status", "--check", "rpctl", "--check", "placement-status")...); r.code != 0 {
			t.Errorf("status through node %d: exit %d\n%s%s", node+1, r.code, r.out, r.errOut)
		}
	}

	// A node that is not Synced: status through it warns (and only
	// through it).
	if _, err := g.Open(t, 1, "").Exec("SET GLOBAL wsrep_desync = ON"); err != nil {
		t.Fatal(err)
	}
	r := run(bin, race.flags(1, "status", "--check", "Database Cluster")...)
	if _, err := g.Open(t, 1, "").Exec("SET GLOBAL wsrep_desync = OFF"); err != nil {
		t.Fatal(err)
	}
	if r.code != 1 || !strings.Contains(r.out, "not Synced") {
		t.Errorf("status through a desynced node: exit %d, want 1 naming the state\n%s%s", r.code, r.out, r.errOut)
	}
	t.Logf("whole test: %v", time.Since(began).Round(time.Millisecond))
}

// openNode opens node i's database of urls through rpctl's storage (closed
// when the test ends), which must recognise it as a Galera node.
func openNode(t *testing.T, urls [3]string, i int) *storage.DB {
	t.Helper()
	db := testdb.Open(t, urls[i], storage.RolePlacement)
	if !db.Galera {
		t.Fatalf("node %d not detected as a Galera node", i+1)
	}
	return db
}

// TestGaleraNoLostUpdates is the lost-update proof across nodes: three
// writers, one per node, each making 300 read-modify-write edits (what
// `inventory set --amend` runs) of one provider's inventory; every edit
// reported applied is in the final value.
func TestGaleraNoLostUpdates(t *testing.T) {
	const writers, edits = 3, 300
	began := time.Now()
	g := testdb.NewGalera(t)
	urls := g.NewDatabase(t, "placement")
	ctx := context.Background()
	stores := make([]*placementdb.Store, writers)
	for i := range writers {
		db := openNode(t, urls, i)
		if i == 0 {
			if _, err := schema.Init(ctx, db, schema.PartPlacement); err != nil {
				t.Fatal(err)
			}
		}
		stores[i] = placementdb.New(db)
	}
	p, err := stores[0].CreateProvider(ctx, inventory.ProviderSpec{Name: "contended"})
	if err != nil {
		t.Fatal(err)
	}
	start := map[string]inventory.Inventory{
		"MEMORY_MB": {Total: 1 << 30, Reserved: 0, MinUnit: 1, MaxUnit: 1 << 20, StepSize: 1, AllocationRatio: 1.5},
	}
	if _, err := stores[0].ReplaceInventories(ctx, p.UUID, 0, start); err != nil {
		t.Fatal(err)
	}
	addOne := func(cur map[string]inventory.Inventory) (map[string]inventory.Inventory, error) {
		e := inventory.FieldEdit{Class: "MEMORY_MB", Field: "reserved", Int: cur["MEMORY_MB"].Reserved + 1}
		return inventory.Apply(cur, []inventory.FieldEdit{e}, true)
	}
	changed := make([]int, writers)
	conflicts := make([]int, writers)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ed := inventory.Editor{Store: stores[w]}
			for range edits {
				r := ed.EditInventories(ctx, p, addOne)
				switch r.Outcome {
				case inventory.Changed:
					changed[w]++
				case inventory.Conflict:
					conflicts[w]++
				default:
					t.Errorf("writer %d: outcome %s: %v", w+1, r.Outcome, r.Err)
				}
			}
		}()
	}
	wg.Wait()
	total, lost := 0, 0
	for w := range writers {
		total += changed[w]
	}
	for node := range 3 {
		_, got, err := stores[node].Inventories(ctx, p.UUID)
		if err != nil {
			t.Fatal(err)
		}
		if r := got["MEMORY_MB"].Reserved; r != int64(total) {
			lost = total - int(r)
			t.Errorf("read through node %d: reserved = %d, but %d edits were reported applied: %d lost", node+1, r, total, lost)
		}
	}
	t.Logf("%d writers (one per node) x %d edits in %v: %d applied %v, %d reported as conflicts %v, %d lost",
		writers, edits, time.Since(began).Round(time.Millisecond), total, changed, sum(conflicts), conflicts, lost)
}

func sum(xs []int) int {
	n := 0
	for _, x := range xs {
		n += x
	}
	return n
}

// TestGaleraNodeKilledMidMigration kills node 1 with SIGKILL while a
// `migrate all` runs through it, once the migration's providers show in
// the database (read through node 2): the run fails naming the lost
// database connection; a re-run through node 2 converges to the clean
// end state; node 1, restarted, rejoins by IST (no full state transfer).
func TestGaleraNodeKilledMidMigration(t *testing.T) {
	began := time.Now()
	g := testdb.NewGalera(t)
	bin := testdb.BuildRpctl(t)
	ref, c := newCloud(t, g, "ref"), newCloud(t, g, "kill")
	for _, x := range []cloud{ref, c} {
		mustRun(t, bin, x.flags(0, "init")...)
		mustRun(t, bin, x.flags(0, "sample-cloud", "--nodes", sampleNodes, "--seed", sampleSeed)...)
	}
	mustRun(t, bin, ref.flags(1, "migrate", "all")...)

	cmd := exec.Command(bin, c.flags(0, "migrate", "all", "--batch-size", "50")...)
	cmd.Env = append(cmd.Environ(), "RPCTL_DEFAULT_CONFIG_FILES=")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	// The kill point comes from progress seen in the database: the first
	// providers the run wrote, read through another node.
	watch := g.Open(t, 1, c.names[2])
	killed := false
	for !killed {
		select {
		case err := <-done:
			t.Fatalf("migrate all ended (%v) before any provider showed through node 2; nothing to kill\n%s%s", err, out.String(), errOut.String())
		default:
		}
		var n int
		if err := watch.QueryRow(`SELECT COUNT(*) FROM resource_providers`).Scan(&n); err == nil && n > 0 {
			g.Kill(t, 0)
			killed = true
		}
	}
	err := <-done
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	}
	cfg, perr := mysql.ParseDSN(g.Prefix[0])
	if perr != nil {
		t.Fatal(perr)
	}
	port := cfg.Addr
	if code == 0 || !strings.Contains(errOut.String(), port) {
		t.Errorf("migrate all through the killed node: exit %d, want a failure naming the database at %s\n%s%s", code, port, out.String(), errOut.String())
	}
	t.Logf("killed run: exit %d: %s", code, grep(errOut.String(), port))

	// Re-run through node 2 once the survivors have evicted node 1 (their
	// cluster size says 2): until then Galera holds their commits and
	// causal reads waiting for the dead member, and a read that waits
	// past repl.causal_read_timeout fails.
	conn, err := g.Open(t, 1, "").Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(context.Background(), "SET SESSION wsrep_sync_wait = 0"); err != nil {
		t.Fatal(err)
	}
	// Wait for Galera's own outcome, the eviction, polled; the context is
	// only a hang guard for a cluster that never evicts (no duration is
	// asserted: a loaded machine evicts later).
	wait, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	for size := ""; size != "2"; {
		var name string
		conn.QueryRowContext(wait, "SHOW STATUS LIKE 'wsrep_cluster_size'").Scan(&name, &size)
		select {
		case <-wait.Done():
			t.Fatalf("node 2 still sees a cluster of %q: node 1 was never evicted (hang guard)", size)
		case <-time.After(50 * time.Millisecond):
		}
	}
	// It converges.
	if r := run(bin, c.flags(1, "migrate", "all")...); r.code != 0 {
		t.Errorf("re-run through node 2: exit %d\n%s%s", r.code, r.out, r.errOut)
	}
	if got, want := state(t, g, 1, c), state(t, g, 1, ref); got != want {
		t.Errorf("after the re-run, the end state differs from a clean run's: %s", firstDiff(got, want))
	}

	// The killed node rejoins by IST and sees the re-run's writes.
	log := g.Restart(t, 0)
	// The rsync SST script runs on every join; it says which transfer it
	// made ("rsync IST completed" vs "rsync SST completed").
	if !strings.Contains(log, "IST received") || !strings.Contains(log, "rsync IST completed") || strings.Contains(log, "rsync SST completed") {
		t.Errorf("node 1 did not rejoin by IST:\n%s", grep(log, "IST", "SST"))
	}
	if got, want := state(t, g, 0, c), state(t, g, 1, ref); got != want {
		t.Errorf("through the rejoined node 1 the end state differs: %s", firstDiff(got, want))
	}
	if r := run(bin, c.flags(0, "status", "--check", "rpctl", "--check", "placement-status")...); r.code != 0 {
		t.Errorf("status through the rejoined node 1: exit %d\n%s%s", r.code, r.out, r.errOut)
	}
	t.Logf("whole test: %v", time.Since(began).Round(time.Millisecond))
}

func grep(s string, words ...string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		for _, w := range words {
			if strings.Contains(l, w) {
				out = append(out, l)
				break
			}
		}
	}
	return strings.Join(out, "\n")
}
