package testdb

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestFreePortNeverRepeats(t *testing.T) {
	seen := map[int]bool{}
	for range 200 {
		p := FreePort(t)
		if seen[p] {
			t.Fatalf("FreePort returned %d twice", p)
		}
		seen[p] = true
	}
}

func TestListeningIn(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	if !ListeningIn(os.Getpid(), port) {
		t.Errorf("this process listens on %d, ListeningIn says it does not", port)
	}
	sleep := exec.Command("sleep", "30")
	if err := sleep.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { sleep.Process.Kill(); sleep.Wait() }()
	if ListeningIn(sleep.Process.Pid, port) {
		t.Errorf("sleep %d does not listen on %d, ListeningIn says it does", sleep.Process.Pid, port)
	}
	// A child's socket counts for its parent (uWSGI's master, a shell).
	if !ListeningIn(os.Getppid(), port) {
		t.Errorf("the test process (a child of %d) listens on %d, ListeningIn on the parent says no", os.Getppid(), port)
	}
	if ListeningIn(os.Getpid(), FreePort(t)) {
		t.Error("ListeningIn found a listener on a free port")
	}
}

// TestPlacementStartRefusesAStrangersPort: the start script, given a port
// another server already answers on, does not report that server as its
// placement-api (the seed31 matrix case once read another cloud's
// allocations that way); it exits 3 and leaves nothing running.
func TestPlacementStartRefusesAStrangersPort(t *testing.T) {
	if _, err := exec.LookPath("placement-api"); err != nil {
		unavailable(t, "placement-api not installed (apt-get install python3-placement)")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	stranger := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"versions": []}`)
	})}
	go stranger.Serve(l)
	defer stranger.Close()
	port := l.Addr().(*net.TCPAddr).Port

	dir := t.TempDir()
	out, err := exec.Command(filepath.Join(RepoRoot(), "scripts", "placement-api-start.sh"), dir, fmt.Sprint(port), "sqlite:///"+filepath.Join(dir, "p.db")).CombinedOutput()
	err = startError(port, err, out)
	if !errors.Is(err, errPortTaken) {
		t.Fatalf("placement-api-start.sh on a stranger's port: %v, want exit 3\n%s", err, out)
	}
	if !strings.Contains(string(out), "held by another server") {
		t.Errorf("the script does not say why: %s", out)
	}
	// The server is found by its environment: its command line does not
	// name the directory.
	procs, _ := filepath.Glob("/proc/[0-9]*/environ")
	for _, p := range procs {
		env, _ := os.ReadFile(p)
		if strings.Contains(string(env), "OS_PLACEMENT_CONFIG_DIR="+dir+"\x00") {
			t.Errorf("placement-api left running: %s", p)
		}
	}
}
