package claims_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/rpctl/rpctl/cmd/internal/cmdtest"
	"github.com/rpctl/rpctl/internal/nova"
	"github.com/rpctl/rpctl/internal/testdb"
	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/apidb"
	"github.com/rpctl/rpctl/storage/celldb"
)

// claimsCopy is one copy of a small cloud: Nova's cell and API databases
// made by Nova's own db sync, a Placement database made by Placement's, and
// the real placement-api serving it.
type claimsCopy struct {
	Cell, API, Placement *testdb.MySQL
	URL                  string // placement-api
	Conf                 string // nova.conf for nova-manage
	// chroot, when set, is the release whose own code made and serves the
	// copy and runs nova-manage (issue 33's 2025.1 leg); nil is Zed, the
	// host's Nova and Placement.
	chroot *testdb.Chroot
}

// Fixture uuids.
const (
	cn1UUID   = "c0000000-0000-4000-8000-000000000001"
	cn2UUID   = "c0000000-0000-4000-8000-000000000002"
	child1    = "c0000000-0000-4000-8000-0000000000c1" // VGPU child of cn1
	ghostUUID = "c0000000-0000-4000-8000-0000000000f0" // provider of a compute node that is gone
	shareUUID = "c0000000-0000-4000-8000-0000000000a0" // sharing DISK_GB provider
	cell1UUID = "ce110000-0000-4000-8000-000000000001"
)

