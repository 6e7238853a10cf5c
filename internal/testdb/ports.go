package testdb

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// handedOut is every port FreePort has returned in this test process: the
// kernel may offer a port again once its probe listener is closed, and two
// parallel tests would then start their servers on one port.
var handedOut struct {
	sync.Mutex
	ports map[int]bool
}

// FreePort returns a TCP port on 127.0.0.1 that is free right now and that
// no other test of this process was given. Another process may still take
// it before the caller's server binds it: the start scripts check that the
// server answering on it is theirs (scripts/port-owner.sh, ListeningIn),
// and the callers that can pick again do so on ErrPortTaken.
func FreePort(t testing.TB) int {
	t.Helper()
	handedOut.Lock()
	defer handedOut.Unlock()
	if handedOut.ports == nil {
		handedOut.ports = map[int]bool{}
	}
	for range 100 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if !handedOut.ports[port] {
			handedOut.ports[port] = true
			return port
		}
	}
	t.Fatal("FreePort: the kernel offered only ports already handed out, 100 times")
	return 0
}

// errPortTaken is a start script's exit 3: another server holds the port.
var errPortTaken = errors.New("port held by another server")

// startExit3 is how the start scripts say errPortTaken.
const startExit3 = 3

// listenInodes returns the inodes of the sockets listening on port.
func listenInodes(port int) map[string]bool {
	want := fmt.Sprintf("%04X", port)
	inodes := map[string]bool{}
	for _, file := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(file)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		sc.Scan() // the header
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) < 10 || fields[3] != "0A" { // 0A: LISTEN
				continue
			}
			local := fields[1]
			if strings.EqualFold(local[strings.LastIndexByte(local, ':')+1:], want) {
				inodes[fields[9]] = true
			}
		}
		f.Close()
	}
	return inodes
}

// ListeningIn reports whether pid or one of its descendants holds a socket
// listening on port: that the server a test started is the one answering
// there, not another test's that took the port first.
func ListeningIn(pid, port int) bool {
	inodes := listenInodes(port)
	if len(inodes) == 0 {
		return false
	}
	return holdsSocket(pid, inodes, 0)
}

func holdsSocket(pid int, inodes map[string]bool, depth int) bool {
	if depth > 8 {
		return false
	}
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	if ents, err := os.ReadDir(dir); err == nil {
		for _, e := range ents {
			link, err := os.Readlink(dir + "/" + e.Name())
			if err == nil && strings.HasPrefix(link, "socket:[") && inodes[strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")] {
				return true
			}
		}
	}
	tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	for _, task := range tasks {
		raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", pid, task.Name()))
		if err != nil {
			continue
		}
		for _, c := range strings.Fields(string(raw)) {
			if child, err := strconv.Atoi(c); err == nil && holdsSocket(child, inodes, depth+1) {
				return true
			}
		}
	}
	return false
}
