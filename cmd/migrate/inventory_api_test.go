package migrate_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/rpctl/rpctl/cmd/internal/cmdtest"
	"github.com/rpctl/rpctl/internal/testdb"
	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/storetest"
)

// TestMigrateInventoryThroughPlacementAPI (issue 34): `migrate inventory`
// with a controller's nova.conf [placement] alone writes, through the real
// placement-api, the rows the database path writes. Two copies of one
// sample cloud (with bad rows) are migrated, one into Placement's database
// by rpctl, one through placement-api over a Placement database of its
// own, with the same compute node uuids; then both Placement databases
// must hold the same providers (uuid, name, generation, parent, root),
// inventories (every field), custom classes, traits and aggregate
// memberships, and both runs the same exit code and skipped rows. A second
// run through the API writes nothing. Flat, nested with a shared storage
// pool (child providers, a sharing provider and its aggregate), and flat
// with [pci] report_in_placement (a device provider under the root, its
// class and traits; then its VFs removed from the host: the provider is
// deleted on both paths).
func TestMigrateInventoryThroughPlacementAPI(t *testing.T) {
	if !testdb.MySQLWanted() {
		t.Skip("skipping: needs MariaDB (RPCTL_TEST_MYSQL) and python3-placement; run `make test`")
	}
	for _, tc := range []struct {
		name string
		args []string
		want []string // rows the case must have written
		conf string   // nova.conf of both twins
		pci  bool
	}{
		{name: "flat", want: []string{"COMPUTE_NODE", "MEMORY_MB", "DISK_GB"}},
		{name: "nested+shared", args: []string{"--layout", "nested", "--shared-storage", "ceph=*"}, want: []string{"_NUMA0", "HW_NUMA_ROOT", "MISC_SHARES_VIA_AGGREGATE", "shared-storage-ceph"}},
		{name: "pci", want: []string{"_0000:AF:00.1", "CUSTOM_PCI_8086_154C", "CUSTOM_FAST", "COMPUTE_MANAGED_PCI_DEVICE"}, pci: true,
			conf: "[pci]\nreport_in_placement = True\ndevice_spec = {\"vendor_id\": \"8086\", \"product_id\": \"154c\", \"traits\": \"fast\"}\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db, api := twinClouds(t, 6, 2, tc.conf, tc.pci)
			inv := append([]string{"migrate", "inventory"}, tc.args...)
			dbOut, dbErr, dbCode := cmdtest.Rpctl(t, append(db.args(), inv...)...)
			api.copyNodeUUIDs(t, db)
			apiOut, apiErr, apiCode := cmdtest.Rpctl(t, append(api.args(), inv...)...)
			t.Logf("database: exit %d\n%s%s\nAPI: exit %d\n%s%s", dbCode, dbOut, dbErr, apiCode, apiOut, apiErr)
			if dbCode != 2 || apiCode != dbCode {
				t.Errorf("exit codes: database %d, API %d; want 2 (bad rows skipped) both", dbCode, apiCode)
			}
			// The cells are named by their databases, which differ.
			got, want := skippedLines(strings.ReplaceAll(apiErr, api.cell.Name, "CELL")), skippedLines(strings.ReplaceAll(dbErr, db.cell.Name, "CELL"))
			if got != want || want == "" {
				t.Errorf("skipped rows through the API:\n%s\nthrough the database:\n%s", got, want)
			}
			if dbOut != apiOut {
				t.Errorf("summary through the API:\n%s\nthrough the database:\n%s", apiOut, dbOut)
			}
			want, got = storetest.PlacementRows(t, db.placement(t)), storetest.PlacementRows(t, api.placement(t))
			for _, w := range tc.want {
				if !strings.Contains(want, w) {
					t.Errorf("the database path wrote no %q: nothing to compare\n%s", w, want)
				}
			}
			if want != got {
				t.Errorf("Placement rows differ (- database path, + API path):\n%s", rowDiff(want, got))
			}
			// Idempotent through the API too: nothing left to write.
			out, errOut, code := cmdtest.Rpctl(t, append(api.args(), inv...)...)
			if code != 2 || storetest.PlacementRows(t, api.placement(t)) != got {
				t.Errorf("re-run through the API: exit %d (want 2: the bad rows again), rows changed\n%s%s", code, out, errOut)
			}
			if !strings.Contains(errOut, "2 rows matched query migrate_compute_node_inventory, 0 migrated") {
				t.Errorf("re-run through the API found more than the 2 bad rows:\n%s", out)
			}
			if !tc.pci {
				return
			}
			// The PF's VFs leave the host: the device provider goes.
			for _, w := range []*twin{db, api} {
				if _, err := w.cell.Admin.Exec("UPDATE `" + w.cell.Name + "`.pci_devices SET status = 'removed' WHERE dev_type = 'type-VF'"); err != nil {
					t.Fatal(err)
				}
			}
			_, dbErr, dbCode = cmdtest.Rpctl(t, append(db.args(), inv...)...)
			_, apiErr, apiCode = cmdtest.Rpctl(t, append(api.args(), inv...)...)
			want, got = storetest.PlacementRows(t, db.placement(t)), storetest.PlacementRows(t, api.placement(t))
			if dbCode != apiCode || strings.Contains(want, "_0000:AF:00.1") || want != got {
				t.Errorf("after the VFs left: exit %d (database), %d (API); device provider still there: %v; rows differ:\n%s\n%s%s", dbCode, apiCode,
					strings.Contains(want, "_0000:AF:00.1"), rowDiff(want, got), dbErr, apiErr)
			}
		})
	}
}

