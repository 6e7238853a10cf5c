package capacity_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/candidates"
	"github.com/rpctl/rpctl/cmd/internal/cmdtest"
	"github.com/rpctl/rpctl/flavors"
	"github.com/rpctl/rpctl/internal/dsn"
	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/apidb"
	"github.com/rpctl/rpctl/storage/placementdb"
)

// bruteCount claims one instance at a time through the core: the first
// candidate on a host in allowed (nil: any host) of Nova's query, else of
// its VCPU fallback, until none is left.
func bruteCount(t *testing.T, m *candidates.Model, reqs []*candidates.Request, allowed func(int32) bool) int64 {
	work := m.Clone()
	var n int64
	for {
		var pick *candidates.Candidate
		for _, req := range reqs {
			r, err := work.Search(context.Background(), req, candidates.Options{})
			if err != nil {
				return n
			}
			for i := range r.Candidates {
				if allowed(r.Candidates[i].Anchor) {
					pick = &r.Candidates[i]
					break
				}
			}
			if pick != nil {
				break
			}
		}
		if pick == nil {
			return n
		}
		work.Claim(pick, 1)
		n++
	}
}

// TestCapacityEqualsBruteForce: on sample clouds migrated flat and nested
// (NUMA children) with shared storage, every flavor of the API database,
// per host and in total, as `rpctl capacity -f json` prints it, equals a
// Count made by claiming one instance at a time through the core.
func TestCapacityEqualsBruteForce(t *testing.T) {
	for _, layout := range []string{"flat", "nested"} {
		t.Run(layout, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "cloud.db")
			for _, args := range [][]string{
				{"--db", db, "sample-cloud", "--nodes", "8", "--cells", "1", "--seed", "11"},
				{"--db", db, "migrate", "inventory", "--layout", layout, "--shared-storage", "ceph=*0[1-4]*"},
			} {
				if _, errOut, code := cmdtest.Rpctl(t, args...); code != 0 {
					t.Fatalf("%v: exit %d: %s", args, code, errOut)
				}
			}
			out, errOut, code := cmdtest.Rpctl(t, "--db", db, "-f", "json", "capacity")
			if code != 0 {
				t.Fatalf("capacity: exit %d: %s", code, errOut)
			}
			var got cmdtest.CapacityOut
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			pdb, err := storage.Open(ctx, dsn.SQLiteFile(db), storage.RolePlacement, "")
			if err != nil {
				t.Fatal(err)
			}
			defer pdb.Close()
			m, err := placementdb.LoadPlacement(ctx, pdb)
			if err != nil {
				t.Fatal(err)
			}
			fls, err := apidb.ListFlavors(ctx, pdb, "")
			if err != nil {
				t.Fatal(err)
			}
			var counted, nonzero int
			for _, fl := range fls {
				if !fl.IsPublic {
					if _, ok := got.Total[fl.Name]; ok {
						t.Errorf("private flavor %s counted", fl.Name)
					}
					continue
				}
				counted++
				// Nova's query, and for pinned CPUs its VCPU fallback.
				var reqs []*candidates.Request
				for _, noPin := range []bool{false, true} {
					r, err := flavors.Build(&fl, nil, flavors.Options{NoPinningTranslate: noPin})
					if err != nil {
						t.Fatal(err)
					}
					q, err := r.Candidates()
					if err != nil {
						t.Fatal(err)
					}
					reqs = append(reqs, q)
					if !r.CPUPinningRequested {
						break
					}
				}
				for _, h := range got.Hosts {
					idx, ok := m.ProviderIndex(h.ProviderUUID)
					if !ok {
						t.Fatalf("host %s: unknown provider", h.Host)
					}
					want := bruteCount(t, m, reqs, func(a int32) bool { return a == idx })
					if h.Free[fl.Name] != want {
						t.Errorf("%s on %s: %d, brute force %d", fl.Name, h.Host, h.Free[fl.Name], want)
					}
					if want > 0 {
						nonzero++
					}
				}
				if want := bruteCount(t, m, reqs, func(int32) bool { return true }); got.Total[fl.Name] != want {
					t.Errorf("%s in total: %d, brute force %d", fl.Name, got.Total[fl.Name], want)
				}
			}
			if counted < 5 || nonzero == 0 || len(got.Aggregates) == 0 {
				t.Errorf("%d flavors, %d non-zero host counts, %d aggregates: the sample proves too little", counted, nonzero, len(got.Aggregates))
			}
		})
	}
}

