package cmd_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/cmd/internal/cmdtest"
)

// TestNumberFlags: counts and ratios are parsed by one set of helpers
// (internal/flagnum) with the codes each command documents: overflow,
// exponent forms, spaces, negatives and NaN are refused in one line
// naming the flag, before anything is written.
func TestNumberFlags(t *testing.T) {
	db := cmdtest.FlavorCloud(t)
	type row struct {
		args []string
		code int
		want string
	}
	check := func(r row) {
		t.Helper()
		out, errOut, code := cmdtest.Rpctl(t, r.args...)
		if code != r.code || !strings.Contains(errOut, r.want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%q: exit %d, want %d and one line with %q\nstdout: %s\nstderr: %s", r.args, code, r.code, r.want, out, errOut)
		}
	}
	for _, r := range []row{
		{[]string{"--db", db, "migrate", "ratios", "--dry-run", "--max-count", "18446744073709551616"}, 127, `--max-count "18446744073709551616": must be at most`},
		{[]string{"--db", db, "migrate", "ratios", "--max-count", "1e3"}, 127, `--max-count "1e3": not a whole number`},
		{[]string{"--db", db, "migrate", "inventory", "--max-count", " 5"}, 127, `--max-count " 5": not a whole number`},
		{[]string{"--db", db, "migrate", "all", "--max-count", "-1"}, 127, "must be at least 1"},
		{[]string{"--db", db, "migrate", "ratios", "--dry-run", "--initial-cpu-allocation-ratio", "1e39"}, 127, "greater than 3.40282e+38"},
		{[]string{"--db", db, "migrate", "ratios", "--initial-cpu-allocation-ratio", "nan"}, 127, "not a decimal number"},
		{[]string{"--db", db, "migrate", "all", "--cpu-allocation-ratio", "-2"}, 127, "must not be negative"},
	} {
		check(r)
	}
	var provs []struct{ UUID string }
	out, _, _ := cmdtest.Rpctl(t, "--db", db, "provider", "list", "-f", "json")
	if err := json.Unmarshal([]byte(out), &provs); err != nil || len(provs) == 0 {
		t.Fatalf("provider list: %v %s", err, out)
	}
	p := provs[0].UUID
	before, _, _ := cmdtest.Rpctl(t, "--db", db, "inventory", "list", p, "-f", "json")
	for _, r := range []row{
		{[]string{"--db", db, "inventory", "set", p, "VCPU:allocation_ratio=nan", "--amend"}, 2, "allocation_ratio must be a finite, non-negative decimal number"},
		{[]string{"--db", db, "inventory", "set", p, "VCPU:allocation_ratio=inf", "--amend"}, 2, "allocation_ratio must be a finite"},
		{[]string{"--db", db, "inventory", "set", p, "VCPU:reserved=1", "--amend", "--attempts", "0"}, 2, `--attempts "0": must be at least 1`},
		{[]string{"--db", db, "inventory", "delete", p, "VCPU", "--attempts", "-1"}, 2, `--attempts "-1": must be at least 1`},
		{[]string{"--db", db, "provider", "trait", "add", p, "CUSTOM_X", "--attempts", "0"}, 2, "must be at least 1"},
	} {
		check(r)
	}
	if after, _, _ := cmdtest.Rpctl(t, "--db", db, "inventory", "list", p, "-f", "json"); after != before {
		t.Errorf("a refused edit changed the inventory:\n%s\n%s", before, after)
	}
	for _, nodes := range []string{"-1", "0", "4611686018427387904", "18446744073709551616", "1e3"} {
		fresh := filepath.Join(t.TempDir(), "cloud.db")
		check(row{[]string{"--db", fresh, "sample-cloud", "--nodes", nodes}, 127, `--nodes "` + nodes + `"`})
		if _, err := os.Stat(fresh); err == nil {
			t.Errorf("--nodes %s: the database file was created", nodes)
		}
	}
	check(row{[]string{"--db", filepath.Join(t.TempDir(), "c.db"), "sample-cloud", "--bad-rows", "-2"}, 127, `--bad-rows "-2": must be at least 0`})
}

// TestInventorySetBatchValidatesFirst: `inventory set AGG --aggregate`
// checks every provider's records before it writes any: reserved=40 is
// valid on the hosts of 48 VCPUs and more but not on those of 32, so
// nothing is written, and the refused providers are named.
func TestInventorySetBatchValidatesFirst(t *testing.T) {
	db := cmdtest.FlavorCloud(t)
	var provs []struct{ UUID string }
	out, _, _ := cmdtest.Rpctl(t, "--db", db, "provider", "list", "-f", "json")
	if err := json.Unmarshal([]byte(out), &provs); err != nil || len(provs) < 2 {
		t.Fatalf("provider list: %v %s", err, out)
	}
	const agg = "aaaaaaaa-0000-4000-8000-0000000000a1"
	snapshot := func() string {
		var b strings.Builder
		for _, p := range provs {
			o, _, _ := cmdtest.Rpctl(t, "--db", db, "inventory", "list", p.UUID, "-f", "json")
			b.WriteString(o)
		}
		return b.String()
	}
	for _, p := range provs {
		if _, errOut, code := cmdtest.Rpctl(t, "--db", db, "provider", "aggregate", "add", p.UUID, agg); code != 0 {
			t.Fatalf("aggregate add: %d %s", code, errOut)
		}
	}
	before := snapshot()
	_, errOut, code := cmdtest.Rpctl(t, "--db", db, "inventory", "set", agg, "--aggregate", "--amend", "--yes", "VCPU:reserved=40")
	if code != 2 || !strings.Contains(errOut, "reserved 40 is greater than total 32") || !strings.Contains(errOut, "nothing written") {
		t.Errorf("exit %d, want 2 naming the providers refused and nothing written:\n%s", code, errOut)
	}
	if after := snapshot(); after != before {
		t.Error("a batch with an invalid record wrote the valid ones")
	}
	if _, errOut, code := cmdtest.Rpctl(t, "--db", db, "inventory", "set", agg, "--aggregate", "--amend", "--yes", "VCPU:reserved=2"); code != 0 {
		t.Errorf("a valid batch: exit %d: %s", code, errOut)
	}
}
