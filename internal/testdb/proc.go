package testdb

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// procStat is the fields of /proc/<pid>/stat after the parenthesised
// command name (which may itself hold spaces and parentheses): the state
// first, then utime and stime at indices 11 and 12.
func procStat(pid int) ([]string, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil, err
	}
	s := string(raw)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return nil, fmt.Errorf("/proc/%d/stat: %d fields after the command", pid, len(f))
	}
	return f, nil
}

// ProcessCPU is a process's user + system CPU time so far (0 once it is
// gone), so that a benchmark can say whose work a run was: the database
// server's, placement-api's or rpctl's.
func ProcessCPU(pid int) time.Duration {
	f, err := procStat(pid)
	if err != nil {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	s, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+s) * 10 * time.Millisecond // clock ticks, USER_HZ = 100
}
