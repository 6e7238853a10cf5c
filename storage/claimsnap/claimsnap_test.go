package claimsnap

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/rpctl/rpctl/claims"
)

// v1Rows are the claims of testdata/claims-v1.db, as rpctl's layout v1 wrote
// them. Regenerate the fixture (only ever for a layout that has not shipped)
// with RPCTL_WRITE_FIXTURES=1 go test -run TestWriteV1Fixture ./storage/claimsnap/.
var v1Rows = []string{
	`INSERT INTO claims (host, node, instance_uuid, vcpus, memory_mb, disk_gb, pci, resize_target, created_at) VALUES
	('cmp1', 'cmp1.example', 'aaaaaaaa-0000-0000-0000-000000000001', 2, 2048, 20, NULL, 0, '2026-01-02 03:04:05')`,
	`INSERT INTO claims (host, node, instance_uuid, vcpus, memory_mb, disk_gb, pci, resize_target, created_at) VALUES
	('cmp2', 'cmp2.example', 'aaaaaaaa-0000-0000-0000-000000000002', 4, 4096, 0, 'PCI_DEVICE=1,SRIOV_NET_VF=2', 1, '2026-01-02 03:04:06')`,
	`INSERT INTO claims (host, node, instance_uuid, vcpus, memory_mb, disk_gb, pci, resize_target, created_at) VALUES
	(NULL, NULL, 'bbbbbbbb-0000-0000-0000-000000000003', 1, 0, 0, NULL, 0, NULL)`,
}

// v1Want is what the v1 rows read as in the Current layout.
var v1Want = []claims.Claim{
	{ID: 1, Host: "cmp1", Node: "cmp1.example", InstanceUUID: "aaaaaaaa-0000-0000-0000-000000000001", VCPUs: 2, MemoryMB: 2048, DiskGB: 20,
		CreatedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Resources: map[string]int64{"VCPU": 2, "MEMORY_MB": 2048, "DISK_GB": 20}},
	{ID: 2, Host: "cmp2", Node: "cmp2.example", InstanceUUID: "aaaaaaaa-0000-0000-0000-000000000002", VCPUs: 4, MemoryMB: 4096,
		PCI: "PCI_DEVICE=1,SRIOV_NET_VF=2", ResizeTarget: true, CreatedAt: time.Date(2026, 1, 2, 3, 4, 6, 0, time.UTC),
		Resources: map[string]int64{"VCPU": 4, "MEMORY_MB": 4096, "PCI_DEVICE": 1, "SRIOV_NET_VF": 2}},
	{ID: 3, InstanceUUID: "bbbbbbbb-0000-0000-0000-000000000003", VCPUs: 1, Resources: map[string]int64{"VCPU": 1}},
}

func writeAt(t *testing.T, path string, version int, rows []string) {
	t.Helper()
	s, err := openAt(context.Background(), path, version)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, r := range rows {
		if _, err := s.db.Exec(r); err != nil {
			t.Fatal(err)
		}
	}
}

func TestWriteV1Fixture(t *testing.T) {
	if os.Getenv("RPCTL_WRITE_FIXTURES") != "1" {
		t.Skip("writes testdata/claims-v1.db only with RPCTL_WRITE_FIXTURES=1")
	}
	path := filepath.Join("testdata", "claims-v1.db")
	os.Remove(path)
	writeAt(t, path, 1, v1Rows)
}

func copyFile(t *testing.T, src string) string {
	t.Helper()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	out, err := os.Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	out.Close()
	return dst
}

// TestUpgradeEveryShippedVersion opens a file of every layout version ever
// shipped and checks it reads as the Current layout with nothing lost.
func TestUpgradeEveryShippedVersion(t *testing.T) {
	ctx := context.Background()
	v2Rows := []string{`INSERT INTO claims (host, node, instance_uuid, vcpus, memory_mb, disk_gb, pci, resize_target, created_at, provider_uuid, resources) VALUES
		('cmp1', 'cmp1.example', 'cccccccc-0000-0000-0000-000000000004', 0, 512, 0, NULL, 0, '2026-01-02 03:04:07', 'dddddddd-0000-0000-0000-000000000001', '{"MEMORY_MB":512,"PCPU":2}')`}
	v2Want := []claims.Claim{{ID: 1, Host: "cmp1", Node: "cmp1.example", InstanceUUID: "cccccccc-0000-0000-0000-000000000004",
		MemoryMB: 512, CreatedAt: time.Date(2026, 1, 2, 3, 4, 7, 0, time.UTC), ProviderUUID: "dddddddd-0000-0000-0000-000000000001",
		Resources: map[string]int64{"MEMORY_MB": 512, "PCPU": 2}}}
	cases := map[int]struct {
		file func(t *testing.T) string
		want []claims.Claim
	}{
		1: {func(t *testing.T) string { return copyFile(t, filepath.Join("testdata", "claims-v1.db")) }, v1Want},
		2: {func(t *testing.T) string {
			p := filepath.Join(t.TempDir(), "v2.db")
			writeAt(t, p, 2, v2Rows)
			return p
		}, v2Want},
	}
	for _, st := range steps {
		if _, ok := cases[st.to]; !ok {
			t.Fatalf("layout version %d has no upgrade test case: add one (and its fixture)", st.to)
		}
	}
	for v, tc := range cases {
		path := tc.file(t)
		got, from, err := Read(ctx, path)
		if err != nil {
			t.Fatalf("v%d: %v", v, err)
		}
		if from != v {
			t.Errorf("v%d: file read as version %d", v, from)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("v%d: claims after upgrade\n got %+v\nwant %+v", v, got, tc.want)
		}
		// Open upgrades in place, Read does not: the upgrade is stored and
		// reads the same claims.
		s, err := Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		if s.From != v {
			t.Errorf("v%d: Read changed the file to version %d", v, s.From)
		}
		s.Close()
		got, from, err = Read(ctx, path)
		if err != nil || from != Current || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("v%d: after the upgrade: version %d, %v\n got %+v\nwant %+v", v, from, err, got, tc.want)
		}
	}
}