// TestMigrateInventoryAPIConflict: a write that meets a concurrent change
// (a nova-compute adding a trait between rpctl's read and its PUT, made by
// a proxy in front of the real placement-api) is answered 409; rpctl
// re-reads the node and writes again at the new generation: the other
// writer's trait stays, the new ratio is written, exit 0.
func TestMigrateInventoryAPIConflict(t *testing.T) {
	if !testdb.MySQLWanted() {
		t.Skip("skipping: needs MariaDB (RPCTL_TEST_MYSQL) and python3-placement; run `make test`")
	}
	_, api := twinClouds(t, 4, 0, "", false)
	if out, errOut, code := cmdtest.Rpctl(t, append(api.args(), "migrate", "inventory")...); code != 0 {
		t.Fatalf("first run: exit %d\n%s%s", code, out, errOut)
	}
	target, _ := url.Parse(api.placementURL)
	proxy := httputil.NewSingleHostReverseProxy(target)
	var mu sync.Mutex
	victim, conflicts := "", 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		fire := victim == "" && r.Method == http.MethodPut && strings.HasSuffix(r.URL.Path, "/inventories")
		if fire {
			victim = strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/resource_providers/"), "/inventories")
		}
		mu.Unlock()
		if fire {
			// The other writer, straight to placement-api.
			if code, body := testdb.PlacementDo(t, "PUT", api.placementURL, "/traits/CUSTOM_CONCURRENT", "1.39", ""); code >= 300 {
				t.Errorf("create trait: %d %s", code, body)
			}
			code, body := testdb.PlacementGet(t, api.placementURL, "/resource_providers/"+victim+"/traits", "1.39")
			var tr struct {
				Traits     []string `json:"traits"`
				Generation int64    `json:"resource_provider_generation"`
			}
			if code != 200 || json.Unmarshal(body, &tr) != nil {
				t.Errorf("read traits: %d %s", code, body)
			}
			put, _ := json.Marshal(map[string]any{"traits": append(tr.Traits, "CUSTOM_CONCURRENT"), "resource_provider_generation": tr.Generation})
			if code, body := testdb.PlacementDo(t, "PUT", api.placementURL, "/resource_providers/"+victim+"/traits", "1.39", string(put)); code != 200 {
				t.Errorf("concurrent trait write: %d %s", code, body)
			}
		}
		rec := &statusRecorder{ResponseWriter: w}
		proxy.ServeHTTP(rec, r)
		if rec.status == http.StatusConflict {
			mu.Lock()
			conflicts++
			mu.Unlock()
		}
	}))
	defer srv.Close()
	api.writeConf(t, srv.URL)
	out, errOut, code := cmdtest.Rpctl(t, append(api.args(), "migrate", "inventory", "--cpu-allocation-ratio", "8", "--parallel", "1")...)
	t.Logf("exit %d\n%s%s", code, out, errOut)
	if code != 0 {
		t.Errorf("exit %d, want 0: the conflict is re-read and retried", code)
	}
	if victim == "" || conflicts != 1 {
		t.Fatalf("proxy: victim %q, %d conflicts; want one provider's PUT answered 409", victim, conflicts)
	}
	_, body := testdb.PlacementGet(t, api.placementURL, "/resource_providers/"+victim+"/traits", "1.39")
	if !strings.Contains(string(body), "CUSTOM_CONCURRENT") || !strings.Contains(string(body), "COMPUTE_NODE") {
		t.Errorf("the other writer's trait was overwritten: %s", body)
	}
	rows := storetest.PlacementRows(t, api.placement(t))
	for _, line := range strings.Split(rows, "\n") {
		if f := strings.Fields(line); len(f) == 9 && f[1] == "VCPU" && f[7] != "8" {
			t.Errorf("VCPU ratio not written: %s", line)
		}
	}
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

// twin is one copy of a sample cloud: its databases and how rpctl reaches
// its Placement.
type twin struct {
	cell, api, place *testdb.MySQL
	placementURL     string
	conf             string
	// extra is nova.conf text both twins read ([pci]); the database twin
	// gets it in a file of its own, beside --placement-db.
	extra    string
	extraDir string
}

// args reach the cells through --cell-db/--api-db, and Placement through
// its database or, for the API twin, nova.conf's [placement] alone.
func (w *twin) args() []string {
	a := []string{"--cell-db", w.cell.URL, "--api-db", w.api.URL}
	if w.conf != "" {
		return append(a, "--config-file", w.conf)
	}
	if w.extra != "" {
		a = append(a, "--config-file", filepath.Join(w.extraDir, "nova.conf"))
	}
	return append(a, "--placement-db", w.place.URL)
}

