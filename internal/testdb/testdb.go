// Package testdb gives integration tests real services: a throwaway MariaDB
// server with a fresh database per test, and the real Placement API on
// 127.0.0.1. Under `make test` (RPCTL_INTEGRATION=1) and in CI (CI=true) a
// service that cannot be had is a test failure; elsewhere the test is skipped
// with a message that says what is missing.
package testdb

import (
	"bufio"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/rpctl/rpctl/internal/dsn"
	"github.com/rpctl/rpctl/storage"
)

// Required reports whether a missing service must fail the test rather than
// skip it.
func Required() bool {
	return os.Getenv("CI") == "true" || os.Getenv("RPCTL_INTEGRATION") == "1"
}

// MySQLWanted reports whether a test that can run on SQLite alone should
// run on MySQL too: a server is configured, or a missing one must fail.
func MySQLWanted() bool {
	return Required() || strings.TrimSpace(os.Getenv("RPCTL_TEST_MYSQL")) != ""
}

func unavailable(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if Required() {
		t.Fatalf("integration service unavailable: %s", msg)
	}
	t.Skipf("skipping: %s (run `make test`, which starts it)", msg)
}

// RepoRoot is the checkout's top directory.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

var server struct {
	once   sync.Once
	prefix string // go-sql-driver DSN up to and including "/"
	err    error
}

// serverPrefix returns the admin DSN prefix of a MariaDB server: the one in
// RPCTL_TEST_MYSQL, else one started with scripts/mariadb-start.sh in a
// private directory (shared by the test binaries of one run through a lock).
func serverPrefix() (string, error) {
	server.once.Do(func() {
		if p := os.Getenv("RPCTL_TEST_MYSQL"); p != "" {
			server.prefix = p
			return
		}
		if _, err := exec.LookPath("mariadbd"); err != nil {
			if _, err2 := os.Stat("/usr/sbin/mariadbd"); err2 != nil {
				server.err = fmt.Errorf("no RPCTL_TEST_MYSQL and no mariadbd installed (apt-get install mariadb-server)")
				return
			}
		}
		dir := filepath.Join(os.TempDir(), "rpctl-test-mariadb")
		os.MkdirAll(dir, 0o755)
		lock, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
		if err != nil {
			server.err = err
			return
		}
		defer lock.Close()
		syscall.Flock(int(lock.Fd()), syscall.LOCK_EX)
		defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
		out, err := exec.Command(filepath.Join(RepoRoot(), "scripts", "mariadb-start.sh"), dir, "33307").CombinedOutput()
		if err != nil {
			server.err = fmt.Errorf("scripts/mariadb-start.sh: %v: %s", err, strings.TrimSpace(string(out)))
			return
		}
		vars := parseAssignments(string(out))
		server.prefix = vars["RPCTL_TEST_MYSQL"]
		if server.prefix == "" {
			server.err = fmt.Errorf("scripts/mariadb-start.sh printed no RPCTL_TEST_MYSQL: %s", out)
		}
	})
	return server.prefix, server.err
}

func parseAssignments(s string) map[string]string {
	vars := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), "=")
		if ok {
			vars[k] = strings.Trim(v, "'")
		}
	}
	return vars
}

// MySQL is a fresh database on the test server.
type MySQL struct {
	Name string
	// DSN is a go-sql-driver DSN for the database.
	DSN string
	// URL is the same database as a SQLAlchemy URL (what nova.conf holds).
	URL string
	// Admin is an open connection to the server, without a default database.
	Admin *sql.DB
}