func TestCapacityCommand(t *testing.T) {
	db := cmdtest.FlavorCloud(t)
	dir := t.TempDir()
	cases := []struct {
		name   string
		args   []string
		code   int
		stdout []string
		stderr string
		file   string
		magic  string
	}{
		{name: "table", args: []string{"capacity", "--flavor", "m1.small", "--flavor", "m1.large", "--hosts"}, stdout: []string{"Per host", " total |", "m1.small", "m1.large"}},
		{name: "pack", args: []string{"capacity", "--mode", "pack", "--mix", "m1.small=3,m1.large=1"}, stdout: []string{"greedy fill of the mix", "m1.large"}},
		{name: "png", args: []string{"capacity", "--flavor", "m1.small", "--plot", filepath.Join(dir, "c.png")}, file: filepath.Join(dir, "c.png"), magic: "\x89PNG"},
		{name: "svg", args: []string{"capacity", "--plot", filepath.Join(dir, "c.svg")}, file: filepath.Join(dir, "c.svg"), magic: "<?xml"},
		{name: "unknown trait notes", args: []string{"capacity", "--flavor", "g1.vgpu"}, stderr: "No such trait(s): CUSTOM_GPU_A100"},
		// issue 21: csv and value print the table's rows, numbers bare.
		{name: "csv", args: []string{"capacity", "--flavor", "m1.small", "-f", "csv"}, stdout: []string{"\"aggregate\",\"name\",\"hosts\",\"m1_small\"\n", "\"total\",\"\",6,"}},
		// issue 39: -c names a flavor column as the flavor is spelled.
		{name: "csv -c flavor", args: []string{"capacity", "--flavor", "m1.small", "-f", "csv", "-c", "m1.small"}, stdout: []string{"\"m1_small\"\n"}},
		{name: "value hosts", args: []string{"capacity", "--flavor", "m1.small", "-f", "value", "--hosts"}, stdout: []string{"cmp1-"}},
		{name: "bad plot", args: []string{"capacity", "--plot", "c.jpg"}, code: 2, stderr: ".png or .svg"},
		{name: "mix needs pack", args: []string{"capacity", "--mix", "m1.small=1"}, code: 2, stderr: "--mix needs --mode pack"},
		{name: "bad mix", args: []string{"capacity", "--mode", "pack", "--mix", "m1.small"}, code: 2, stderr: "FLAVOR=WEIGHT"},
		{name: "mix not counted", args: []string{"capacity", "--mode", "pack", "--flavor", "m1.small", "--mix", "m1.large=1"}, code: 2, stderr: "not among the flavors"},
		{name: "bad mode", args: []string{"capacity", "--mode", "fast"}, code: 2, stderr: "invalid --mode"},
		{name: "unknown flavor", args: []string{"capacity", "--flavor", "nope"}, code: 2, stderr: "no flavor of that name"},
		{name: "unknown aggregate", args: []string{"capacity", "--aggregate", "00000000-0000-4000-8000-000000000000"}, code: 2, stderr: "no host is in that aggregate"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, errOut, code := cmdtest.Rpctl(t, append([]string{"--db", db}, c.args...)...)
			if code != c.code {
				t.Fatalf("exit %d, want %d; stderr %s", code, c.code, errOut)
			}
			for _, s := range c.stdout {
				if !strings.Contains(out, s) {
					t.Errorf("stdout lacks %q:\n%s", s, out)
				}
			}
			if c.stderr != "" && !strings.Contains(errOut, c.stderr) {
				t.Errorf("stderr lacks %q: %s", c.stderr, errOut)
			}

			if c.file != "" {
				b, err := os.ReadFile(c.file)
				if err != nil || !bytes.HasPrefix(b, []byte(c.magic)) {
					t.Errorf("%s: %v, starts %q", c.file, err, b[:min(len(b), 8)])
				}
				// issue 39: a chart is created as os.Create would, not 0600.
				probe := filepath.Join(t.TempDir(), "probe")
				if p, err := os.Create(probe); err == nil {
					p.Close()
				}
				want, err1 := os.Stat(probe)
				got, err2 := os.Stat(c.file)
				if err1 != nil || err2 != nil {
					t.Fatalf("stat: %v %v", err1, err2)
				}
				if got.Mode().Perm() != want.Mode().Perm() {
					t.Errorf("%s: mode %v, want %v as os.Create makes", c.file, got.Mode().Perm(), want.Mode().Perm())
				}
			}
		})
	}
}

