package status_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/cmd/internal/cmdtest"
	"github.com/rpctl/rpctl/internal/testdb"
)

// upstreamCloud is a Nova cell, API and Placement database made by Nova's
// and Placement's own db sync, a placement-api on the latter, and the
// nova.conf and placement.conf both the upstream tools and rpctl read.
type upstreamCloud struct {
	cell, api, placement *testdb.MySQL
	placementURL         string
	keystoneURL          string
	dir                  string
	// release is the release whose tools judge ("zed": the host's
	// Debian 12 packages); chroot holds any other release's.
	release string
	chroot  *testdb.Chroot
}

const (
	diffCell0 = "00000000-0000-0000-0000-000000000000"
	diffCell1 = "ce110000-0000-4000-8000-0000000000d1"
)

func newUpstreamCloud(t *testing.T) *upstreamCloud {
	t.Helper()
	if !testdb.MySQLWanted() {
		t.Skip("skipping: needs MariaDB (RPCTL_TEST_MYSQL), python3-nova, python3-placement and placement-api; run `make test`")
	}
	testdb.RequirePython(t, "nova.cmd.status", "placement.cmd.status", "pymysql")
	c := &upstreamCloud{cell: testdb.NewMySQL(t), api: testdb.NewMySQL(t), placement: testdb.NewMySQL(t), dir: t.TempDir(), release: "zed"}
	prefix := c.cell.URL[:strings.LastIndex(c.cell.URL, "/")]
	script := filepath.Join(testdb.RepoRoot(), "scripts", "reference-dbsync.sh")
	if out, err := exec.Command(script, prefix, c.cell.Name, c.api.Name, c.placement.Name).CombinedOutput(); err != nil {
		t.Fatalf("reference db sync: %v\n%s", err, out)
	}
	c.placementURL = testdb.PlacementAPI(t, c.placement.URL)
	c.keystoneURL = testdb.Keystone(t, keystonePassword, c.placementURL)
	return c
}

// newReleaseCloud is newUpstreamCloud judged by another release's tools:
// its schemas made by that release's own db sync, its placement-api
// serving the Placement database, its nova-status and placement-status
// (the chroot scripts/release-chroot.sh built). Keystone is the host's:
// the tools only ask it for a token and the catalog.
func newReleaseCloud(t *testing.T, rel string) *upstreamCloud {
	t.Helper()
	chroot := testdb.ReleaseChroot(t, rel)
	if !testdb.MySQLWanted() {
		t.Skip("skipping: needs MariaDB (RPCTL_TEST_MYSQL) and keystone; run `make test`")
	}
	c := &upstreamCloud{cell: testdb.NewMySQL(t), api: testdb.NewMySQL(t), placement: testdb.NewMySQL(t), dir: chroot.TempDir(t), release: rel, chroot: chroot}
	chroot.DBSync(t, c.cell, c.api, c.placement)
	c.placementURL = chroot.PlacementAPI(t, c.placement.URL, "")
	c.keystoneURL = testdb.Keystone(t, keystonePassword, c.placementURL)
	return c
}

const keystonePassword = "ks-admin-pw"

// keystone is nova.conf's [placement] with Keystone credentials, as a
// controller has it.
func keystone(password, region string) func(c *upstreamCloud) string {
	return func(c *upstreamCloud) string {
		return fmt.Sprintf("[placement]\nauth_type = password\nauth_url = %s\nusername = admin\npassword = %s\nproject_name = admin\nuser_domain_name = Default\nproject_domain_name = Default\nregion_name = %s\n",
			c.keystoneURL, password, region)
	}
}