func TestNewerFileRefused(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "future.db")
	writeAt(t, path, Current, []string{`UPDATE claims_version SET version = 99 WHERE table_name = 'claims'`})
	_, _, err := Read(ctx, path)
	if !errors.Is(err, ErrTooNew) || !strings.Contains(err.Error(), "version 99") || !strings.Contains(err.Error(), "newer rpctl") {
		t.Fatalf("got %v, want a clear too-new error", err)
	}
}

// TestFailedUpgradeLeavesOldVersion: a step that fails rolls back with its
// version bump, so the file stays a whole v1 file.
func TestFailedUpgradeLeavesOldVersion(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "bad.db")
	writeAt(t, path, 1, []string{`INSERT INTO claims (instance_uuid, pci) VALUES ('x', 'PCI_DEVICE')`})
	if _, err := Open(ctx, path); err == nil || !strings.Contains(err.Error(), "upgrade to layout version 2") || !strings.Contains(err.Error(), "claim id 1") {
		t.Fatalf("got %v", err)
	}
	s, err := openAt(ctx, path, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.From != 1 {
		t.Fatalf("file is version %d after a failed upgrade, want 1", s.From)
	}
	var n int
	s.db.QueryRow(`SELECT COUNT(*) FROM pragma_table_info('claims') WHERE name = 'provider_uuid'`).Scan(&n)
	if n != 0 {
		t.Fatal("failed upgrade left the provider_uuid column behind")
	}
}

func TestNotAClaimFile(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "other.db")
	db, err := openDB(path)
	if err != nil {
		t.Fatal(err)
	}
	db.Exec(`CREATE TABLE something (x INTEGER)`)
	db.Close()
	if _, _, err := Read(ctx, path); err == nil || !strings.Contains(err.Error(), "not a claim file") {
		t.Fatalf("got %v", err)
	}
	if _, _, err := Read(ctx, filepath.Join(t.TempDir(), "missing.db")); err == nil {
		t.Fatal("reading a missing file succeeded")
	}
}

func TestWriteThenReadRoundTrip(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "snap.db")
	in := []claims.Claim{
		{Host: "h", Node: "n", InstanceUUID: "u1", ProviderUUID: "p1", CreatedAt: time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC),
			Resources: map[string]int64{"VCPU": 2, "MEMORY_MB": 1024, "DISK_GB": 10, "CUSTOM_PCI_GPU": 1, "CUSTOM_X": 3}},
	}
	if err := Write(ctx, path, in); err != nil {
		t.Fatal(err)
	}
	got, from, err := Read(ctx, path)
	if err != nil || from != Current {
		t.Fatalf("read: %v (version %d)", err, from)
	}
	want := in[0]
	want.ID, want.VCPUs, want.MemoryMB, want.DiskGB, want.PCI = 1, 2, 1024, 10, "CUSTOM_PCI_GPU=1"
	if len(got) != 1 || !reflect.DeepEqual(got[0], want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	// Overwriting replaces the file whole.
	if err := Write(ctx, path, nil); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := Read(ctx, path); len(got) != 0 {
		t.Fatalf("rewritten snapshot still holds %d claims", len(got))
	}
}

// TestReadNeverWrites: Read leaves every file it is given byte-identical
// with nothing beside it — a claim file of each layout (not upgraded), an
// empty file and foreign files (refused), and a WAL-mode SQLite database
// (whose journal mode opening it read-write would switch to DELETE).
func TestReadNeverWrites(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	v2 := filepath.Join(dir, "v2.db")
	writeAt(t, v2, 2, nil)
	empty := filepath.Join(dir, "empty.db")
	text := filepath.Join(dir, "notes.txt")
	wal := filepath.Join(dir, "cloud.db")
	for p, body := range map[string]string{empty: "", text: "not a database\n"} {
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	db, err := sql.Open("sqlite", "file:"+wal+"?_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE resource_providers (id INTEGER PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	for _, tc := range []struct {
		path, refusal string
	}{
		{copyFile(t, filepath.Join("testdata", "claims-v1.db")), ""},
		{v2, ""},
		{empty, "empty"},
		{text, "not a claim file"},
		{wal, "not a claim file"},
	} {
		before, err := os.ReadFile(tc.path)
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = Read(ctx, tc.path)
		if (tc.refusal == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tc.refusal) {
			t.Errorf("%s: err = %v, want %q", filepath.Base(tc.path), err, tc.refusal)
		}
		after, _ := os.ReadFile(tc.path)
		if !bytes.Equal(before, after) {
			t.Errorf("%s: Read changed the file", filepath.Base(tc.path))
		}
		for _, side := range []string{"-journal", "-wal", "-shm"} {
			if _, err := os.Stat(tc.path + side); err == nil && tc.path != wal {
				t.Errorf("%s: Read left %s beside it", filepath.Base(tc.path), side)
			}
		}
	}
	// The WAL database is still in WAL mode (header bytes 18 and 19 are 2).
	if h, _ := os.ReadFile(wal); len(h) < 20 || h[18] != 2 || h[19] != 2 {
		t.Errorf("the WAL database's header says journal mode %v", h[18:20])
	}
}