func (w *twin) placement(t *testing.T) *storage.DB {
	return cmdtest.OpenDB(t, w.place, storage.RolePlacement)
}

// writeConf writes the twin's nova.conf naming endpoint as its Placement
// API (admin_token, as noauth2's placement-api takes it).
func (w *twin) writeConf(t *testing.T, endpoint string) {
	t.Helper()
	w.conf = filepath.Join(t.TempDir(), "nova.conf")
	body := fmt.Sprintf("[placement]\nauth_type = admin_token\ntoken = admin\nendpoint_override = %s\n", endpoint) + w.extra
	if err := os.WriteFile(w.conf, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

// copyNodeUUIDs gives w's compute nodes the uuids other's hold (those the
// database path generated for NULL ones), so that both migrate the same
// uuids.
func (w *twin) copyNodeUUIDs(t *testing.T, other *twin) {
	t.Helper()
	q := fmt.Sprintf("UPDATE `%s`.compute_nodes b JOIN `%s`.compute_nodes a ON a.id = b.id SET b.uuid = a.uuid", w.cell.Name, other.cell.Name)
	if _, err := w.cell.Admin.Exec(q); err != nil {
		t.Fatal(err)
	}
}

// twinClouds makes one sample cloud twice: the database twin, and the API
// twin with a placement-api over its own Placement database.
func twinClouds(t *testing.T, nodes, bad int, extra string, pci bool) (db, api *twin) {
	t.Helper()
	db = &twin{cell: testdb.NewMySQL(t), api: testdb.NewMySQL(t), place: testdb.NewMySQL(t), extra: extra, extraDir: t.TempDir()}
	if extra != "" {
		if err := os.WriteFile(filepath.Join(db.extraDir, "nova.conf"), []byte(extra), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	sc := append(db.args(), "sample-cloud", "--nodes", fmt.Sprint(nodes), "--seed", "34")
	if bad > 0 {
		sc = append(sc, "--bad-rows", fmt.Sprint(bad))
	}
	if out, errOut, code := cmdtest.Rpctl(t, sc...); code != 0 {
		t.Fatalf("sample-cloud: exit %d\n%s%s", code, out, errOut)
	}
	if pci {
		// A PF with two VFs on the first live, good compute node, as
		// TestPCIInPlacementSQLite's: one allocated, one removed.
		var node int64
		if err := db.cell.Admin.QueryRow("SELECT MIN(id) FROM `" + db.cell.Name + "`.compute_nodes WHERE deleted = 0 AND hypervisor_hostname NOT LIKE 'bad%'").Scan(&node); err != nil {
			t.Fatal(err)
		}
		for i, d := range [][4]string{
			{"0000:af:00.1", "1572", "type-PF", "unavailable"},
			{"0000:af:02.0", "154c", "type-VF", "allocated"},
			{"0000:af:02.1", "154c", "type-VF", "available"},
			{"0000:af:02.2", "154c", "type-VF", "removed"},
		} {
			var parent any
			if d[2] == "type-VF" {
				parent = "0000:af:00.1"
			}
			if _, err := db.cell.Admin.Exec("INSERT INTO `"+db.cell.Name+"`.pci_devices (id, deleted, compute_node_id, address, vendor_id, product_id, dev_type, label, status, parent_addr) VALUES (?, 0, ?, ?, '8086', ?, ?, 'label_8086', ?, ?)",
				i+1, node, d[0], d[1], d[2], d[3], parent); err != nil {
				t.Fatal(err)
			}
		}
	}
	api = &twin{cell: testdb.NewMySQL(t), api: testdb.NewMySQL(t), place: testdb.NewMySQL(t), extra: extra}
	cmdtest.CloneDB(t, db.cell, api.cell)
	cmdtest.CloneDB(t, db.api, api.api)
	cmdtest.CloneDB(t, db.place, api.place)
	api.placementURL = testdb.PlacementAPI(t, api.place.URL)
	api.writeConf(t, api.placementURL)
	return db, api
}

// skippedLines are a run's "Skipped" lines, sorted.
func skippedLines(errOut string) string {
	var out []string
	for _, l := range strings.Split(errOut, "\n") {
		if strings.HasPrefix(l, "Skipped ") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// rowDiff lists the lines only one side has.
func rowDiff(want, got string) string {
	count := map[string]int{}
	for _, l := range strings.Split(want, "\n") {
		count[l]++
	}
	for _, l := range strings.Split(got, "\n") {
		count[l]--
	}
	var b strings.Builder
	for _, l := range strings.Split(want, "\n") {
		if count[l] > 0 {
			fmt.Fprintf(&b, "- %s\n", l)
		}
	}
	for _, l := range strings.Split(got, "\n") {
		if count[l] < 0 {
			fmt.Fprintf(&b, "+ %s\n", l)
		}
	}
	return b.String()
}