// NewMySQL creates an empty database for the test and drops it afterwards.
func NewMySQL(t testing.TB) *MySQL {
	t.Helper()
	prefix, err := serverPrefix()
	if err != nil {
		unavailable(t, "MariaDB: %v", err)
	}
	cfg, err := mysql.ParseDSN(prefix)
	if err != nil {
		t.Fatalf("RPCTL_TEST_MYSQL is not a go-sql-driver DSN: %v", err)
	}
	cfg.DBName = ""
	admin, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := admin.PingContext(ctx); err != nil {
		admin.Close()
		unavailable(t, "MariaDB at %s: %v", cfg.Addr, err)
	}
	var b [4]byte
	rand.Read(b[:])
	name := "rpctl_" + sanitize(t.Name()) + "_" + hex.EncodeToString(b[:])
	// 58, not MySQL's 64: sample-cloud creates Nova's "<name>_cell0" beside
	// a cell database.
	if len(name) > 58 {
		name = name[:49] + "_" + hex.EncodeToString(b[:])
	}
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE `"+name+"` CHARACTER SET utf8mb3"); err != nil {
		admin.Close()
		t.Fatalf("create test database: %v", err)
	}
	t.Cleanup(func() {
		admin.Exec("DROP DATABASE IF EXISTS `" + name + "`")
		admin.Exec("DROP DATABASE IF EXISTS `" + name + "_cell0`")
		admin.Close()
	})
	dbCfg := cfg.Clone()
	dbCfg.DBName = name
	dbCfg.ParseTime = true
	url := fmt.Sprintf("mysql+pymysql://%s:%s@%s/%s?charset=utf8", cfg.User, cfg.Passwd, cfg.Addr, name)
	return &MySQL{Name: name, DSN: dbCfg.FormatDSN(), URL: url, Admin: admin}
}

func sanitize(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// Python is Debian's interpreter: another python3 earlier on PATH (pyenv)
// does not see python3-nova and python3-placement.
const Python = "/usr/bin/python3"

// RequirePython skips (or fails under make test/CI) when the Debian OpenStack
// packages a test compares against are not installed.
func RequirePython(t testing.TB, modules ...string) {
	t.Helper()
	args := []string{"-c", "import " + strings.Join(modules, ", ")}
	if out, err := exec.Command(Python, args...).CombinedOutput(); err != nil {
		unavailable(t, "Python modules %s: %v: %s (apt-get install python3-nova python3-placement python3-pymysql)", strings.Join(modules, ", "), err, lastLine(out))
	}
}

func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return lines[len(lines)-1]
}

// PlacementAPI starts the real placement-api on 127.0.0.1 against the
// database at sqlalchemyURL and returns its base URL; it is stopped when the
// test ends.
func PlacementAPI(t testing.TB, sqlalchemyURL string) string {
	t.Helper()
	return startPlacement(t, sqlalchemyURL, 0, "", 0)
}

// PlacementAPIConf is PlacementAPI on a given port with extra placement.conf
// text; any extra text switches [api] auth_strategy to keystone, so it
// carries the [keystone_authtoken] section.
func PlacementAPIConf(t testing.TB, sqlalchemyURL string, port int, extraConf string) string {
	t.Helper()
	return startPlacement(t, sqlalchemyURL, port, extraConf, 0)
}

// PlacementAPIUWSGI is PlacementAPI served by uWSGI with the given number of
// worker processes and HTTP/1.1 keep-alive, as operators deploy it, for
// benchmarks that must not be bound by the single-threaded test server.
func PlacementAPIUWSGI(t testing.TB, sqlalchemyURL string, processes int) string {
	t.Helper()
	if _, err := exec.LookPath("uwsgi"); err != nil {
		unavailable(t, "uwsgi not installed (apt-get install uwsgi uwsgi-plugin-python3)")
	}
	return startPlacement(t, sqlalchemyURL, 0, "", processes)
}

// startPlacement starts placement-api on port, or, with port 0, on a free
// port, picking another while the one picked turns out to be another
// server's (the script's exit 3).
func startPlacement(t testing.TB, sqlalchemyURL string, port int, extraConf string, uwsgiProcesses int) string {
	t.Helper()
	if _, err := exec.LookPath("placement-api"); err != nil {
		unavailable(t, "placement-api not installed (apt-get install python3-placement)")
	}
	for attempt := 1; ; attempt++ {
		p := port
		if p == 0 {
			p = FreePort(t)
		}
		base, err := tryStartPlacement(t, sqlalchemyURL, p, extraConf, uwsgiProcesses)
		if err == nil {
			return base
		}
		if !errors.Is(err, errPortTaken) || port != 0 || attempt == 5 {
			t.Fatalf("start placement-api: %v", err)
		}
		t.Logf("placement-api: %v; picking another port", err)
	}
}