// newClaimsCopyOf makes the databases with Nova's and Placement's own db
// sync when nova-manage is to run on them (Nova reads tables rpctl's schema
// does not have, such as instance_system_metadata), else with rpctl init;
// of chroot's release (its db sync, rpctl init --release, its
// placement-api), or Zed's, the host's, when chroot is nil.
func newClaimsCopyOf(t *testing.T, forNova bool, chroot *testdb.Chroot) *claimsCopy {
	t.Helper()
	c := &claimsCopy{Cell: testdb.NewMySQL(t), API: testdb.NewMySQL(t), Placement: testdb.NewMySQL(t), chroot: chroot}
	switch {
	case chroot != nil && forNova:
		chroot.DBSync(t, c.Cell, c.API, c.Placement)
	case chroot != nil:
		if _, errOut, code := cmdtest.Rpctl(t, "--cell-db", c.Cell.URL, "--api-db", c.API.URL, "--placement-db", c.Placement.URL, "init", "--release", chroot.Release); code != 0 {
			t.Fatalf("rpctl init --release %s: %s", chroot.Release, errOut)
		}
	case forNova:
		prefix := c.Cell.URL[:strings.LastIndex(c.Cell.URL, "/")]
		script := filepath.Join(testdb.RepoRoot(), "scripts", "reference-dbsync.sh")
		if out, err := exec.Command(script, prefix, c.Cell.Name, c.API.Name, c.Placement.Name).CombinedOutput(); err != nil {
			t.Fatalf("reference db sync: %v\n%s", err, out)
		}
	default:
		if _, errOut, code := cmdtest.Rpctl(t, "--cell-db", c.Cell.URL, "--api-db", c.API.URL, "--placement-db", c.Placement.URL, "init"); code != 0 {
			t.Fatalf("rpctl init: %s", errOut)
		}
	}
	if chroot != nil {
		c.URL = chroot.PlacementAPI(t, c.Placement.URL, "")
	} else {
		c.URL = testdb.PlacementAPI(t, c.Placement.URL)
	}
	// auth_type = none would send the token "notused", which Placement's
	// noauth2 takes for a user without the admin role (403 on every call);
	// admin_token sends "admin", noauth2's admin.
	dir := t.TempDir()
	if chroot != nil {
		dir = chroot.TempDir(t) // where the chroot sees it
	}
	c.Conf = filepath.Join(dir, "nova.conf")
	conf := fmt.Sprintf("[DEFAULT]\ntransport_url = fake://\n[database]\nconnection = %s\n[api_database]\nconnection = %s\n"+
		"[placement]\nauth_type = admin_token\ntoken = admin\nendpoint = %s\nendpoint_override = %s\n", c.Cell.URL, c.API.URL, c.URL, c.URL)
	if err := os.WriteFile(c.Conf, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	return c
}

// rpctlArgs point rpctl at the copy's cell and Placement databases.
func (c *claimsCopy) rpctlArgs(args ...string) []string {
	return append([]string{"--cell-db", c.Cell.URL, "--placement-db", c.Placement.URL}, args...)
}

func (c *claimsCopy) do(t *testing.T, method, path, body string, want int) []byte {
	t.Helper()
	code, out := testdb.PlacementDo(t, method, c.URL, path, "1.39", body)
	if code != want {
		t.Fatalf("%s %s: %d %s", method, path, code, out)
	}
	return out
}

// claimsConsumer is an allocation the fixture writes: resources per provider.
type claimsConsumer struct {
	uuid   string
	allocs map[string]map[string]int
}

func (c *claimsCopy) put(t *testing.T, cons claimsConsumer) {
	t.Helper()
	allocs := map[string]any{}
	for rp, res := range cons.allocs {
		allocs[rp] = map[string]any{"resources": res}
	}
	body, _ := json.Marshal(map[string]any{"allocations": allocs, "project_id": "p1", "user_id": "u1",
		"consumer_generation": nil, "consumer_type": "INSTANCE"})
	c.do(t, "PUT", "/allocations/"+cons.uuid, string(body), 204)
}

func ptrS(s string) *string { return &s }

// seedProviders creates the fixture's providers and inventories through the
// API: two compute nodes (cn1 with a VGPU child), the provider of a compute
// node that no longer exists, and a sharing DISK_GB provider.
func (c *claimsCopy) seedProviders(t *testing.T) {
	t.Helper()
	c.do(t, "PUT", "/resource_classes/CUSTOM_FOO", "", 201)
	for _, p := range []struct{ uuid, name, parent string }{
		{cn1UUID, "node1", ""}, {cn2UUID, "node2", ""}, {child1, "node1_pgpu", cn1UUID}, {ghostUUID, "gone", ""}, {shareUUID, "shared-disk", ""},
	} {
		body := fmt.Sprintf(`{"uuid": %q, "name": %q}`, p.uuid, p.name)
		if p.parent != "" {
			body = fmt.Sprintf(`{"uuid": %q, "name": %q, "parent_provider_uuid": %q}`, p.uuid, p.name, p.parent)
		}
		c.do(t, "POST", "/resource_providers", body, 200)
	}
	inv := func(uuid, invs string) {
		c.do(t, "PUT", "/resource_providers/"+uuid+"/inventories", `{"resource_provider_generation": 0, "inventories": {`+invs+`}}`, 200)
	}
	compute := `"VCPU": {"total": 16}, "MEMORY_MB": {"total": 32768}, "DISK_GB": {"total": 500}, "CUSTOM_FOO": {"total": 10}`
	inv(cn1UUID, compute)
	inv(cn2UUID, compute)
	inv(child1, `"VGPU": {"total": 4}`)
	inv(ghostUUID, `"VCPU": {"total": 8}, "MEMORY_MB": {"total": 8192}`)
	inv(shareUUID, `"DISK_GB": {"total": 1000}`)
}

// seedCell writes the cell's compute nodes, instances and migrations and
// the API database's cell mapping.
func (c *claimsCopy) seedCell(t *testing.T, instances []nova.Instance, migrations []nova.Migration) {
	t.Helper()
	ctx := context.Background()
	cell := cmdtest.OpenDB(t, c.Cell, storage.RoleCell)
	created := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	var nodes []nova.ComputeNode
	for i, u := range []string{cn1UUID, cn2UUID} {
		host := fmt.Sprintf("host%d", i+1)
		nodes = append(nodes, nova.ComputeNode{ID: int64(i + 1), CreatedAt: &created, Host: ptrS(host), HypervisorHostname: ptrS(fmt.Sprintf("node%d", i+1)),
			UUID: ptrS(u), VCPUs: 16, MemoryMB: 32768, LocalGB: 500, HypervisorType: "QEMU", HypervisorVersion: 1, CPUInfo: "{}"})
	}
	if err := celldb.InsertCellRows(ctx, cell, nova.CellRows{ComputeNodes: nodes, Instances: instances, Migrations: migrations, Replace: true}); err != nil {
		t.Fatal(err)
	}
	api := cmdtest.OpenDB(t, c.API, storage.RoleAPI)
	if err := apidb.InsertAPIRows(ctx, api, nova.APIRows{CellMappings: []nova.CellMapping{
		{UUID: "00000000-0000-0000-0000-000000000000", Name: "cell0", TransportURL: "none:///", DatabaseConnection: c.Cell.URL},
		{UUID: cell1UUID, Name: "cell1", TransportURL: "fake://", DatabaseConnection: c.Cell.URL},
	}}); err != nil {
		t.Fatal(err)
	}
}

// ageConsumers makes every consumer and allocation an hour old, past any
// expiry (the database backend reads the consumer's created_at, the API
// backend the allocations' Last-Modified).
func (c *claimsCopy) ageConsumers(t *testing.T) {
	t.Helper()
	db, err := sql.Open("mysql", c.Placement.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, table := range []string{"consumers", "allocations"} {
		if _, err := db.Exec(`UPDATE ` + table + ` SET created_at = UTC_TIMESTAMP() - INTERVAL 1 HOUR`); err != nil {
			t.Fatal(err)
		}
	}
}

// placementState is everything the API says about providers and consumers,
// canonical JSON: allocations (with generations) per consumer and every
// provider's generation.
func (c *claimsCopy) placementState(t *testing.T, consumers []string) string {
	t.Helper()
	var b strings.Builder
	var rps struct {
		ResourceProviders []struct {
			UUID       string `json:"uuid"`
			Generation int    `json:"generation"`
		} `json:"resource_providers"`
	}
	if err := json.Unmarshal(c.do(t, "GET", "/resource_providers", "", 200), &rps); err != nil {
		t.Fatal(err)
	}
	sort.Slice(rps.ResourceProviders, func(i, j int) bool { return rps.ResourceProviders[i].UUID < rps.ResourceProviders[j].UUID })
	for _, rp := range rps.ResourceProviders {
		fmt.Fprintf(&b, "provider %s generation %d\n", rp.UUID, rp.Generation)
	}
	for _, cons := range consumers {
		var v any
		if err := json.Unmarshal(c.do(t, "GET", "/allocations/"+cons, "", 200), &v); err != nil {
			t.Fatal(err)
		}
		js, _ := json.Marshal(v) // maps marshal with sorted keys
		fmt.Fprintf(&b, "consumer %s %s\n", cons, js)
	}
	return b.String()
}

// novaManage runs Nova 26's nova-manage (the chroot's release's, when the
// copy has one) with the copy's nova.conf and returns its output and exit
// code.
func (c *claimsCopy) novaManage(t *testing.T, args ...string) (string, int) {
	t.Helper()
	argv := append([]string{"nova-manage", "--config-file", c.Conf}, args...)
	py := fmt.Sprintf("import sys; from nova.cmd import manage; sys.argv=%s; sys.exit(manage.main())", cmdtest.PyList(argv))
	if c.chroot != nil {
		out, errOut, code := c.chroot.Python(t, py, "")
		return out + errOut, code
	}
	out, err := exec.Command(testdb.Python, "-c", py).CombinedOutput()
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatal(err)
		}
		return string(out), ee.ExitCode()
	}
	return string(out), 0
}
