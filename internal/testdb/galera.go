package testdb

import (
	"database/sql"
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

// Galera ports: the range given to Galera dev clusters on the shared test
// machine, below the kernel's ephemeral ports (32768 on), so that no client
// connection can take a stopped node's port before it restarts. A cluster
// takes base..base+2 (SQL), +10..+12 (gcomm), +20..+22 (IST) and +30..+32
// (SST), as scripts/galera-start.sh lays them out.
const (
	galeraPortLow  = 24400
	galeraPortHigh = 24499
)

// Galera is a real 3-node MariaDB Galera cluster on 127.0.0.1, started by
// scripts/galera-start.sh for one test and stopped when it ends.
type Galera struct {
	// Prefix[i] is the admin go-sql-driver DSN prefix (up to "/") of node i+1.
	Prefix [3]string
	dir    string
	script string
}

// NewGalera starts a 3-node cluster and waits until all three nodes are
// Synced in a cluster of 3.
func NewGalera(t testing.TB) *Galera {
	t.Helper()
	if _, err := os.Stat("/usr/lib/galera/libgalera_smm.so"); err != nil {
		if _, err2 := os.Stat("/usr/lib/libgalera_smm.so"); err2 != nil {
			unavailable(t, "no Galera provider installed (apt-get install galera-4 rsync)")
		}
	}
	if os.Geteuid() != 0 {
		// The nodes run as the mysql user, which needs its datadirs chowned.
		unavailable(t, "a Galera cluster needs root (its datadirs belong to mysql)")
	}
	g := &Galera{script: filepath.Join(RepoRoot(), "scripts", "galera-start.sh")}
	var out []byte
	// The ports are in the kernel's ephemeral range: a client connection
	// elsewhere can take one between the check and the server's bind. A
	// node that dies starting is reported at once, and the next free base
	// is tried.
	for attempt := 1; ; attempt++ {
		base, lock := reserveGaleraBase(t)
		dir, err := os.MkdirTemp("", "rpctl-galera-")
		if err != nil {
			t.Fatal(err)
		}
		out, err = exec.Command(g.script, dir, fmt.Sprint(base)).CombinedOutput()
		if err == nil {
			g.dir = dir
			t.Cleanup(func() {
				exec.Command(g.script, "--stop", dir).Run()
				os.RemoveAll(dir)
				os.Remove(lock)
			})
			break
		}
		exec.Command(g.script, "--stop", dir).Run()
		os.RemoveAll(dir)
		if attempt == 3 {
			os.Remove(lock)
			t.Fatalf("scripts/galera-start.sh: %v: %s", err, strings.TrimSpace(string(out)))
		}
		t.Logf("Galera cluster on base port %d failed to start (%v), trying another:\n%s", base, err, strings.TrimSpace(string(out)))
		// The lock is kept until the test ends, so that the next
		// reservation moves on to other ports.
		t.Cleanup(func() { os.Remove(lock) })
	}
	vars := parseAssignments(string(out))
	for i := range g.Prefix {
		g.Prefix[i] = vars[fmt.Sprintf("RPCTL_GALERA_DSN%d", i+1)]
		if g.Prefix[i] == "" {
			t.Fatalf("scripts/galera-start.sh printed no DSN for node %d: %s", i+1, out)
		}
	}
	return g
}

// reserveGaleraBase picks a base port whose twelve ports are free and claims
// it with a lock file, so that two test packages running at once do not
// start two clusters on the same ports.
func reserveGaleraBase(t testing.TB) (int, string) {
	t.Helper()
	for base := galeraPortLow; base+32 <= galeraPortHigh; base++ {
		// In /tmp, not TMPDIR: the ports are the machine's, and a run
		// with a TMPDIR of its own (make test's) must see other runs' locks.
		lock := filepath.Join("/tmp", fmt.Sprintf("rpctl-galera-port-%d.lock", base))
		f, err := os.OpenFile(lock, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err != nil {
			if staleLock(lock) {
				os.Remove(lock)
			}
			continue
		}
		fmt.Fprintln(f, os.Getpid())
		f.Close()
		if galeraPortsFree(base) {
			return base, lock
		}
		os.Remove(lock)
	}
	t.Fatalf("no free Galera base port in %d-%d", galeraPortLow, galeraPortHigh)
	return 0, ""
}

// staleLock reports whether the process that wrote lock is gone (a test
// binary killed before its cleanup ran).
func staleLock(lock string) bool {
	b, err := os.ReadFile(lock)
	if err != nil {
		return false
	}
	var pid int
	if _, err := fmt.Sscan(string(b), &pid); err != nil || pid <= 0 {
		return false
	}
	return !alive(pid)
}

// nodePortsFree reports whether node i's SQL, gcomm, IST and SST ports can
// be bound.
func (g *Galera) nodePortsFree(i int) bool {
	b, _ := os.ReadFile(filepath.Join(g.dir, "baseport"))
	var base int
	fmt.Sscan(string(b), &base)
	for _, off := range []int{0, 10, 20, 30} {
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", base+off+i))
		if err != nil {
			return false
		}
		l.Close()
	}
	return true
}

func galeraPortsFree(base int) bool {
	for _, off := range []int{0, 1, 2, 10, 11, 12, 20, 21, 22, 30, 31, 32} {
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", base+off))
		if err != nil {
			return false
		}
		l.Close()
	}
	return true
}

// NewDatabase creates a database (on node 1; Galera replicates the DDL) and
// returns its SQLAlchemy URL through each node.
func (g *Galera) NewDatabase(t testing.TB, name string) [3]string {
	t.Helper()
	db := g.Open(t, 0, "")
	if _, err := db.Exec("CREATE DATABASE IF NOT EXISTS `" + name + "` CHARACTER SET utf8mb3"); err != nil {
		t.Fatalf("create database %s: %v", name, err)
	}
	// CREATE DATABASE returns once node 1 ran it; the other nodes apply
	// it in the cluster's order a moment later, and a connection naming
	// the database fails with 1049 until they have (TestGaleraAbortsNeverSilent
	// met that on a loaded machine). A read with wsrep_sync_wait on each
	// node waits until that node has applied it.
	for i := range g.Prefix {
		var n int
		if err := g.Open(t, i, "").QueryRow("SELECT COUNT(*) FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?", name).Scan(&n); err != nil || n != 1 {
			t.Fatalf("node %d does not have database %s after its creation: %d, %v", i+1, name, n, err)
		}
	}
	var urls [3]string
	for i, p := range g.Prefix {
		cfg, err := mysql.ParseDSN(p)
		if err != nil {
			t.Fatal(err)
		}
		urls[i] = fmt.Sprintf("mysql+pymysql://%s:%s@%s/%s?charset=utf8", cfg.User, cfg.Passwd, cfg.Addr, name)
	}
	return urls
}

// Open opens database name (empty: none) through node i (0-based), with
// wsrep_sync_wait so that what the test reads back includes every write
// the cluster committed before.
func (g *Galera) Open(t testing.TB, i int, name string) *sql.DB {
	t.Helper()
	cfg, err := mysql.ParseDSN(g.Prefix[i])
	if err != nil {
		t.Fatal(err)
	}
	cfg.DBName = name
	cfg.Params = map[string]string{"wsrep_sync_wait": "1"}
	db, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// Status returns a wsrep status variable of node i.
func (g *Galera) Status(t testing.TB, i int, name string) string {
	t.Helper()
	var k, v string
	if err := g.Open(t, i, "").QueryRow("SHOW STATUS LIKE ?", name).Scan(&k, &v); err != nil {
		t.Fatalf("node %d: SHOW STATUS LIKE %s: %v", i+1, name, err)
	}
	return v
}

// PID returns the server process id of node i.
func (g *Galera) PID(i int) int {
	b, _ := os.ReadFile(filepath.Join(g.dir, fmt.Sprintf("node%d", i+1), "mysqld.pid"))
	var pid int
	fmt.Sscan(string(b), &pid)
	return pid
}

// Kill kills node i with SIGKILL (a crash: no clean leave from the cluster)
// and waits until its process is gone.
func (g *Galera) Kill(t testing.TB, i int) {
	t.Helper()
	pid := g.PID(i)
	if pid <= 0 {
		t.Fatalf("node %d has no pid", i+1)
	}
	syscall.Kill(pid, syscall.SIGKILL)
	for alive(pid) {
		time.Sleep(20 * time.Millisecond)
	}
	os.Remove(filepath.Join(g.dir, fmt.Sprintf("node%d", i+1), "mysqld.pid"))
}

// Restart starts node i again and waits until it is Synced in a cluster of
// 3; it returns what the node logged while rejoining, so a test can tell IST
// from SST.
func (g *Galera) Restart(t testing.TB, i int) string {
	t.Helper()
	logPath := filepath.Join(g.dir, fmt.Sprintf("node%d", i+1), "error.log")
	var before int64
	if st, err := os.Stat(logPath); err == nil {
		before = st.Size()
	}
	// The node's ports are in the kernel's ephemeral range: while it was
	// down a client connection may have been given one. Wait (a bounded
	// poll) until they are free, and try the start twice.
	var out []byte
	var err error
	for attempt := 1; attempt <= 2; attempt++ {
		for start := time.Now(); !g.nodePortsFree(i) && time.Since(start) < time.Minute; {
			time.Sleep(100 * time.Millisecond)
		}
		if out, err = exec.Command(g.script, "--start-node", g.dir, fmt.Sprint(i+1)).CombinedOutput(); err == nil {
			break
		}
		t.Logf("restart node %d, attempt %d: %v: %s", i+1, attempt, err, strings.TrimSpace(string(out)))
	}
	if err != nil {
		t.Fatalf("restart node %d failed", i+1)
	}
	b, _ := os.ReadFile(logPath)
	if int64(len(b)) >= before {
		b = b[before:]
	}
	return string(b)
}