func tryStartPlacement(t testing.TB, sqlalchemyURL string, port int, extraConf string, uwsgiProcesses int) (string, error) {
	dir := t.TempDir()
	args := []string{dir, fmt.Sprint(port), sqlalchemyURL}
	if extraConf != "" {
		extra := filepath.Join(dir, "extra.conf")
		if err := os.WriteFile(extra, []byte(extraConf), 0o600); err != nil {
			return "", err
		}
		args = append(args, extra)
	}
	start := exec.Command(filepath.Join(RepoRoot(), "scripts", "placement-api-start.sh"), args...)
	if uwsgiProcesses > 0 {
		start.Env = append(os.Environ(), fmt.Sprintf("PLACEMENT_UWSGI_PROCESSES=%d", uwsgiProcesses))
	}
	out, err := start.CombinedOutput()
	if err != nil {
		return "", startError(port, err, out)
	}
	vars := parseAssignments(string(out))
	placementLogs.Store(vars["PLACEMENT_URL"], filepath.Join(dir, "api.log"))
	var pid int
	fmt.Sscan(vars["PLACEMENT_PID"], &pid)
	t.Cleanup(func() { stop(pid) })
	return vars["PLACEMENT_URL"], nil
}

// startError is a start script's failure, errPortTaken for its exit 3.
func startError(port int, err error, out []byte) error {
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == startExit3 {
		return fmt.Errorf("port %d: %w", port, errPortTaken)
	}
	return fmt.Errorf("%v\n%s", err, out)
}

func stop(pid int) {
	if pid > 0 {
		syscall.Kill(pid, syscall.SIGTERM)
		for i := 0; i < 50 && syscall.Kill(pid, 0) == nil; i++ {
			time.Sleep(20 * time.Millisecond)
		}
		syscall.Kill(pid, syscall.SIGKILL)
	}
}

// Keystone starts the real Keystone (Debian's keystone package, SQLite)
// on 127.0.0.1 with an admin user (password adminPassword, project admin,
// domain Default) and a catalog naming Placement at placementURL; it
// returns the v3 auth URL and is stopped when the test ends.
func Keystone(t testing.TB, adminPassword, placementURL string) string {
	t.Helper()
	if _, err := exec.LookPath("keystone-manage"); err != nil {
		unavailable(t, "keystone-manage not installed (apt-get install keystone)")
	}
	for attempt := 1; ; attempt++ {
		dir := t.TempDir()
		port := FreePort(t)
		out, err := exec.Command(filepath.Join(RepoRoot(), "scripts", "keystone-start.sh"), dir, fmt.Sprint(port), adminPassword, placementURL).CombinedOutput()
		if err != nil {
			err = startError(port, err, out)
			if errors.Is(err, errPortTaken) && attempt < 5 {
				t.Logf("keystone: %v; picking another port", err)
				continue
			}
			t.Fatalf("start keystone: %v", err)
		}
		vars := parseAssignments(string(out))
		var pid int
		fmt.Sscan(vars["KEYSTONE_PID"], &pid)
		t.Cleanup(func() { stop(pid) })
		return vars["KEYSTONE_URL"]
	}
}

var placementLogs sync.Map // PLACEMENT_URL -> its api.log

// PlacementLog returns what the placement-api PlacementAPI started at base
// has logged so far (its tracebacks, for a 500).
func PlacementLog(base string) []byte {
	p, ok := placementLogs.Load(base)
	if !ok {
		return nil
	}
	b, _ := os.ReadFile(p.(string))
	return b
}

// PlacementGet performs a GET against the real Placement at microversion mv
// (e.g. "1.39") and returns the status and body.
func PlacementGet(t testing.TB, base, path, mv string) (int, []byte) {
	t.Helper()
	return PlacementDo(t, http.MethodGet, base, path, mv, "")
}

