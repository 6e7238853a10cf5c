package testdb

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Chroot is another release's own Nova and Placement code: the Debian
// chroot scripts/release-chroot.sh built (issue 33's second integration
// leg). Its tools reach the test's MariaDB over TCP 127.0.0.1 and read and
// write files under the host's /tmp, which --run binds at the same path.
type Chroot struct {
	// Release is the release it holds ("2025.1"); Dir its directory.
	Release, Dir string
}

// ReleaseChroot returns the chroot of release rel named by
// RPCTL_CHROOT_<rel> (dots as underscores: RPCTL_CHROOT_2025_1). The test
// skips when that variable is not set (make test sets it when the chroot
// exists: .ci/run builds it); a variable naming no chroot, or a test not
// run as root (chroot and unshare need it), is unavailable: a failure under
// make test.
func ReleaseChroot(t testing.TB, rel string) *Chroot {
	t.Helper()
	env := "RPCTL_CHROOT_" + strings.ReplaceAll(rel, ".", "_")
	dir := os.Getenv(env)
	if dir == "" {
		t.Skipf("skipping: %s is not set: build the chroot with scripts/release-chroot.sh %s DIR and set %s=DIR (make test does when DIR is the Makefile's CHROOT_%s)",
			env, rel, env, strings.ReplaceAll(rel, ".", "_"))
	}
	if _, err := os.Stat(filepath.Join(dir, ".rpctl-release-chroot")); err != nil {
		unavailable(t, "%s=%s: not a chroot built by scripts/release-chroot.sh: %v", env, dir, err)
	}
	if os.Geteuid() != 0 {
		unavailable(t, "%s: running a command in a chroot needs root", env)
	}
	return &Chroot{Release: rel, Dir: dir}
}

func (c *Chroot) script() string { return filepath.Join(RepoRoot(), "scripts", "release-chroot.sh") }

// Command is CMD run inside the chroot (scripts/release-chroot.sh --run).
func (c *Chroot) Command(args ...string) *exec.Cmd {
	return exec.Command(c.script(), append([]string{"--run", c.Dir, "--"}, args...)...)
}

// Run runs a command inside the chroot and returns its output (stdout and
// stderr) and error.
func (c *Chroot) Run(args ...string) ([]byte, error) {
	return c.Command(args...).CombinedOutput()
}

// Python runs a Python program inside the chroot with the release's
// python3 and returns its stdout, stderr and exit code; a failure to run
// it at all ends the test.
func (c *Chroot) Python(t testing.TB, program string, dir string) (stdout, stderr string, code int) {
	t.Helper()
	args := []string{"python3", "-c", program}
	if dir != "" {
		// The chroot's env -i drops the caller's working directory: cd
		// inside (oslo.config looks for policy files beside the config
		// files, and the tools resolve relative paths from there).
		args = []string{"/bin/sh", "-c", `cd "$1" && shift && exec "$@"`, "sh", dir, "python3", "-c", program}
	}
	cmd := c.Command(args...)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("chroot %s: python3: %v", c.Release, err)
	}
	return out.String(), errOut.String(), code
}

