package status_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/cmd/internal/cmdtest"
	"github.com/rpctl/rpctl/internal/testdb"
	"github.com/rpctl/rpctl/status"
)

// statusJSON is one check of `rpctl status --json`, source included.
type statusJSON struct {
	Check   string  `json:"check"`
	Result  int     `json:"result"`
	Details *string `json:"details"`
	Source  string  `json:"source"`
}

func runStatusJSON(t *testing.T, args ...string) ([]statusJSON, int, string) {
	t.Helper()
	out, errOut, code := cmdtest.Rpctl(t, append(args, "status", "--json")...)
	var doc struct {
		Checks []statusJSON `json:"checks"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("rpctl %q status --json: exit %d: %v\n%s%s", args, code, err, out, errOut)
	}
	return doc.Checks, code, errOut
}

func details(c statusJSON) string {
	if c.Details == nil {
		return ""
	}
	return *c.Details
}

// TestStatusThroughPlacementAPI (issue 34): a controller's nova.conf alone
// — [api_database] and [placement] credentials, no [placement_database] —
// runs every check, reading Placement through the real placement-api
// (Keystone's catalog, or endpoint_override) as nova-status does. On a
// cloud where rpctl's checks warn (a partial migration, an orphan, a
// drifted inventory), every check gives the result and details it gives
// on the Placement database, and says it read the API; placement-status'
// two checks, which count rows the API does not show, say so and give no
// verdict (measured: a provider without root_provider_id and an allocation
// without consumer, which the database run finds, are invisible to the
// API). A dead API is a Failure of each check that reads it, named, not a
// crash, and the others still run.
func TestStatusThroughPlacementAPI(t *testing.T) {
	if !testdb.MySQLWanted() {
		t.Skip("skipping: needs MariaDB (RPCTL_TEST_MYSQL), python3-placement and keystone; run `make test`")
	}
	testdb.RequirePython(t, "placement", "pymysql")
	cell, api, place := testdb.NewMySQL(t), testdb.NewMySQL(t), testdb.NewMySQL(t)
	dbs := []string{"--cell-db", cell.URL, "--api-db", api.URL, "--placement-db", place.URL}
	if out, errOut, code := cmdtest.Rpctl(t, append(dbs, "sample-cloud", "--nodes", "8", "--seed", "5")...); code != 0 {
		t.Fatalf("sample-cloud: exit %d\n%s%s", code, out, errOut)
	}
	// Part of the nodes migrated: compute nodes without providers, without
	// uuids, instances without allocations, aggregates out of sync.
	if out, errOut, code := cmdtest.Rpctl(t, append(dbs, "migrate", "inventory", "--max-count", "5")...); code != 1 {
		t.Fatalf("migrate inventory --max-count 5: exit %d\n%s%s", code, out, errOut)
	}
	// The real placement-api checking Keystone's tokens, as deployed.
	port := testdb.FreePort(t)
	placementURL := fmt.Sprintf("http://127.0.0.1:%d", port)
	keystoneURL := testdb.Keystone(t, keystonePassword, placementURL)
	testdb.PlacementAPIConf(t, place.URL, port, fmt.Sprintf("[keystone_authtoken]\nwww_authenticate_uri = %[1]s\nauth_url = %[1]s\nauth_type = password\nusername = admin\npassword = %[2]s\nproject_name = admin\nuser_domain_name = Default\nproject_domain_name = Default\n", keystoneURL, keystonePassword))
	// An orphan and a drifted inventory.
	if out, errOut, code := cmdtest.Rpctl(t, "--placement-db", place.URL, "provider", "create", "orphan-rp"); code != 0 {
		t.Fatalf("create orphan: exit %d\n%s%s", code, out, errOut)
	}
	if out, errOut, code := cmdtest.Rpctl(t, "--placement-db", place.URL, "inventory", "set", "cmp1-00001.example.org", "VCPU:total=3", "--amend"); code != 0 {
		t.Fatalf("inventory set: exit %d\n%s%s", code, out, errOut)
	}

	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	common := "[api_database]\nconnection = " + api.URL + "\n[service_user]\nsend_service_user_token = true\n"
	ks := fmt.Sprintf("auth_type = password\nauth_url = %s\nusername = admin\npassword = %s\nproject_name = admin\nuser_domain_name = Default\nproject_domain_name = Default\n", keystoneURL, keystonePassword)
	// The database run's nova.conf reaches the API too (nova-status'
	// Placement API check): Placement's data comes from placement.conf's
	// database.
	dbConf := write("nova-db.conf", common+"[placement]\n"+ks+"region_name = RegionOne\n")
	placementConf := write("placement.conf", "[placement_database]\nconnection = "+place.URL+"\n")
	dead := testdb.FreePort(t)
	apiConfs := []struct{ name, conf string }{
		{"keystone catalog", write("nova-keystone.conf", common+"[placement]\n"+ks+"region_name = RegionOne\n")},
		{"endpoint_override", write("nova-override.conf", common+"[placement]\n"+ks+"endpoint_override = "+placementURL+"\n")},
	}
	deadConf := write("nova-dead.conf", common+fmt.Sprintf("[placement]\nauth_type = admin_token\ntoken = admin\nendpoint = http://127.0.0.1:%d\n", dead))

	want, wantCode, _ := runStatusJSON(t, "--config-file", dbConf, "--config-file", placementConf)
	upstreamPlacement := map[string]bool{status.CheckMissingRootIDs: true, status.CheckIncompleteConsum: true}
	warned := 0
	for _, c := range want {
		if c.Result != 0 {
			warned++
		}
		if c.Result != 0 && strings.HasPrefix(details(c), "Cannot run") {
			t.Errorf("on the databases, %s cannot run: %s", c.Check, details(c))
		}
	}
	if warned < 5 || wantCode == 0 || wantCode == status.ExitCrashed {
		t.Fatalf("the database run warns on %d checks, exit %d: the cloud should warn with a verdict\n%+v", warned, wantCode, want)
	}
	for _, ac := range apiConfs {
		t.Run(ac.name, func(t *testing.T) {
			got, code, errOut := runStatusJSON(t, "--config-file", ac.conf)
			if len(got) != len(want) {
				t.Fatalf("%d checks, %d on the databases", len(got), len(want))
			}
			for i, g := range got {
				w := want[i]
				switch {
				case g.Check != w.Check:
					t.Errorf("check %d: %q, on the databases %q", i, g.Check, w.Check)
				case upstreamPlacement[g.Check]:
					if g.Result != 2 || !strings.Contains(details(g), "the Placement API does not show the rows this check counts") || !strings.Contains(details(g), "[placement_database]") {
						t.Errorf("%s through the API: %d %q, want a Failure saying it needs the database", g.Check, g.Result, details(g))
					}
				case g.Result != w.Result || details(g) != details(w):
					t.Errorf("%s through the API: %d %q\non the databases: %d %q", g.Check, g.Result, details(g), w.Result, details(w))
				}
				if strings.Contains(w.Source, "Placement database") != strings.Contains(g.Source, "Placement API "+placementURL) {
					t.Errorf("%s reads %q through the API, %q on the databases", g.Check, g.Source, w.Source)
				}
			}
			if code != status.ExitCrashed || !strings.Contains(errOut, "2 of 21 checks could not run") {
				t.Errorf("exit %d, %q: want 255, the two placement-status checks without a verdict", code, errOut)
			}
			// Without those two, the verdict is the database run's.
			sel := []string{"--check", "nova-status", "--check", "rpctl"}
			_, dbCode, _ := runStatusJSON(t, append([]string{"--config-file", dbConf, "--config-file", placementConf}, sel...)...)
			_, apiCode, _ := runStatusJSON(t, append([]string{"--config-file", ac.conf}, sel...)...)
			if apiCode != dbCode || apiCode == status.ExitCrashed {
				t.Errorf("nova-status' and rpctl's checks: exit %d through the API, %d on the databases", apiCode, dbCode)
			}
		})
	}
	t.Run("dead API", func(t *testing.T) {
		got, code, errOut := runStatusJSON(t, "--config-file", deadConf)
		failed := 0
		for i, g := range got {
			w := want[i]
			readsPlacement := strings.Contains(g.Source, "Placement API")
			switch {
			case readsPlacement && g.Check != status.CheckPlacementAPI:
				failed++
				if g.Result != 2 || !strings.Contains(details(g), "Cannot run the check: the Placement API nova.conf's [placement] names") {
					t.Errorf("%s with the API down: %d %q", g.Check, g.Result, details(g))
				}
			case !readsPlacement && (g.Result != w.Result || details(g) != details(w)):
				t.Errorf("%s does not read Placement, yet: %d %q; on the databases %d %q", g.Check, g.Result, details(g), w.Result, details(w))
			}
		}
		if failed < 8 || code != status.ExitCrashed || strings.Contains(errOut, "panic") {
			t.Errorf("%d checks failed on the dead API, exit %d: %s", failed, code, errOut)
		}
	})
	// The rows placement-status' checks count, which the API hides: the
	// database run finds them, the API run says it cannot.
	t.Run("rows the API hides", func(t *testing.T) {
		ctx := "`" + place.Name + "`."
		for _, q := range []string{
			"INSERT INTO " + ctx + "resource_providers (created_at, uuid, name, generation) VALUES (NOW(), '0ff00000-0000-4000-8000-000000000002', 'rootless', 0)",
			"INSERT INTO " + ctx + "allocations (created_at, resource_provider_id, consumer_id, resource_class_id, used) SELECT NOW(), id, '0ff00000-0000-4000-8000-0000000000c1', 0, 1 FROM " + ctx + "resource_providers WHERE name = 'orphan-rp'",
		} {
			if _, err := place.Admin.Exec(q); err != nil {
				t.Fatal(err)
			}
		}
		sel := []string{"--check", "placement-status"}
		onDB, _, _ := runStatusJSON(t, append([]string{"--config-file", dbConf, "--config-file", placementConf}, sel...)...)
		onAPI, _, _ := runStatusJSON(t, append([]string{"--config-file", apiConfs[0].conf}, sel...)...)
		if onDB[0].Result != 2 || onDB[1].Result != 1 {
			t.Errorf("on the database: %+v, want the missing root id and the incomplete consumer found", onDB)
		}
		for _, c := range onAPI[:2] {
			if c.Result != 2 || !strings.HasPrefix(details(c), "Cannot run the check") {
				t.Errorf("through the API: %s %d %q", c.Check, c.Result, details(c))
			}
		}
		out, errOut, code := cmdtest.Rpctl(t, "--os-auth-url", keystoneURL, "--os-username", "admin", "--os-password", keystonePassword, "--os-project-name", "admin",
			"--os-user-domain-name", "Default", "--os-project-domain-name", "Default", "provider", "list", "-f", "value", "-c", "name")
		if code != 0 || strings.Contains(out, "rootless") || !strings.Contains(out, "orphan-rp") {
			t.Errorf("placement-api's provider list (exit %d): %q %s; want orphan-rp and not the provider without root_provider_id", code, out, errOut)
		}
	})
}