// PlacementDo performs a request with an optional JSON body.
func PlacementDo(t testing.TB, method, base, path, mv, body string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Auth-Token", "admin")
	req.Header.Set("OpenStack-API-Version", "placement "+mv)
	req.Header.Set("Accept", "application/json")
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

// BuildRpctl builds the rpctl command into a temporary directory, for
// tests that run (and signal) it as a process; it is installed there as
// Install says, so the benchmarks that time it time what an operator runs.
func BuildRpctl(t testing.TB) string {
	t.Helper()
	bin, err := BuildRpctlIn(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// BuildRpctlIn builds the rpctl command into dir, with env added to go
// build's environment, and installs it there as Install says; it returns
// the installed binary's path.
func BuildRpctlIn(dir string, env ...string) (string, error) {
	linked := filepath.Join(dir, "rpctl.linked")
	cmd := exec.Command("go", "build", "-o", linked, "./cmd/rpctl")
	cmd.Dir = RepoRoot()
	cmd.Env = append(os.Environ(), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	bin := filepath.Join(dir, "rpctl")
	return bin, Install(linked, bin)
}

// Install copies the binary go build wrote at linked to dst with
// install(1), as `make install` does (dpkg leaves the page cache the same
// way, measured), for tests and benchmarks that time it as a process.
//
// Why not run the linked file itself: the Go linker writes its output
// through a shared mapping, and on this kernel that leaves the file's page
// cache slower to fault in. Touching every page of rpctl took 1.6-1.9 ms
// for the linked file and 1.0-1.1 ms after install(1) (0.6-0.7 ms for
// the stripped binary dpkg installed from `make deb`, against 1.0 ms
// linked); `rpctl candidates` on placement-perfload ran 0.8-1.6 ms
// slower from the linked file (paired medians of 101-151 alternated runs,
// 2026-11-28). No operator's binary is in that state: it is gone once the
// file is copied, installed or read back from disk.
func Install(linked, dst string) error {
	if out, err := exec.Command("install", "-m", "0755", linked, dst).CombinedOutput(); err != nil {
		return fmt.Errorf("install %s %s: %v: %s", linked, dst, err, out)
	}
	return nil
}

// Open opens the database a DSN or URL names, closed when the test ends.
func Open(t testing.TB, raw string, role storage.Role) *storage.DB {
	t.Helper()
	tg, err := dsn.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	db, err := storage.Open(context.Background(), tg, role, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// QueryRoundTrip is the median time of n `SELECT 1` on one open connection
// to the database dsn names: what one round trip costs there, for the
// benchmarks that put a delaying proxy between rpctl and MariaDB to say
// what delay they really measured under.
func QueryRoundTrip(tb testing.TB, dsn string, n int) time.Duration {
	tb.Helper()
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	ds := make([]time.Duration, n)
	var one int
	for i := range ds {
		start := time.Now()
		if err := db.QueryRow("SELECT 1").Scan(&one); err != nil {
			tb.Fatal(err)
		}
		ds[i] = time.Since(start)
	}
	slices.Sort(ds)
	return ds[n/2]
}

// Addr is the host:port of m's server.
func (m *MySQL) Addr() string {
	cfg, err := mysql.ParseDSN(m.DSN)
	if err != nil {
		panic(err) // NewMySQL formatted it
	}
	return cfg.Addr
}

// Through is m reached through addr, a proxy forwarding to m's server
// (internal/mysqlproxy): the same database and admin connection, its DSN
// and URL naming addr, so that what a tool opens with them crosses the
// proxy.
func (m *MySQL) Through(addr string) *MySQL {
	cfg, err := mysql.ParseDSN(m.DSN)
	if err != nil {
		panic(err) // NewMySQL formatted it
	}
	via := *m
	via.URL = strings.Replace(m.URL, "@"+cfg.Addr+"/", "@"+addr+"/", 1)
	cfg.Addr = addr
	via.DSN = cfg.FormatDSN()
	return &via
}
