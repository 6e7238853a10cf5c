package testdb

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

// PrivateMySQL is a MariaDB server of the test's own, on its own datadir
// and port, for tests that must stop a server (a "database down" case)
// without touching the shared one.
type PrivateMySQL struct {
	// Prefix is the admin go-sql-driver DSN up to and including "/".
	Prefix string
	pid    int
	addr   string
}

// NewPrivateMySQL starts a private server with scripts/mariadb-start.sh; it
// is stopped when the test ends (or earlier by Stop).
func NewPrivateMySQL(t testing.TB) *PrivateMySQL {
	t.Helper()
	if _, err := exec.LookPath("mariadbd"); err != nil {
		if _, err2 := os.Stat("/usr/sbin/mariadbd"); err2 != nil {
			unavailable(t, "no mariadbd installed (apt-get install mariadb-server)")
		}
	}
	// A short directory: the server's socket path must fit in 108 bytes.
	dir, err := os.MkdirTemp("", "rpctl-private-mariadb-")
	if err != nil {
		t.Fatal(err)
	}
	port := FreePort(t)
	out, err := exec.Command(filepath.Join(RepoRoot(), "scripts", "mariadb-start.sh"), dir, fmt.Sprint(port)).CombinedOutput()
	if err != nil {
		os.RemoveAll(dir)
		t.Fatalf("scripts/mariadb-start.sh: %v: %s", err, strings.TrimSpace(string(out)))
	}
	vars := parseAssignments(string(out))
	s := &PrivateMySQL{Prefix: vars["RPCTL_TEST_MYSQL"], addr: fmt.Sprintf("127.0.0.1:%d", port)}
	fmt.Sscan(vars["MARIADB_PID"], &s.pid)
	if s.pid == 0 {
		// The script writes the pid file once the server is up.
		b, _ := os.ReadFile(filepath.Join(dir, "mysqld.pid"))
		fmt.Sscan(string(b), &s.pid)
	}
	if s.pid == 0 {
		t.Fatalf("private MariaDB: no pid in %s", out)
	}
	t.Cleanup(func() {
		s.Stop(t)
		os.RemoveAll(dir)
	})
	return s
}

// NewDatabase creates a database on the server and returns its SQLAlchemy
// URL (what nova.conf holds).
func (s *PrivateMySQL) NewDatabase(t testing.TB, name string) string {
	t.Helper()
	cfg, err := mysql.ParseDSN(s.Prefix)
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("mariadb", "-h", "127.0.0.1", "-P", strings.TrimPrefix(s.addr, "127.0.0.1:"), "-u", cfg.User, "-p"+cfg.Passwd,
		"-e", "CREATE DATABASE IF NOT EXISTS `"+name+"` CHARACTER SET utf8mb3").CombinedOutput()
	if err != nil {
		t.Fatalf("create database %s: %v: %s", name, err, out)
	}
	return fmt.Sprintf("mysql+pymysql://%s:%s@%s/%s?charset=utf8", cfg.User, cfg.Passwd, cfg.Addr, name)
}

// Stop stops the server and waits until its port is closed.
func (s *PrivateMySQL) Stop(t testing.TB) {
	if s.pid <= 0 {
		return
	}
	syscall.Kill(s.pid, syscall.SIGTERM)
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) && alive(s.pid) {
		time.Sleep(50 * time.Millisecond)
	}
	if alive(s.pid) {
		syscall.Kill(s.pid, syscall.SIGKILL)
		time.Sleep(200 * time.Millisecond)
	}
	s.pid = 0
	if c, err := net.DialTimeout("tcp", s.addr, time.Second); err == nil {
		c.Close()
		t.Fatalf("private MariaDB at %s still accepts connections after being stopped", s.addr)
	}
}

// alive reports whether pid runs (a zombie that nobody reaps does not).
func alive(pid int) bool {
	f, err := procStat(pid)
	if err != nil {
		return syscall.Kill(pid, 0) == nil
	}
	return f[0] != "Z"
}
