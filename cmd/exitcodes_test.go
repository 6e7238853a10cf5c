package cmd_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/cmd"
	"github.com/rpctl/rpctl/cmd/internal/cmdtest"
	"github.com/rpctl/rpctl/cmd/internal/cmdutil"
	"github.com/rpctl/rpctl/internal/testdb"
)

// validArgs are the arguments a command needs to get past its own input
// checks to the databases (a command not listed needs none).
var validArgs = map[string][]string{
	"rpctl candidates": {"--resources", "VCPU:1"},
}

// offlineCommands touch neither config files nor databases, so the
// "config error" and "database down" rows do not apply to them. A new
// command that reads no database belongs here.
var offlineCommands = map[string]bool{
	// Needs a valid -f provider.yaml before it reads config or databases;
	// its own tests cover its codes.
	"rpctl provider apply": true,
}

// servesWithoutDatabase are the daemons a database that cannot be read
// does not stop at start (issue 39: the exporter warns and serves, and
// each collection counts the error; TestExporterStartsWithoutDatabase), so
// the "database down" row does not apply to them.
var servesWithoutDatabase = map[string]bool{"rpctl exporter": true}

// TestExitCodeTable is the proof: every command × {success, more may
// remain / warning, failure, usage error, config error, database down} →
// its documented exit code, against a real MariaDB, and for "database down"
// a private MariaDB server that held the databases and was then stopped.
func TestExitCodeTable(t *testing.T) {
	root := cmd.NewCmdRoot(commandTree(), "test")
	commands := cmdutil.RunnableCommands(root)
	argsOf := func(c string, extra ...string) []string {
		a := strings.Fields(strings.TrimPrefix(c, "rpctl "))
		return append(append(a, validArgs[c]...), extra...)
	}
	documented := func(path string, code int) bool {
		for _, c := range commands {
			if c.CommandPath() == path {
				for _, e := range cmdutil.ExitCodesOf(c) {
					if e.Code == code {
						return true
					}
				}
			}
		}
		return false
	}
	type row struct {
		cmd   string // command path
		args  []string
		want  int
		state string
	}
	check := func(t *testing.T, r row) {
		t.Helper()
		out, errOut, code := cmdtest.Rpctl(t, r.args...)
		if code != r.want {
			t.Errorf("%s [%s] %q: exit %d, want %d\nstdout: %s\nstderr: %s", r.cmd, r.state, r.args, code, r.want, out, errOut)
		}
		if !documented(r.cmd, r.want) {
			t.Errorf("%s: exit %d (%s) is not in its --help table", r.cmd, r.want, r.state)
		}
		if code > 2 && strings.Count(errOut, "\n") != 1 {
			t.Errorf("%s [%s]: error not one line on stderr: %q", r.cmd, r.state, errOut)
		}
	}

	t.Run("results", func(t *testing.T) {
		c1, api, p := testdb.NewMySQL(t), testdb.NewMySQL(t), testdb.NewMySQL(t)
		bad := testdb.NewMySQL(t)
		with := func(args ...string) []string {
			return append([]string{"--cell-db", c1.URL, "--api-db", api.URL, "--placement-db", p.URL}, args...)
		}
		zero := filepath.Join(t.TempDir(), "nova.conf")
		if err := os.WriteFile(zero, []byte("[DEFAULT]\ncpu_allocation_ratio = 0.0\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, r := range []row{
			{"rpctl init", with("init"), 0, "success"},
			{"rpctl init", with("init"), 0, "success (already there)"},
			{"rpctl sample-cloud", with("sample-cloud", "--nodes", "12", "--seed", "3"), 0, "success"},
			{"rpctl compute-node list", with("compute-node", "list"), 0, "success"},
			{"rpctl status", with("status"), 2, "failure (nova-status' Placement API and Service User Token Configuration: no nova.conf)"},
			{"rpctl status", with("status", "--check", "rpctl"), 1, "warning (before the migration)"},
			{"rpctl upgrade check", with("upgrade", "check", "--check", "rpctl"), 1, "warning (before the migration)"},
			{"rpctl migrate all", with("migrate", "all", "--max-count", "0"), 127, "bad --max-count"},
			{"rpctl migrate inventory", with("migrate", "inventory", "--max-count", "-3"), 127, "bad --max-count"},
			{"rpctl migrate inventory", with("migrate", "inventory", "--max-count", "3"), 1, "more may remain"},
			{"rpctl migrate ratios", with("migrate", "ratios", "--max-count", "1"), 1, "more may remain"},
			{"rpctl migrate all", with("migrate", "all", "--max-count", "2"), 1, "more may remain"},
			{"rpctl migrate all", with("migrate", "all"), 0, "success"},
			{"rpctl migrate inventory", with("migrate", "inventory"), 0, "success (nothing left)"},
			{"rpctl migrate ratios", with("migrate", "ratios"), 0, "success (nothing left)"},
			{"rpctl status", with("status", "--check", "rpctl", "--check", "placement-status"), 0, "success"},
			{"rpctl upgrade check", with("upgrade", "check", "--check", "rpctl", "--check", "placement-status"), 0, "success"},
			{"rpctl status", with("--config-file", zero, "status"), 2, "failure (cpu_allocation_ratio = 0.0)"},
			{"rpctl upgrade check", with("--config-file", zero, "upgrade", "check"), 2, "failure (cpu_allocation_ratio = 0.0)"},
			{"rpctl candidates", with("candidates", "--resources", "VCPU:1", "--limit", "2"), 0, "success"},
			{"rpctl candidates", with("candidates", "--resources", "VCPU:100000"), 0, "success (no candidate)"},
			{"rpctl candidates", with("candidates", "--resources", "VCPU:x"), 2, "invalid request"},
			{"rpctl sample-cloud", []string{"--cell-db", bad.URL, "sample-cloud", "--nodes", "5", "--bad-rows", "2"}, 0, "success"},
			{"rpctl migrate inventory", []string{"--cell-db", bad.URL, "--placement-db", p.URL, "migrate", "inventory"}, 2, "failed (bad rows)"},
			{"rpctl migrate all", []string{"--cell-db", bad.URL, "--placement-db", p.URL, "migrate", "all"}, 2, "failed (bad rows)"},
		} {
			check(t, r)
		}
	})

	t.Run("usage and config errors", func(t *testing.T) {
		live := testdb.NewMySQL(t)
		missing := filepath.Join(t.TempDir(), "missing.conf")
		malformed := filepath.Join(t.TempDir(), "nova.conf")
		os.WriteFile(malformed, []byte("[database\nconnection = "+live.URL+"\n"), 0o644)
		badRatio := filepath.Join(t.TempDir(), "ratio.conf")
		os.WriteFile(badRatio, []byte("[DEFAULT]\ncpu_allocation_ratio = lots\n[database]\nconnection = "+live.URL+"\n"), 0o644)
		for _, c := range commands {
			path := c.CommandPath()
			check(t, row{path, argsOf(path, "--no-such-flag"), 255, "usage: unknown flag"})
			check(t, row{path, append([]string{"--no-such-flag"}, argsOf(path)...), 255, "usage: unknown flag before the command"})
			if offlineCommands[path] {
				continue
			}
			check(t, row{path, append([]string{"--config-file", missing}, argsOf(path)...), 255, "config: missing file"})
			check(t, row{path, append([]string{"--config-file", malformed}, argsOf(path)...), 255, "config: malformed file"})
			check(t, row{path, append([]string{"--config-file", badRatio}, argsOf(path)...), 255, "config: bad ratio"})
		}
	})

	t.Run("database down", func(t *testing.T) {
		srv := testdb.NewPrivateMySQL(t)
		cell, api, placement := srv.NewDatabase(t, "nova"), srv.NewDatabase(t, "nova_api"), srv.NewDatabase(t, "placement")
		dbs := []string{"--cell-db", cell, "--api-db", api, "--placement-db", placement}
		// The databases were there and held a cloud ...
		for _, args := range [][]string{{"init"}, {"sample-cloud", "--nodes", "5"}} {
			if out, errOut, code := cmdtest.Rpctl(t, append(dbs, args...)...); code != 0 {
				t.Fatalf("%q on the private server: exit %d\n%s%s", args, code, out, errOut)
			}
		}
		// ... until the server went down.
		srv.Stop(t)
		for _, c := range commands {
			if path := c.CommandPath(); !offlineCommands[path] && !servesWithoutDatabase[path] {
				check(t, row{path, append(append([]string(nil), dbs...), argsOf(path)...), 255, "database down"})
			}
		}
		conf := filepath.Join(t.TempDir(), "nova.conf")
		os.WriteFile(conf, []byte("[database]\nconnection = "+cell+"\n[api_database]\nconnection = "+api+"\n[placement_database]\nconnection = "+placement+"\n"), 0o644)
		check(t, row{"rpctl migrate all", []string{"--config-file", conf, "migrate", "all", "--max-count", "10"}, 255, "database down (from nova.conf)"})
	})
}