// exec runs SQL on one of the cloud's databases.
func (c *upstreamCloud) exec(t *testing.T, db *testdb.MySQL, q string, args ...any) {
	t.Helper()
	if _, err := db.Admin.Exec(strings.ReplaceAll(q, "DB.", "`"+db.Name+"`."), args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// reset empties the tables the cases write.
func (c *upstreamCloud) reset(t *testing.T) {
	t.Helper()
	for _, tb := range []string{"host_mappings", "cell_mappings"} {
		c.exec(t, c.api, "DELETE FROM DB."+tb)
	}
	for _, tb := range []string{"instance_system_metadata", "instances", "compute_nodes", "services"} {
		c.exec(t, c.cell, "DELETE FROM DB."+tb)
	}
	for _, tb := range []string{"allocations", "consumers", "inventories", "resource_providers"} {
		c.exec(t, c.placement, "DELETE FROM DB."+tb)
	}
}

// standard writes a cloud every check passes on: cell0 and cell1 mapped,
// one host mapped, a nova-compute at service version 66, an instance with
// hw_machine_type.
func (c *upstreamCloud) standard(t *testing.T) {
	t.Helper()
	c.reset(t)
	c.mapCell(t, diffCell0, "cell0")
	c.mapCell(t, diffCell1, "cell1")
	c.exec(t, c.api, "INSERT INTO DB.host_mappings (created_at, cell_id, host) SELECT NOW(), id, 'cmp1' FROM DB.cell_mappings WHERE name = 'cell1'")
	c.service(t, "cmp1", "nova-compute", 66)
	c.service(t, "ctl1", "nova-conductor", 66)
	c.instance(t, "1a000000-0000-4000-8000-000000000001", "active", "pc-q35-6.2")
}

func (c *upstreamCloud) mapCell(t *testing.T, uuid, name string) {
	t.Helper()
	c.exec(t, c.api, "INSERT INTO DB.cell_mappings (created_at, uuid, name, transport_url, database_connection, disabled) VALUES (NOW(), ?, ?, 'fake://', ?, 0)", uuid, name, c.cell.URL)
}

func (c *upstreamCloud) service(t *testing.T, host, binary string, version int) {
	t.Helper()
	c.exec(t, c.cell, "INSERT INTO DB.services (created_at, host, `binary`, topic, report_count, disabled, deleted, forced_down, version, uuid) VALUES (NOW(), ?, ?, ?, 0, 0, 0, 0, ?, UUID())",
		host, binary, strings.TrimPrefix(binary, "nova-"), version)
}

func (c *upstreamCloud) computeNode(t *testing.T, host string) {
	t.Helper()
	c.exec(t, c.cell, "INSERT INTO DB.compute_nodes (created_at, uuid, host, hypervisor_hostname, vcpus, memory_mb, local_gb, vcpus_used, memory_mb_used, local_gb_used, hypervisor_type, hypervisor_version, cpu_info, deleted) VALUES (NOW(), UUID(), ?, ?, 4, 4096, 40, 0, 0, 0, 'QEMU', 6002000, '{}', 0)", host, host)
}

// instance writes a live instance; machineType "" leaves hw_machine_type
// unset.
func (c *upstreamCloud) instance(t *testing.T, uuid, vmState, machineType string) {
	t.Helper()
	c.exec(t, c.cell, "INSERT INTO DB.instances (created_at, uuid, user_id, project_id, vm_state, power_state, host, node, launched_on, display_name, hostname, locked, cleaned, deleted) VALUES (NOW(), ?, 'u', 'p', ?, 1, 'cmp1', 'cmp1', 'cmp1', 'vm', 'vm', 0, 0, 0)", uuid, vmState)
	c.exec(t, c.cell, "INSERT INTO DB.instance_system_metadata (created_at, instance_uuid, `key`, value, deleted) VALUES (NOW(), ?, 'image_min_disk', '1', 0)", uuid)
	if machineType != "" {
		c.exec(t, c.cell, "INSERT INTO DB.instance_system_metadata (created_at, instance_uuid, `key`, value, deleted) VALUES (NOW(), ?, 'image_hw_machine_type', ?, 0)", uuid, machineType)
	}
}

// confs writes nova.conf and placement.conf: placement says how nova.conf
// reaches the Placement API ("" for no [placement] auth), extra is more
// nova.conf text.
func (c *upstreamCloud) confs(t *testing.T, placement, policy, extra, database string) (nova, place string) {
	t.Helper()
	nova = filepath.Join(c.dir, "nova.conf")
	place = filepath.Join(c.dir, "placement.conf")
	pol := ""
	if policy != "" {
		pol = "[oslo_policy]\npolicy_file = " + policy + "\n"
	}
	if database == "" {
		database = c.cell.URL
	}
	body := fmt.Sprintf("[DEFAULT]\ntransport_url = fake://\n[database]\nconnection = %s\n[api_database]\nconnection = %s\n%s%s%s",
		database, c.api.URL, placement, pol, extra)
	if err := os.WriteFile(nova, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(place, []byte(fmt.Sprintf("[api]\nauth_strategy = noauth2\n[placement_database]\nconnection = %s\n%s", c.placement.URL, pol)), 0o600); err != nil {
		t.Fatal(err)
	}
	return nova, place
}

// upstream runs nova-status or placement-status upgrade check of the
// cloud's release (Debian's python3-nova ships no entry point) and returns
// its table and exit code.
func (c *upstreamCloud) upstream(t *testing.T, module, prog, conf string) (string, int) {
	t.Helper()
	script := fmt.Sprintf("import sys; from %s import status; sys.argv=[%q,'--config-file',%q,'upgrade','check']; sys.exit(status.main())", module, prog, conf)
	if c.chroot != nil {
		out, errOut, code := c.chroot.Python(t, script, filepath.Dir(conf))
		if code == 1 && !strings.Contains(out, "Upgrade Check Results") {
			t.Fatalf("%s (%s) exit 1 without a table:\n%s%s", prog, c.release, out, errOut)
		}
		return out, code
	}
	cmd := exec.Command(testdb.Python, "-c", script)
	cmd.Dir = filepath.Dir(conf)
	var errOut strings.Builder
	cmd.Stderr = &errOut
	out, err := cmd.Output()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s: %v", prog, err)
	}
	if code == 1 && !strings.Contains(string(out), "Upgrade Check Results") {
		t.Fatalf("%s exit 1 without a table:\n%s%s", prog, out, errOut.String())
	}
	return string(out), code
}

type tableCheck struct{ Name, Result string }

var tableRow = regexp.MustCompile(`(?m)^\| (Check|Result): (.*?) *\|$`)

// tableChecks reads the check names and results of an oslo.upgradecheck
// table.
func tableChecks(table string) []tableCheck {
	var out []tableCheck
	for _, m := range tableRow.FindAllStringSubmatch(table, -1) {
		if m[1] == "Check" {
			out = append(out, tableCheck{Name: m[2]})
		} else if len(out) > 0 {
			out[len(out)-1].Result = m[2]
		}
	}
	return out
}

// diffCase is one state of the cloud; want are the results the upstream
// tools must give (so that a case proves the rule it is named after).
type diffCase struct {
	name      string
	setup     func(c *upstreamCloud, t *testing.T)
	placement func(c *upstreamCloud) string // nova.conf's [placement]
	policy    string                        // "json", "yaml" or "" (none)
	extra     string                        // more nova.conf
	want      map[string]string             // check → result, upstream
	// exact says the tables are deterministic: rpctl's must equal the
	// tool's byte for byte.
	exact bool
	// database is nova.conf's [database] connection when not cell1's.
	database func(t *testing.T, c *upstreamCloud) string
	// files are written beside the config files for the case.
	files map[string]string
}

func adminToken(c *upstreamCloud) string {
	return "[placement]\nauth_type = admin_token\ntoken = admin\nendpoint = " + c.placementURL + "\n"
}

const tokenOn = "[service_user]\nsend_service_user_token = true\n"

// TestUpstreamChecksDifferential runs Nova 26's nova-status and Placement
// 8.0.0's placement-status upgrade check and rpctl status on the same
// databases and config files, for each check a cloud where it succeeds,
// warns and fails: the check names, results and exit codes are equal, and
// where the details are deterministic the tables are equal byte for byte.
func TestUpstreamChecksDifferential(t *testing.T) {
	runUpstreamDiff(t, newUpstreamCloud(t))
}

// TestUpstreamChecksDifferential2025_1 is TestUpstreamChecksDifferential
// judged by 2025.1's own tools (Nova 31.0.0's nova-status, Placement
// 13.0.0's placement-status and placement-api, in the chroot
// RPCTL_CHROOT_2025_1 names) against rpctl status --release 2025.1.
func TestUpstreamChecksDifferential2025_1(t *testing.T) {
	runUpstreamDiff(t, newReleaseCloud(t, "2025.1"))
}

// oldestSupportedCompute is each release's
// SERVICE_VERSION_ALIASES[OLDEST_SUPPORTED_SERVICE_VERSION], read in its
// nova/objects/service.py (Zed :233/:238 'Yoga': 61; 2025.1 :262/:271
// 'Caracal': 66): the cases put a compute at it and one below it.
var oldestSupportedCompute = map[string]int{"zed": 61, "2025.1": 66}

// runUpstreamDiff runs every case on c, judged by c's release's tools.
func runUpstreamDiff(t *testing.T, c *upstreamCloud) {
	oldest := oldestSupportedCompute[c.release]
	dead := testdb.FreePort(t)
	cinderOld := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"versions": [{"id": "v3.0", "status": "CURRENT", "version": "3.40", "min_version": "3.0", "links": []}]}`)
	}))
	defer cinderOld.Close()
	cases := []diffCase{
		{name: "all succeed", setup: (*upstreamCloud).standard, placement: adminToken, policy: "yaml", extra: tokenOn, exact: true,
			want: map[string]string{"Cells v2": "Success", "Placement API": "Success", "Older than N-1 computes": "Success", "hw_machine_type unset": "Success",
				"Service User Token Configuration": "Success", "Policy File JSON to YAML Migration": "Success", "Missing Root Provider IDs": "Success", "Incomplete Consumers": "Success"}},
		{name: "one cell mapping", setup: func(c *upstreamCloud, t *testing.T) {
			c.standard(t)
			c.exec(t, c.api, "DELETE FROM DB.cell_mappings WHERE name = 'cell0'")
		}, placement: adminToken, extra: tokenOn, exact: true, want: map[string]string{"Cells v2": "Failure"}},
		{name: "no cell0 mapping", setup: func(c *upstreamCloud, t *testing.T) {
			c.standard(t)
			c.exec(t, c.api, "UPDATE DB.cell_mappings SET uuid = 'ce110000-0000-4000-8000-0000000000d2' WHERE name = 'cell0'")
		}, placement: adminToken, extra: tokenOn, exact: true, want: map[string]string{"Cells v2": "Failure"}},
		{name: "no host mappings but compute nodes", setup: func(c *upstreamCloud, t *testing.T) {
			c.standard(t)
			c.exec(t, c.api, "DELETE FROM DB.host_mappings")
			c.computeNode(t, "cmp1")
		}, placement: adminToken, extra: tokenOn, exact: true, want: map[string]string{"Cells v2": "Failure"}},
		// nova-status counts the compute nodes of [database] connection
		// only: here a database with an empty compute_nodes table, while
		// cell1 has one.
		{name: "compute nodes outside the [database] cell", setup: func(c *upstreamCloud, t *testing.T) {
			c.standard(t)
			c.exec(t, c.api, "DELETE FROM DB.host_mappings")
			c.computeNode(t, "cmp1")
		}, database: func(t *testing.T, c *upstreamCloud) string {
			other := testdb.NewMySQL(t)
			c.exec(t, other, "CREATE TABLE DB.compute_nodes LIKE `"+c.cell.Name+"`.compute_nodes")
			return other.URL
		}, placement: adminToken, extra: tokenOn, exact: true, want: map[string]string{"Cells v2": "Success"}},
		{name: "fresh install", setup: func(c *upstreamCloud, t *testing.T) {
			c.reset(t)
			c.mapCell(t, diffCell0, "cell0")
			c.mapCell(t, diffCell1, "cell1")
		}, placement: adminToken, extra: tokenOn, exact: true, want: map[string]string{"Cells v2": "Success", "Older than N-1 computes": "Success", "hw_machine_type unset": "Success"}},
		{name: "placement without credentials", setup: (*upstreamCloud).standard, placement: func(*upstreamCloud) string { return "" }, extra: tokenOn, exact: true,
			want: map[string]string{"Placement API": "Failure"}},
		{name: "placement answers 404", setup: (*upstreamCloud).standard, extra: tokenOn, exact: true,
			placement: func(c *upstreamCloud) string {
				return "[placement]\nauth_type = admin_token\ntoken = admin\nendpoint = " + c.placementURL + "/nowhere\n"
			}, want: map[string]string{"Placement API": "Failure"}},
		{name: "placement down", setup: (*upstreamCloud).standard, extra: tokenOn,
			placement: func(c *upstreamCloud) string {
				return fmt.Sprintf("[placement]\nauth_type = admin_token\ntoken = admin\nendpoint = http://127.0.0.1:%d\n", dead)
			}},
		{name: "placement through keystone", setup: (*upstreamCloud).standard, placement: keystone(keystonePassword, "RegionOne"), extra: tokenOn, exact: true,
			want: map[string]string{"Placement API": "Success"}},
		{name: "keystone refuses the password", setup: (*upstreamCloud).standard, placement: keystone("wrong", "RegionOne"), extra: tokenOn, exact: true,
			want: map[string]string{"Placement API": "Failure"}},
		{name: "no placement in the region", setup: (*upstreamCloud).standard, placement: keystone(keystonePassword, "RegionTwo"), extra: tokenOn, exact: true,
			want: map[string]string{"Placement API": "Failure"}},
		// keystoneauth's ConnectFailure is none of the errors
		// _check_placement names: nova-status crashes (255), rpctl has no
		// verdict for the check (255).
		{name: "keystone down", setup: (*upstreamCloud).standard, extra: tokenOn,
			placement: func(c *upstreamCloud) string {
				return fmt.Sprintf("[placement]\nauth_type = password\nauth_url = http://127.0.0.1:%d/v3\nusername = placement\npassword = pw\nproject_name = service\nuser_domain_name = Default\nproject_domain_name = Default\n", dead)
			}},
		{name: "cinder too old", setup: (*upstreamCloud).standard, placement: adminToken, exact: true,
			extra: tokenOn + "[cinder]\nauth_type = admin_token\ntoken = admin\nendpoint = " + cinderOld.URL + "\nendpoint_template = " + cinderOld.URL + "/v3\n",
			want:  map[string]string{"Cinder API": "Failure"}},
		{name: "cinder down", setup: (*upstreamCloud).standard, placement: adminToken,
			extra: tokenOn + fmt.Sprintf("[cinder]\nauth_type = admin_token\ntoken = admin\nendpoint = http://127.0.0.1:%d\nendpoint_template = http://127.0.0.1:%d/v3\n", dead, dead),
			want:  map[string]string{"Cinder API": "Warning"}},
		{name: "json policy", setup: (*upstreamCloud).standard, placement: adminToken, policy: "json", extra: tokenOn, exact: true,
			want: map[string]string{"Policy File JSON to YAML Migration": "Failure"}},
		// No policy_file set: each tool looks for its default beside its
		// config file, nova-status for policy.yaml, placement-status for
		// policy.json (oslo.policy's: its own ConfigOpts never sees
		// placement.policy's set_defaults).
		// 2025.1's placement-status (oslo.policy 4.5.1) looks for
		// policy.yaml: a policy.json beside placement.conf is not read.
		{name: "default policy files", setup: (*upstreamCloud).standard, placement: adminToken, extra: tokenOn, exact: true,
			files: map[string]string{"policy.json": `{"placement:resource_providers:list": ""}`},
			want:  map[string]string{"Policy File JSON to YAML Migration": map[string]string{"zed": "Failure", "2025.1": "Success"}[c.release]}},
		{name: "default nova policy file in JSON", setup: (*upstreamCloud).standard, placement: adminToken, extra: tokenOn, exact: true,
			files: map[string]string{"policy.yaml": `{"os_compute_api:servers:index": ""}`},
			want:  map[string]string{"Policy File JSON to YAML Migration": "Failure"}},
		{name: "compute older than N-1", setup: func(c *upstreamCloud, t *testing.T) {
			c.standard(t)
			c.service(t, "cmp2", "nova-compute", 55)
		}, placement: adminToken, extra: tokenOn, exact: true, want: map[string]string{"Older than N-1 computes": "Failure"}},
		{name: "compute at the oldest supported", setup: func(c *upstreamCloud, t *testing.T) {
			c.standard(t)
			c.service(t, "cmp2", "nova-compute", oldest)
			c.service(t, "cmp3", "nova-compute", 0)
		}, placement: adminToken, extra: tokenOn, exact: true, want: map[string]string{"Older than N-1 computes": "Success"}},
		// Zed's computes (64) under a 2025.1 control plane: Zed's
		// nova-status passes them, 2025.1's fails them.
		{name: "compute just below the oldest supported", setup: func(c *upstreamCloud, t *testing.T) {
			c.standard(t)
			c.service(t, "cmp2", "nova-compute", oldest-1)
		}, placement: adminToken, extra: tokenOn, exact: true, want: map[string]string{"Older than N-1 computes": "Failure"}},
		{name: "zed's newest compute", setup: func(c *upstreamCloud, t *testing.T) {
			c.standard(t)
			c.service(t, "cmp2", "nova-compute", 64)
		}, placement: adminToken, extra: tokenOn, exact: true, want: map[string]string{"Older than N-1 computes": map[string]string{"zed": "Success", "2025.1": "Failure"}[c.release]}},
		{name: "instance without machine type", setup: func(c *upstreamCloud, t *testing.T) {
			c.standard(t)
			c.instance(t, "1a000000-0000-4000-8000-000000000002", "active", "")
		}, placement: adminToken, extra: tokenOn, exact: true, want: map[string]string{"hw_machine_type unset": "Warning"}},
		{name: "building instance without machine type", setup: func(c *upstreamCloud, t *testing.T) {
			c.standard(t)
			c.instance(t, "1a000000-0000-4000-8000-000000000003", "building", "")
		}, placement: adminToken, extra: tokenOn, exact: true, want: map[string]string{"hw_machine_type unset": "Success"}},
		{name: "no service user token", setup: (*upstreamCloud).standard, placement: adminToken, exact: true,
			want: map[string]string{"Service User Token Configuration": "Failure"}},
		{name: "placement data to migrate", setup: func(c *upstreamCloud, t *testing.T) {
			c.standard(t)
			c.exec(t, c.placement, "INSERT INTO DB.resource_providers (created_at, uuid, name, generation) VALUES (NOW(), UUID(), 'rp1', 1)")
			c.exec(t, c.placement, "INSERT INTO DB.allocations (created_at, resource_provider_id, consumer_id, resource_class_id, used) SELECT NOW(), id, '1a000000-0000-4000-8000-000000000001', 0, 1 FROM DB.resource_providers")
		}, placement: adminToken, extra: tokenOn, exact: true, want: map[string]string{"Missing Root Provider IDs": "Failure", "Incomplete Consumers": "Warning"}},
	}
	flavor := cmdtest.GranularFlavorFile(t, 1)
	policies := map[string]string{"json": `{"os_compute_api:servers:index": ""}`, "yaml": `"os_compute_api:servers:index": ""` + "\n"}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.setup(c, t)
			policy := ""
			if tc.policy != "" {
				policy = filepath.Join(c.dir, "custom-policy."+tc.policy)
				if err := os.WriteFile(policy, []byte(policies[tc.policy]), 0o600); err != nil {
					t.Fatal(err)
				}
				defer os.Remove(policy)
			}
			placement := ""
			if tc.placement != nil {
				placement = tc.placement(c)
			}
			for name, body := range tc.files {
				path := filepath.Join(c.dir, name)
				if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
					t.Fatal(err)
				}
				defer os.Remove(path)
			}
			database := ""
			if tc.database != nil {
				database = tc.database(t, c)
			}
			novaConf, placeConf := c.confs(t, placement, policy, tc.extra, database)
			args := []string{"--config-file", novaConf, "--config-file", placeConf, "status", "--release", c.release}
			got := map[string]string{}
			worst := 0
			for _, tool := range []struct{ name, module, conf string }{{"nova-status", "nova.cmd", novaConf}, {"placement-status", "placement.cmd", placeConf}} {
				table, code := c.upstream(t, tool.module, tool.name, tool.conf)
				out, errOut, rcode := cmdtest.Rpctl(t, append(args, "--check", tool.name)...)
				t.Logf("%s exit %d, rpctl exit %d\n%s", tool.name, code, rcode, table)
				if code == 255 || worst == 255 {
					worst = 255
				} else {
					worst = max(worst, code)
				}
				if rcode != code {
					t.Errorf("%s exits %d, rpctl status --check %s %d\n%s%s", tool.name, code, tool.name, rcode, out, errOut)
				}
				if code == 255 {
					// The tool crashed (a dead API): no table to compare.
					continue
				}
				theirs, ours := tableChecks(table), tableChecks(out)
				if fmt.Sprint(theirs) != fmt.Sprint(ours) {
					t.Errorf("%s's checks:\n%v\nrpctl's:\n%v", tool.name, theirs, ours)
				}
				if tc.exact && table != out {
					t.Errorf("%s's table:\n%s\nrpctl's:\n%s", tool.name, table, out)
				}
				for _, ch := range theirs {
					// The policy check is both tools': either's verdict
					// other than Success is the one the case looks for.
					if got[ch.Name] == "" || got[ch.Name] == "Success" {
						got[ch.Name] = ch.Result
					}
				}
			}
			for check, want := range tc.want {
				if got[check] != want {
					t.Errorf("upstream %q is %q, the case wants %q", check, got[check], want)
				}
			}
			// Both tools at once: the worst of both, in nova-status'
			// order then placement-status'.
			all, _, code := cmdtest.Rpctl(t, append(args, "--check", "nova-status", "--check", "placement-status", "--json")...)
			var doc cmdtest.StatusDoc
			if err := json.Unmarshal([]byte(all), &doc); err != nil {
				t.Fatalf("rpctl --json: %v\n%s", err, all)
			}
			if len(doc.Checks) != 10 {
				t.Errorf("%d checks from both tools, want 10", len(doc.Checks))
			}
			if code != worst {
				t.Errorf("both tools' checks: exit %d, the tools' worst %d", code, worst)
			}
			// The exporter's results are rpctl status's, check by check,
			// rpctl's own checks included (issue 34). The API database
			// has no flavor for the exporter's capacity part: it is given
			// one in a file.
			cmdtest.ExporterEqualsStatus(t, []string{"--config-file", novaConf, "--config-file", placeConf}, []string{"--release", c.release}, "--flavor", flavor)
		})
	}
}
