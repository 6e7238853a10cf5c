package claims_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rpctl/rpctl/cmd/internal/cmdtest"
	"github.com/rpctl/rpctl/internal/dsn"
	"github.com/rpctl/rpctl/internal/nova"
	"github.com/rpctl/rpctl/internal/testdb"
	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/celldb"
)

// sqliteCloud is a small cloud with two compute nodes (host1/node1,
// host2/node2) and their providers, written with SQL, in an embedded rpctl
// file or (newMySQLCloud) in MariaDB cell and Placement databases;
// allocations are added with alloc.
type sqliteCloud struct {
	path string   // the embedded file ("" on MariaDB)
	args []string // rpctl's database flags
	db   *storage.DB
	p    *storage.DB // Placement (the same handle for the embedded file)
}

func newSQLiteCloud(t *testing.T) *sqliteCloud {
	t.Helper()
	path := filepath.Join(t.TempDir(), "cloud.db")
	if _, errOut, code := cmdtest.Rpctl(t, "--db", path, "init"); code != 0 {
		t.Fatalf("init: %s", errOut)
	}
	db, err := storage.Open(context.Background(), dsn.SQLiteFile(path), storage.RoleCell, "cell1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	c := &sqliteCloud{path: path, args: []string{"--db", path}, db: db, p: db}
	c.seed(t)
	return c
}

func newMySQLCloud(t *testing.T) *sqliteCloud {
	t.Helper()
	cell, place := testdb.NewMySQL(t), testdb.NewMySQL(t)
	args := []string{"--cell-db", cell.URL, "--placement-db", place.URL}
	if _, errOut, code := cmdtest.Rpctl(t, append(args, "init")...); code != 0 {
		t.Fatalf("init: %s", errOut)
	}
	c := &sqliteCloud{args: args, db: cmdtest.OpenDB(t, cell, storage.RoleCell), p: cmdtest.OpenDB(t, place, storage.RolePlacement)}
	c.seed(t)
	return c
}

func (c *sqliteCloud) seed(t *testing.T) {
	t.Helper()
	created := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	var nodes []nova.ComputeNode
	for i, u := range []string{cn1UUID, cn2UUID} {
		n := string(rune('1' + i))
		nodes = append(nodes, nova.ComputeNode{ID: int64(i + 1), CreatedAt: &created, Host: ptrS("host" + n), HypervisorHostname: ptrS("node" + n),
			UUID: ptrS(u), VCPUs: 4, MemoryMB: 4096, LocalGB: 100, HypervisorType: "QEMU", HypervisorVersion: 1, CPUInfo: "{}"})
	}
	if err := celldb.InsertCellRows(context.Background(), c.db, nova.CellRows{ComputeNodes: nodes}); err != nil {
		t.Fatal(err)
	}
	c.exec(t, `INSERT INTO resource_providers (id, uuid, name, generation, root_provider_id) VALUES (1, ?, 'node1', 1, 1), (2, ?, 'node2', 1, 2)`, cn1UUID, cn2UUID)
	for _, rp := range []int{1, 2} {
		c.exec(t, `INSERT INTO inventories (resource_provider_id, resource_class_id, total, reserved, min_unit, max_unit, step_size, allocation_ratio)
			SELECT ?, id, CASE name WHEN 'VCPU' THEN 4 WHEN 'MEMORY_MB' THEN 4096 ELSE 100 END, 0, 1,
			CASE name WHEN 'VCPU' THEN 4 WHEN 'MEMORY_MB' THEN 4096 ELSE 100 END, 1, 1.0
			FROM resource_classes WHERE name IN ('VCPU', 'MEMORY_MB', 'DISK_GB')`, rp)
	}
	c.exec(t, `INSERT INTO projects (id, external_id) VALUES (1, 'p1')`)
	c.exec(t, `INSERT INTO users (id, external_id) VALUES (1, 'u1')`)
}

// exec runs a statement on the Placement database.
func (c *sqliteCloud) exec(t *testing.T, q string, args ...any) {
	t.Helper()
	if _, err := c.p.Exec(q, args...); err != nil {
		t.Fatalf("%s: %v", strings.Fields(q)[0], err)
	}
}

// alloc gives consumer allocations on providers (by id 1, 2), its consumer
// record created age ago.
func (c *sqliteCloud) alloc(t *testing.T, consumer string, age time.Duration, res map[int64]map[string]int) {
	t.Helper()
	created := time.Now().UTC().Add(-age).Format("2006-01-02 15:04:05")
	c.exec(t, `INSERT INTO consumers (uuid, project_id, user_id, generation, created_at) VALUES (?, 1, 1, 1, ?)`, consumer, created)
	for rp, r := range res {
		for rc, n := range r {
			c.exec(t, `INSERT INTO allocations (resource_provider_id, consumer_id, resource_class_id, used, created_at)
				SELECT ?, ?, id, ?, ? FROM resource_classes WHERE name = ?`, rp, consumer, n, created, rc)
		}
	}
}

func (c *sqliteCloud) instances(t *testing.T, ins ...nova.Instance) {
	t.Helper()
	if err := celldb.InsertCellRows(context.Background(), c.db, nova.CellRows{Instances: ins}); err != nil {
		t.Fatal(err)
	}
}

func liveInstance(id int, n string) nova.Instance {
	created := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	return nova.Instance{ID: int64(id), UUID: cu(id), CreatedAt: &created, UserID: "u1", ProjectID: "p1", VMState: "active",
		Host: ptrS("host" + n), Node: ptrS("node" + n)}
}

type auditRow struct {
	Consumer string `json:"consumer"`
	Provider string `json:"provider"`
	Result   string `json:"result"`
}

func auditRows(t *testing.T, out string) []auditRow {
	t.Helper()
	var rows []auditRow
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("rpctl claims audit -f json: %v: %s", err, out)
	}
	return rows
}

