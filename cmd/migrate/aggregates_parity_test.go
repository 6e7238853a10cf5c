package migrate_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/cmd/internal/cmdtest"
	"github.com/rpctl/rpctl/internal/placementtest"
	"github.com/rpctl/rpctl/internal/testdb"
	"github.com/rpctl/rpctl/storage"
)

// aggSide is one copy of a sample cloud: cell and API databases and a
// Placement with the real placement-api on it.
type aggSide struct {
	cell, api *testdb.MySQL
	pl        placementtest.Placement
	conf      string // nova.conf pointing at all three
}

// newAggSide writes the same sample cloud (seed 11) into fresh databases and
// migrates its inventory, so that both copies hold the same providers.
func newAggSide(t *testing.T) *aggSide {
	t.Helper()
	return newAggSideOf(t, nil)
}

// newAggSideOf is newAggSide of chroot's release (nil: Zed, the host's):
// rpctl init and sample-cloud --release, that release's Placement db sync
// and placement-api.
func newAggSideOf(t *testing.T, chroot *testdb.Chroot) *aggSide {
	t.Helper()
	s := &aggSide{cell: testdb.NewMySQL(t), api: testdb.NewMySQL(t)}
	var rel []string // --release, for another release than Zed (the default)
	if chroot != nil {
		rel = []string{"--release", chroot.Release}
		my := testdb.NewMySQL(t)
		chroot.DBSync(t, nil, nil, my)
		s.pl = placementtest.Placement{URL: my.URL, Base: chroot.PlacementAPI(t, my.URL, "")}
	} else {
		s.pl = placementtest.New(t)
	}
	for _, args := range [][]string{
		append([]string{"--cell-db", s.cell.URL, "--api-db", s.api.URL, "init"}, rel...),
		append([]string{"--cell-db", s.cell.URL, "--api-db", s.api.URL, "sample-cloud", "--nodes", "24", "--seed", "11"}, rel...),
	} {
		if _, errOut, code := cmdtest.Rpctl(t, args...); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
	}
	// Generated uuids would differ between the copies; Nova's messages name
	// them.
	s.cellExec(t, "UPDATE compute_nodes SET uuid = CONCAT('00000000-0000-4000-8000-', LPAD(id, 12, '0')) WHERE uuid IS NULL")
	if _, errOut, code := cmdtest.Rpctl(t, append([]string{"--api-db", s.api.URL, "--placement-db", s.pl.URL, "migrate", "inventory"}, rel...)...); code != 0 {
		t.Fatalf("migrate inventory: exit %d: %s", code, errOut)
	}
	dir := t.TempDir()
	if chroot != nil {
		dir = chroot.TempDir(t) // where the chroot sees it
	}
	s.conf = filepath.Join(dir, "nova.conf")
	body := fmt.Sprintf("[DEFAULT]\ntransport_url = fake://\n[database]\nconnection = %s\n[api_database]\nconnection = %s\n[placement]\nauth_type = admin_token\nendpoint = %s\ntoken = admin\n",
		s.cell.URL, s.api.URL, s.pl.Base)
	if err := os.WriteFile(s.conf, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return s
}

func (s *aggSide) cellExec(t *testing.T, q string, args ...any) {
	t.Helper()
	if _, err := testdb.Open(t, s.cell.DSN, storage.RoleCell).Exec(q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

func (s *aggSide) apiExec(t *testing.T, q string, args ...any) {
	t.Helper()
	if _, err := testdb.Open(t, s.api.DSN, storage.RoleAPI).Exec(q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// aggregateHosts lists the hosts of the Nova aggregate of that name.
func (s *aggSide) aggregateHosts(t *testing.T, name string) []string {
	t.Helper()
	rows, err := testdb.Open(t, s.api.DSN, storage.RoleAPI).Query("SELECT h.host FROM aggregate_hosts h JOIN aggregates a ON a.id = h.aggregate_id WHERE a.name = ? ORDER BY h.host", name)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var h string
		if err := rows.Scan(&h); err != nil {
			t.Fatal(err)
		}
		out = append(out, h)
	}
	return out
}

// rpctlDB runs rpctl with Nova's databases and the Placement database.
func (s *aggSide) rpctlDB(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	return cmdtest.Rpctl(t, append([]string{"--api-db", s.api.URL, "--placement-db", s.pl.URL}, args...)...)
}

// rpctlAPI runs rpctl with Nova's databases and the placement-api.
func (s *aggSide) rpctlAPI(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	return cmdtest.Rpctl(t, append([]string{"--api-db", s.api.URL, "--os-endpoint", s.pl.Base, "--os-token", "admin"}, args...)...)
}

// memberships is every provider's generation and aggregates as the real
// Placement-api answers, by provider name.
func (s *aggSide) memberships(t *testing.T) map[string]string {
	t.Helper()
	code, body := testdb.PlacementGet(t, s.pl.Base, "/resource_providers", "1.19")
	if code != 200 {
		t.Fatalf("GET /resource_providers: %d %s", code, body)
	}
	var list struct {
		Providers []struct{ UUID, Name string } `json:"resource_providers"`
	}
	json.Unmarshal(body, &list)
	out := map[string]string{}
	for _, p := range list.Providers {
		code, body := testdb.PlacementGet(t, s.pl.Base, "/resource_providers/"+p.UUID+"/aggregates", "1.19")
		var v struct {
			Aggregates []string `json:"aggregates"`
			Generation int64    `json:"resource_provider_generation"`
		}
		json.Unmarshal(body, &v)
		sort.Strings(v.Aggregates)
		out[p.Name] = fmt.Sprintf("%d gen=%d %v", code, v.Generation, v.Aggregates)
	}
	return out
}

// novaLines keeps sync_aggregates' own sentences (Nova's log lines and
// warnings are not part of the contract).
func novaLines(out string) []string {
	var keep []string
	for _, l := range strings.Split(out, "\n") {
		for _, p := range []string{"Filling in", "Processing ", "Successfully added", "Failed ", "Unable to find", "The following hosts", "Unexpected number", "The compute node"} {
			if strings.HasPrefix(l, p) {
				keep = append(keep, l)
				break
			}
		}
	}
	return keep
}

func diffMaps(t *testing.T, what string, want, got map[string]string) {
	t.Helper()
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s %s: nova %s, rpctl %s", what, k, w, got[k])
		}
	}
	for k, g := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s %s: only rpctl has it: %s", what, k, g)
		}
	}
}