// TestCapacityAggregateNames: aggregates are shown and selected by their
// Nova host aggregate's name.
func TestCapacityAggregateNames(t *testing.T) {
	db := filepath.Join(t.TempDir(), "cloud.db")
	for _, args := range [][]string{
		{"--db", db, "sample-cloud", "--nodes", "6", "--cells", "1", "--seed", "5"},
		{"--db", db, "migrate", "inventory", "--shared-storage", "ceph=*0[1-3]*"},
	} {
		if _, errOut, code := cmdtest.Rpctl(t, args...); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
	}
	out, _, _ := cmdtest.Rpctl(t, "--db", db, "-f", "json", "capacity", "--flavor", "m1.small")
	var before cmdtest.CapacityOut
	json.Unmarshal([]byte(out), &before)
	if len(before.Aggregates) != 1 {
		t.Fatalf("aggregates %+v", before.Aggregates)
	}
	uuid := before.Aggregates[0].Aggregate
	ctx := context.Background()
	api, err := storage.Open(ctx, dsn.SQLiteFile(db), storage.RoleAPI, "")
	if err != nil {
		t.Fatal(err)
	}
	// A Nova aggregate of the sharing provider's uuid (the sample cloud's
	// own aggregates are not in Placement before migrate aggregates).
	if _, err := api.ExecContext(ctx, `INSERT INTO aggregates (uuid, name) VALUES (?, 'ceph-rack')`, uuid); err != nil {
		t.Fatal(err)
	}
	api.Close()
	out, errOut, code := cmdtest.Rpctl(t, "--db", db, "capacity", "--flavor", "m1.small", "--aggregate", "ceph-rack")
	if code != 0 || !strings.Contains(out, "ceph-rack") || !strings.Contains(out, uuid) {
		t.Errorf("exit %d: %s %s", code, out, errOut)
	}
	if _, errOut, code := cmdtest.Rpctl(t, "--db", db, "capacity", "--aggregate", "no-such-aggregate"); code != 2 || !strings.Contains(errOut, "no Nova host aggregate has that name") {
		t.Errorf("exit %d: %s", code, errOut)
	}
}

// TestCapacityPerFlavorErrors (issue 37 row 14): the errors of several
// flavors are one line each; they were joined by a literal \x0a.
func TestCapacityPerFlavorErrors(t *testing.T) {
	db := filepath.Join(t.TempDir(), "cloud.db")
	for _, args := range [][]string{{"sample-cloud", "--nodes", "3", "--seed", "1"}, {"migrate", "all", "--layout", "nested"}} {
		if _, errOut, code := cmdtest.Rpctl(t, append([]string{"--db", db}, args...)...); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
	}
	// Two flavors of eight one-VCPU groups each: on NUMA children they
	// combine in more ways than --max-steps 10 allows.
	granular := map[string]string{"group_policy": "none"}
	for i := 1; i <= 8; i++ {
		granular[fmt.Sprintf("resources%d:VCPU", i)] = "1"
	}
	var args []string
	for _, name := range []string{"ga", "gb"} {
		b, _ := json.Marshal(map[string]any{"name": name, "vcpus": 8, "ram": 64, "disk": 0, "properties": granular})
		path := filepath.Join(t.TempDir(), name+".json")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, "--flavor", path)
	}
	_, errOut, code := cmdtest.Rpctl(t, append([]string{"--db", db, "capacity", "--max-steps", "10"}, args...)...)
	const hint = "its request groups combine in too many ways: narrow the request (fewer request groups), or lift the bound with --max-steps 0\n"
	want := "rpctl: flavor ga: the search gave up after 10 steps (the --max-steps ceiling): " + hint +
		"rpctl: flavor gb: the search gave up after 10 steps (the --max-steps ceiling): " + hint
	if code != 5 || errOut != want {
		t.Errorf("exit %d, stderr %q; want 5 and %q", code, errOut, want)
	}
}