// TempDir is a directory the chroot sees at the same path: under the
// host's /tmp (the test's TMPDIR when it is there, as under make test),
// removed when the test ends.
func (c *Chroot) TempDir(t testing.TB) string {
	t.Helper()
	parent := "/tmp"
	if d := os.TempDir(); d == "/tmp" || strings.HasPrefix(d, "/tmp/") {
		parent = d
	}
	dir, err := os.MkdirTemp(parent, "rpctl-chroot-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// DBSync creates the release's schemas with its own tools: nova-manage
// api_db sync and db sync (Debian ships no nova-manage entry point: the
// module is called) on api and cell, placement-manage db sync on placement
// (each may be nil; db sync needs api too: it looks for cell0 there).
func (c *Chroot) DBSync(t testing.TB, cell, api, placement *MySQL) {
	t.Helper()
	c.DBSyncTo(t, cell, api, placement, Heads{})
}

// Heads are alembic revisions to stop a db sync at (empty: the newest).
type Heads struct{ Cell, API, Placement string }

// DBSyncTo is DBSync stopped at the revisions heads names: the release's
// own migrations (released migrations never change) run to an older
// release's heads, whose schema they then make.
func (c *Chroot) DBSyncTo(t testing.TB, cell, api, placement *MySQL, heads Heads) {
	t.Helper()
	dir := c.TempDir(t)
	if cell != nil || api != nil {
		conf := "[DEFAULT]\ntransport_url = fake://\n"
		if cell != nil {
			conf += "[database]\nconnection = " + cell.URL + "\n"
		}
		if api != nil {
			conf += "[api_database]\nconnection = " + api.URL + "\n"
		}
		p := filepath.Join(dir, "nova.conf")
		if err := os.WriteFile(p, []byte(conf), 0o644); err != nil {
			t.Fatal(err)
		}
		var syncs [][]string
		withRev := func(args []string, rev string) []string {
			if rev != "" {
				args = append(args, rev)
			}
			return args
		}
		if api != nil {
			syncs = append(syncs, withRev([]string{"api_db", "sync"}, heads.API))
		}
		if cell != nil {
			syncs = append(syncs, withRev([]string{"db", "sync"}, heads.Cell))
		}
		for _, args := range syncs {
			argv := append([]string{"nova-manage", "--config-file", p}, args...)
			py := "import sys; from nova.cmd import manage; sys.argv=" + pyList(argv) + "; sys.exit(manage.main())"
			if out, errOut, code := c.Python(t, py, ""); code != 0 {
				t.Fatalf("nova-manage %s (%s): exit %d\n%s%s", strings.Join(args, " "), c.Release, code, out, errOut)
			}
		}
	}
	if placement != nil {
		p := filepath.Join(dir, "placement.conf")
		if err := os.WriteFile(p, []byte("[placement_database]\nconnection = "+placement.URL+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if heads.Placement == "" {
			if out, err := c.Run("placement-manage", "--config-file", p, "db", "sync"); err != nil {
				t.Fatalf("placement-manage db sync (%s): %v\n%s", c.Release, err, out)
			}
		} else {
			// placement-manage db sync always goes to head: its
			// migration.upgrade, configured as placement-manage does.
			py := "from oslo_config import cfg\nfrom placement import conf, db_api\nfrom placement.db.sqlalchemy import migration\n" +
				"c = cfg.ConfigOpts()\nconf.register_opts(c)\nc(['--config-file', '" + p + "'], project='placement')\ndb_api.configure(c)\n" +
				"migration.upgrade('" + heads.Placement + "')\n"
			if out, errOut, code := c.Python(t, py, ""); code != 0 {
				t.Fatalf("placement alembic upgrade %s (%s): exit %d\n%s%s", heads.Placement, c.Release, code, out, errOut)
			}
		}
	}
}

// PlacementAPI starts the release's own placement-api (noauth2, its
// wsgiref server) inside the chroot on 127.0.0.1 against the database at
// sqlalchemyURL, and returns its base URL; extraConf is appended to its
// placement.conf. The server runs in a process group of its own, stopped
// when the test ends; its command line names its config directory, under
// the test's TMPDIR, so scripts/stop-test-servers.sh finds it too.
func (c *Chroot) PlacementAPI(t testing.TB, sqlalchemyURL, extraConf string) string {
	t.Helper()
	dir := c.TempDir(t)
	conf := fmt.Sprintf("[DEFAULT]\ndebug = false\n[api]\nauth_strategy = noauth2\n[placement_database]\nconnection = %s\n[placement]\nrandomize_allocation_candidates = false\n%s", sqlalchemyURL, extraConf)
	if err := os.WriteFile(filepath.Join(dir, "placement.conf"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	port := FreePort(t)
	log, err := os.Create(filepath.Join(dir, "api.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	cmd := c.Command("env", "OS_PLACEMENT_CONFIG_DIR="+dir, "placement-api", "--host", "127.0.0.1", "--port", fmt.Sprint(port))
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("placement-api (%s): %v", c.Release, err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		// The group: the script, unshare's shell, chroot's python.
		syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
	})
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	placementLogs.Store(base, log.Name())
	for range 480 {
		select {
		case <-done:
			b, _ := os.ReadFile(log.Name())
			t.Fatalf("placement-api (%s) exited:\n%s", c.Release, b)
		default:
		}
		req, _ := http.NewRequest(http.MethodGet, base+"/", nil)
		req.Header.Set("X-Auth-Token", "admin")
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				if !ListeningIn(cmd.Process.Pid, port) {
					// Another test's server took the port first: ours
					// cannot bind it, and its answers are a stranger's.
					t.Fatalf("placement-api (%s): port %d is held by another server", c.Release, port)
				}
				return base
			}
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Fatalf("placement-api (%s): no answer on %s after 120s", c.Release, base)
	return ""
}

// pyList is args as a Python list literal.
func pyList(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = fmt.Sprintf("%q", a)
	}
	return "[" + strings.Join(q, ", ") + "]"
}