// TestMigrateAggregatesParityWithNova runs Nova 26's own `nova-manage
// Placement sync_aggregates --verbose` on one copy of a sample cloud and
// `rpctl migrate aggregates --verbose` through the real placement-api on
// another and on the Placement database of a third, step by step: a host whose compute node has no provider (Nova
// stops half-way), then hosts without a host mapping and without a compute
// node, then a clean run, then a rerun. Every step must leave the same
// memberships and generations on every provider, exit with the same code
// and print the same sentences.
func TestMigrateAggregatesParityWithNova(t *testing.T) {
	testdb.RequirePython(t, "nova.cmd.manage", "pymysql")
	aggregatesParity(t, "nova-manage", [3]*aggSide{newAggSide(t), newAggSide(t), newAggSide(t)}, cmdtest.StartNovaManage(t))
}

// TestMigrateAggregatesParityWithNova31 is TestMigrateAggregatesParityWithNova
// against 2025.1's own code (issue 33): Nova 31's nova-manage placement
// sync_aggregates in the release chroot, Placement 13's placement-api and
// db sync, databases made by rpctl init and sample-cloud --release 2025.1.
func TestMigrateAggregatesParityWithNova31(t *testing.T) {
	chroot := testdb.ReleaseChroot(t, "2025.1")
	sides := [3]*aggSide{newAggSideOf(t, chroot), newAggSideOf(t, chroot), newAggSideOf(t, chroot)}
	// The steps script where the chroot sees it (the host's /tmp).
	script := filepath.Join(chroot.TempDir(t), "nova_manage_steps.py")
	b, err := os.ReadFile(cmdtest.NovaManageSteps())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(script, b, 0o644); err != nil {
		t.Fatal(err)
	}
	aggregatesParity(t, "nova-manage (Nova 31)", sides, cmdtest.StartNovaManageCmd(t, chroot.Command("python3", script)))
}