func TestClaimsAuditExpiryAndCodes(t *testing.T) {
	c := newSQLiteCloud(t)
	c.instances(t, liveInstance(1, "1"))
	std := map[string]int{"VCPU": 1, "MEMORY_MB": 256}
	c.alloc(t, cu(1), time.Hour, map[int64]map[string]int{1: std})   // owned
	c.alloc(t, cu(2), time.Hour, map[int64]map[string]int{1: std})   // orphan
	c.alloc(t, cu(3), time.Minute, map[int64]map[string]int{2: std}) // orphan, but younger than 300s
	run := func(args ...string) (string, string, int) {
		return cmdtest.Rpctl(t, append(append(c.args, "claims", "audit", "-f", "json"), args...)...)
	}
	// issue 21: no expiry by default, as nova-manage placement audit.
	out, errOut, code := run()
	if code != 3 || len(auditRows(t, out)) != 2 || afterProgress(t, errOut, "audit", 3) != "" {
		t.Fatalf("audit: exit %d, want 3 with both orphans: %s%s", code, out, errOut)
	}
	out, errOut, code = run("--expiry", "300s")
	if code != 3 {
		t.Fatalf("--expiry 300s: exit %d, want 3: %s%s", code, out, errOut)
	}
	if got := auditRows(t, out); len(got) != 1 || got[0] != (auditRow{cu(2), cn1UUID, "orphaned"}) {
		t.Fatalf("--expiry 300s found %+v, want only %s", got, cu(2))
	}
	if !strings.Contains(errOut, "1 orphaned allocation(s), 1 kept as younger than --expiry 5m0s") {
		t.Errorf("--expiry 300s: no summary counting the kept orphan: %q", errOut)
	}
	if out, _, code := run("--expiry", "30s"); code != 3 || len(auditRows(t, out)) != 2 {
		t.Fatalf("--expiry 30s: exit %d, %s", code, out)
	}
	if _, errOut, code := run("--provider", "c0000000-0000-4000-8000-0000000000ff"); code != 127 || !strings.Contains(errOut, "does not exist") {
		t.Fatalf("unknown provider: exit %d, %s", code, errOut)
	}
	// A flag cobra cannot parse is a usage error: 255, the central contract.
	if _, errOut, code := run("--expiry", "soon"); code != 255 {
		t.Fatalf("bad --expiry: exit %d, %s", code, errOut)
	}
	if _, errOut, code := run("--expiry", "-5s"); code != 127 {
		t.Fatalf("negative --expiry: exit %d, %s", code, errOut)
	}
	if out, errOut, code := run("--delete", "--expiry", "300s"); code != 4 || len(auditRows(t, out)) != 1 || auditRows(t, out)[0].Result != "deleted" {
		t.Fatalf("--delete: exit %d: %s%s", code, out, errOut)
	}
	if out, errOut, code := run("--expiry", "300s"); code != 0 || out != "[]\n" {
		t.Fatalf("after --delete: exit %d: %q%s", code, out, errOut)
	}
	// Nothing orphaned, in a table: nothing printed (nova-manage's
	// silence), unless --print-empty asks for the headers.
	table := func(args ...string) (string, string, int) {
		return cmdtest.Rpctl(t, append(append(c.args, "claims", "audit"), args...)...)
	}
	for _, args := range [][]string{{"--expiry", "300s"}, {"--expiry", "300s", "--delete"}} {
		what := map[bool]string{false: "audit", true: "audit --delete"}[len(args) == 3]
		if out, errOut, code := table(args...); code != 0 || out != "" || afterProgress(t, errOut, what, 2) != "0 orphaned allocation(s), 1 kept as younger than --expiry 5m0s\n" {
			t.Errorf("%v, nothing orphaned: exit %d, stdout %q, stderr %q; want 0 and nothing printed", args, code, out, errOut)
		}
	}
	if out, _, code := table("--expiry", "300s", "--print-empty"); code != 0 || !strings.Contains(out, "| consumer |") {
		t.Errorf("--print-empty, nothing orphaned: exit %d, %q; want the headers", code, out)
	}
	var n int
	c.p.Get(&n, `SELECT COUNT(*) FROM consumers WHERE uuid = ?`, cu(2))
	if n != 0 {
		t.Fatal("the deleted orphan's consumer record is still there")
	}
}