// aggregatesParity runs the sync_aggregates steps with nm on sides[0], rpctl
// through the API on sides[1] and on the database of sides[2].
func aggregatesParity(t *testing.T, novaName string, sides [3]*aggSide, nm interface {
	Run(testing.TB, ...string) (string, int)
}) {
	t.Helper()

	// The provider of a host in an early aggregate goes away on both.
	var goneHost, goneUUID string
	for _, s := range sides {
		var host, uuid string
		row := s.cell.Admin.QueryRow("SELECT c.host, c.uuid FROM `" + s.cell.Name + "`.compute_nodes c JOIN `" + s.api.Name +
			"`.aggregate_hosts h ON h.host = c.host JOIN `" + s.api.Name + "`.aggregates a ON a.id = h.aggregate_id WHERE c.deleted = 0 AND a.name = 'az2' ORDER BY h.id LIMIT 1 OFFSET 2")
		if err := row.Scan(&host, &uuid); err != nil {
			t.Fatal(err)
		}
		if code, body := testdb.PlacementDo(t, "DELETE", s.pl.Base, "/resource_providers/"+uuid, "1.19", ""); code != 204 {
			t.Fatalf("delete provider %s: %d %s", uuid, code, body)
		}
		goneHost, goneUUID = host, uuid
	}

	steps := []struct {
		name  string
		setup func(s *aggSide)
		want  int
		must  string // a sentence the output must hold
	}{
		{name: "compute node without a provider", want: 2, must: "Failed to get aggregates for resource provider with UUID " + goneUUID},
		{name: "unmapped host and host without a compute node", setup: func(s *aggSide) {
			// The host whose provider is gone leaves its aggregates; a
			// mapped host without a compute node and an unmapped host join.
			s.apiExec(t, "DELETE FROM aggregate_hosts WHERE host = ?", goneHost)
			s.apiExec(t, "INSERT INTO host_mappings (created_at, cell_id, host) SELECT NOW(), id, 'ghost-1' FROM cell_mappings WHERE name <> 'cell0' LIMIT 1")
			s.apiExec(t, "INSERT INTO aggregate_hosts (created_at, host, aggregate_id) SELECT NOW(), 'ghost-1', id FROM aggregates WHERE name = 'ssd'")
			s.apiExec(t, "INSERT INTO aggregate_hosts (created_at, host, aggregate_id) SELECT NOW(), 'unmapped-1', id FROM aggregates WHERE name = 'az1'")
		}, want: 5, must: "Unable to find matching compute_nodes record entries in the cell database for the following hosts; does the nova-compute service on each host need to be restarted? Missing: ghost-1"},
		{name: "clean", setup: func(s *aggSide) {
			s.apiExec(t, "DELETE FROM aggregate_hosts WHERE host IN ('ghost-1', 'unmapped-1')")
		}, want: 0},
		{name: "rerun changes nothing", want: 0},
	}
	for _, st := range steps {
		for _, s := range sides {
			if st.setup != nil {
				st.setup(s)
			}
		}
		novaOut, novaCode := nm.Run(t, "--config-file", sides[0].conf, "placement", "sync_aggregates", "--verbose")
		rOut, rErr, rCode := sides[1].rpctlAPI(t, "migrate", "aggregates", "--verbose")
		if novaCode != st.want || rCode != st.want {
			t.Errorf("%s: exit codes %s %d, rpctl %d, want %d", st.name, novaName, novaCode, rCode, st.want)
		}
		dOut, dErr, dCode := sides[2].rpctlDB(t, "migrate", "aggregates", "--verbose")
		if dCode != st.want {
			t.Errorf("%s: rpctl on the database exited %d, want %d", st.name, dCode, st.want)
		}
		nl, rl, dl := novaLines(novaOut), novaLines(rOut+rErr), novaLines(dOut+dErr)
		if len(nl) < 3 {
			t.Errorf("%s: %s printed too little to compare:\n%s", st.name, novaName, novaOut)
		}
		if !slices.Equal(nl, rl) {
			t.Errorf("%s: output differs\n%s:\n%s\nrpctl:\n%s", st.name, novaName, strings.Join(nl, "\n"), strings.Join(rl, "\n"))
		}
		if !slices.Equal(nl, dl) {
			t.Errorf("%s: output on the database differs\n%s:\n%s\nrpctl:\n%s", st.name, novaName, strings.Join(nl, "\n"), strings.Join(dl, "\n"))
		}
		if st.must != "" && !slices.Contains(rl, st.must) {
			t.Errorf("%s: rpctl did not say %q:\n%s", st.name, st.must, strings.Join(rl, "\n"))
		}
		if st.name == "unmapped host and host without a compute node" {
			// Nova's code 5 wins over 4, but both lists are printed.
			want := `The following hosts were found in nova host aggregates but no host mappings were found in the nova API DB. Run "nova-manage cell_v2 discover_hosts" and then retry. Missing: unmapped-1`
			if !slices.Contains(rl, want) {
				t.Errorf("%s: rpctl did not list the unmapped host:\n%s", st.name, strings.Join(rl, "\n"))
			}
		}
		want := sides[0].memberships(t)
		diffMaps(t, st.name+": provider", want, sides[1].memberships(t))
		diffMaps(t, st.name+": provider (database)", want, sides[2].memberships(t))
		if t.Failed() {
			t.Logf("%s (exit %d):\n%s\nrpctl (exit %d):\n%s%s", novaName, novaCode, novaOut, rCode, rOut, rErr)
			return
		}
	}
}

// TestMigrateAggregatesPrune plants stray memberships after a sync — a
// Nova aggregate's uuid on a host Nova does not put in it, an aggregate
// Nova does not know on a compute node — beside a sharing provider's
// Aggregate that must stay, and requires --prune --dry-run to list exactly
// the two strays and change nothing, --prune to remove exactly them (one
// write each), and every other provider to stay as it was. capacity
// --aggregate and candidates --member-of then see the synced aggregates.
func TestMigrateAggregatesPrune(t *testing.T) {
	s := newAggSide(t)
	if out, errOut, code := s.rpctlAPI(t, "migrate", "aggregates"); code != 0 {
		t.Fatalf("sync: exit %d\n%s%s", code, out, errOut)
	}
	aggUUID := func(name string) string {
		var u string
		if err := testdb.Open(t, s.api.DSN, storage.RoleAPI).QueryRow("SELECT uuid FROM aggregates WHERE name = ?", name).Scan(&u); err != nil {
			t.Fatal(err)
		}
		return u
	}
	gpu, az1 := aggUUID("gpu"), aggUUID("az1")
	var hostA, rpA, hostB, rpB string
	db := testdb.Open(t, s.cell.DSN, storage.RoleCell)
	rows, err := db.Query("SELECT host, uuid FROM compute_nodes WHERE deleted = 0 ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	inGPU := map[string]bool{}
	for _, h := range s.aggregateHosts(t, "gpu") {
		inGPU[h] = true
	}
	for rows.Next() {
		var h, u string
		rows.Scan(&h, &u)
		switch {
		case hostA == "" && !inGPU[h]:
			hostA, rpA = h, u
		case hostA != "" && hostB == "":
			hostB, rpB = h, u
		}
	}
	rows.Close()
	const unknown, shared = "5eed0000-0000-4000-8000-00000000dead", "5eed0000-0000-4000-8000-0000000005ad"
	put := func(rp string, add ...string) {
		t.Helper()
		code, body := testdb.PlacementGet(t, s.pl.Base, "/resource_providers/"+rp+"/aggregates", "1.19")
		var v struct {
			Aggregates []string `json:"aggregates"`
			Generation int64    `json:"resource_provider_generation"`
		}
		if code != 200 || json.Unmarshal(body, &v) != nil {
			t.Fatalf("GET aggregates of %s: %d %s", rp, code, body)
		}
		b, _ := json.Marshal(map[string]any{"aggregates": append(v.Aggregates, add...), "resource_provider_generation": v.Generation})
		if code, body := testdb.PlacementDo(t, "PUT", s.pl.Base, "/resource_providers/"+rp+"/aggregates", "1.19", string(b)); code != 200 {
			t.Fatalf("PUT aggregates of %s: %d %s", rp, code, body)
		}
	}
	// A sharing provider's aggregate with a compute node in it: kept.
	if code, body := testdb.PlacementDo(t, "POST", s.pl.Base, "/resource_providers", "1.19", `{"name": "ceph-pool", "uuid": "5eed0000-0000-4000-8000-0000000000c0"}`); code != 200 && code != 201 {
		t.Fatalf("create sharing provider: %d %s", code, body)
	}
	put("5eed0000-0000-4000-8000-0000000000c0", shared)
	put(rpB, shared)
	put(rpA, gpu, unknown)
	before := s.memberships(t)

	out, errOut, code := s.rpctlAPI(t, "migrate", "aggregates", "--prune", "--dry-run")
	wantLines := []string{
		fmt.Sprintf("Would remove host (%s) and provider (%s) from aggregate (%s): Nova's aggregate gpu does not have the host.", hostA, rpA, gpu),
		fmt.Sprintf("Would remove host (%s) and provider (%s) from aggregate (%s): no Nova aggregate has this uuid.", hostA, rpA, unknown),
	}
	var got []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "Would") {
			got = append(got, l)
		}
	}
	if code != 0 || !slices.Equal(got, wantLines) {
		t.Errorf("--prune --dry-run: exit %d, listed\n%s\nwant\n%s\n%s", code, strings.Join(got, "\n"), strings.Join(wantLines, "\n"), errOut)
	}
	diffMaps(t, "after --dry-run: provider", before, s.memberships(t))

	// The removal itself on the database (the same Store contract).
	out, errOut, code = s.rpctlDB(t, "migrate", "aggregates", "--prune")
	if code != 0 || strings.Count(out, "Removed host") != 2 {
		t.Errorf("--prune: exit %d\n%s%s", code, out, errOut)
	}
	after := s.memberships(t)
	var nameA string
	for name := range before {
		if strings.Contains(before[name], unknown) {
			nameA = name
		}
	}
	if nameA == "" {
		t.Fatalf("no provider holds the planted aggregate:\n%v", before)
	}
	for name, b := range before {
		if name == nameA {
			continue
		}
		if after[name] != b {
			t.Errorf("provider %s changed: %s -> %s", name, b, after[name])
		}
	}
	// The planted provider lost exactly the two strays, in one write.
	var gen int64
	fmt.Sscanf(before[nameA], "200 gen=%d", &gen)
	list := strings.Fields(strings.Trim(before[nameA][strings.Index(before[nameA], "["):], "[]"))
	list = slices.DeleteFunc(list, func(a string) bool { return a == gpu || a == unknown })
	if want := fmt.Sprintf("200 gen=%d %v", gen+1, list); after[nameA] != want {
		t.Errorf("provider %s after --prune: %s, want %s", nameA, after[nameA], want)
	}
	if out, errOut, code := s.rpctlAPI(t, "migrate", "aggregates", "--prune", "--dry-run"); code != 0 || strings.Contains(out, "Would") {
		t.Errorf("after --prune, a dry run still finds work: exit %d\n%s%s", code, out, errOut)
	}

	// capacity and candidates see the synced aggregates.
	azHosts := s.aggregateHosts(t, "az1")
	out, errOut, code = s.rpctlDB(t, "-f", "json", "capacity", "--flavor", "m1.small", "--aggregate", "az1")
	var capOut cmdtest.CapacityOut
	if err := json.Unmarshal([]byte(out), &capOut); code != 0 || err != nil {
		t.Fatalf("capacity --aggregate az1: exit %d %v\n%s%s", code, err, out, errOut)
	}
	// capacity names hosts by hypervisor_hostname; compare providers.
	nodeOf := map[string]string{}
	nrows, err := testdb.Open(t, s.cell.DSN, storage.RoleCell).Query("SELECT host, uuid FROM compute_nodes WHERE deleted = 0")
	if err != nil {
		t.Fatal(err)
	}
	for nrows.Next() {
		var h, u string
		nrows.Scan(&h, &u)
		nodeOf[h] = u
	}
	nrows.Close()
	var azRPs, capRPs []string
	for _, h := range azHosts {
		azRPs = append(azRPs, nodeOf[h])
	}
	for _, h := range capOut.Hosts {
		capRPs = append(capRPs, h.ProviderUUID)
	}
	sort.Strings(azRPs)
	sort.Strings(capRPs)
	if len(azRPs) == 0 || !slices.Equal(capRPs, azRPs) {
		t.Errorf("capacity --aggregate az1 providers %v, Nova's az1 hosts' %v", capRPs, azRPs)
	}
	out, errOut, code = s.rpctlDB(t, "-f", "json", "candidates", "--resources", "VCPU:1", "--member-of", az1)
	var cands struct {
		Summaries map[string]any `json:"provider_summaries"`
	}
	if err := json.Unmarshal([]byte(out), &cands); code != 0 || err != nil {
		t.Fatalf("candidates --member-of az1: exit %d %v\n%s%s", code, err, out, errOut)
	}
	var candRPs []string
	for u := range cands.Summaries {
		candRPs = append(candRPs, u)
	}
	sort.Strings(candRPs)
	// Every az1 host has VCPU to spare (instances hold no allocations yet).
	if !slices.Equal(candRPs, azRPs) {
		t.Errorf("candidates --member-of az1: %v, Nova's az1 hosts' providers %v", candRPs, azRPs)
	}
}