// afterProgress is what an audit printed on standard error after its
// progress line (issue 35: off a terminal, one line at the end), which it
// requires: "what: n/n allocations, R allocations/s, ETA 0s".
func afterProgress(t *testing.T, errOut, what string, n int) string {
	t.Helper()
	line, rest, _ := strings.Cut(errOut, "\n")
	if !regexp.MustCompile(`^` + regexp.QuoteMeta(fmt.Sprintf("%s: %d/%d allocations, ", what, n, n)) + `\d+ allocations/s, ETA 0s$`).MatchString(line) {
		t.Errorf("stderr does not start with the progress line of %s over %d allocations: %q", what, n, errOut)
		return errOut
	}
	return rest
}

func TestClaimsSnapshotDiff(t *testing.T) {
	c := newSQLiteCloud(t)
	c.instances(t, liveInstance(1, "1"), liveInstance(2, "1"), liveInstance(3, "2"))
	std := map[string]int{"VCPU": 1, "MEMORY_MB": 256}
	c.alloc(t, cu(1), time.Hour, map[int64]map[string]int{1: std})
	c.alloc(t, cu(2), time.Hour, map[int64]map[string]int{1: std})
	c.alloc(t, cu(3), time.Hour, map[int64]map[string]int{1: std})
	snap := filepath.Join(t.TempDir(), "snap.db")
	if out, errOut, code := cmdtest.Rpctl(t, "--db", c.path, "claims", "snapshot", "--out", snap); code != 0 || !strings.Contains(out, "Wrote 3 claims of 3 consumers") {
		t.Fatalf("snapshot: exit %d: %s%s", code, out, errOut)
	}
	if out, errOut, code := cmdtest.Rpctl(t, "--db", c.path, "claims", "diff", snap); code != 0 {
		t.Fatalf("diff right after snapshot: exit %d: %s%s", code, out, errOut)
	}
	// Released cu(1), resized cu(2), moved cu(3), new cu(4).
	c.exec(t, `DELETE FROM allocations WHERE consumer_id = ?`, cu(1))
	c.exec(t, `UPDATE allocations SET used = 2 WHERE consumer_id = ? AND resource_class_id = (SELECT id FROM resource_classes WHERE name = 'VCPU')`, cu(2))
	c.exec(t, `UPDATE allocations SET resource_provider_id = 2 WHERE consumer_id = ?`, cu(3))
	c.alloc(t, cu(4), time.Hour, map[int64]map[string]int{2: std})
	out, errOut, code := cmdtest.Rpctl(t, "--db", c.path, "claims", "diff", snap, "-f", "json")
	if code != 3 {
		t.Fatalf("diff: exit %d: %s%s", code, out, errOut)
	}
	var got []struct{ Change, Consumer, Before, After string }
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	want := []struct{ Change, Consumer, Before, After string }{
		{"released", cu(1), "node1: MEMORY_MB=256,VCPU=1", ""},
		{"resized", cu(2), "node1: MEMORY_MB=256,VCPU=1", "node1: MEMORY_MB=256,VCPU=2"},
		{"moved", cu(3), "node1: MEMORY_MB=256,VCPU=1", "node2: MEMORY_MB=256,VCPU=1"},
		{"new", cu(4), "", "node2: MEMORY_MB=256,VCPU=1"},
	}
	if len(got) != len(want) {
		t.Fatalf("diff: %s", out)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("change %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
	// A copy of the v1 fixture is read in its layout (not upgraded: the
	// file stays byte-identical) and compares by host/node: v1 has no
	// provider uuid.
	v1, err := os.ReadFile(filepath.Join(testdb.RepoRoot(), "storage", "claimsnap", "testdata", "claims-v1.db"))
	if err != nil {
		t.Fatal(err)
	}
	v1Copy := filepath.Join(t.TempDir(), "v1.db")
	if err := os.WriteFile(v1Copy, v1, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := cmdtest.Rpctl(t, "--db", c.path, "claims", "diff", v1Copy, "-f", "json"); code != 3 {
		t.Fatalf("diff against the v1 fixture: exit %d: %s", code, errOut)
	}
	if after, _ := os.ReadFile(v1Copy); !bytes.Equal(after, v1) {
		t.Error("claims diff upgraded the v1 file it was asked to read")
	}
	// A missing, an empty or a foreign file (a copy of the cloud database,
	// in WAL mode) is refused with 127 and left byte-identical, the copy
	// still in WAL mode.
	empty := filepath.Join(t.TempDir(), "empty.db")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cloudCopy := filepath.Join(t.TempDir(), "cloud-copy.db")
	cloud, err := os.ReadFile(c.path)
	if err != nil || os.WriteFile(cloudCopy, cloud, 0o644) != nil {
		t.Fatalf("copy the cloud database: %v", err)
	}
	// SQLite's header bytes 18 and 19 are 2 in WAL mode, 1 in rollback.
	if cloud[18] != 2 || cloud[19] != 2 {
		t.Fatalf("the cloud database is not in WAL mode (header %v)", cloud[18:20])
	}
	for _, bad := range []string{filepath.Join(t.TempDir(), "missing.db"), empty, cloudCopy} {
		before, _ := os.ReadFile(bad)
		if _, errOut, code := cmdtest.Rpctl(t, "--db", c.path, "claims", "diff", bad); code != 127 {
			t.Errorf("diff %s: exit %d, want 127: %s", bad, code, errOut)
		}
		if after, _ := os.ReadFile(bad); !bytes.Equal(before, after) {
			t.Errorf("diff %s: the file changed", bad)
		}
	}
	if after, _ := os.ReadFile(cloudCopy); len(after) < 20 || after[18] != 2 || after[19] != 2 {
		t.Error("the cloud copy is no longer in WAL mode")
	}
	if _, errOut, code := cmdtest.Rpctl(t, "--db", c.path, "claims", "snapshot"); code != 127 || !strings.Contains(errOut, "--out") {
		t.Errorf("snapshot without --out: exit %d: %s", code, errOut)
	}
}
