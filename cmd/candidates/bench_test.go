package candidates_test

import (
	"fmt"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/rpctl/rpctl/cmd/internal/cmdtest"
)

// twentySameSubtree is --explain's worst case from the issue: twenty
// groups of one VCPU that must share a subtree, limit 1.
func twentySameSubtree() string {
	var q, set []string
	for i := 1; i <= 20; i++ {
		q = append(q, fmt.Sprintf("resources_G%d=VCPU:1", i))
		set = append(set, fmt.Sprintf("_G%d", i))
	}
	return strings.Join(q, "&") + "&group_policy=none&same_subtree=" + strings.Join(set, ",") + "&limit=1"
}

// BenchmarkCandidatesPeakRSS runs rpctl as a process on a 200-node nested
// cloud and reports its peak resident memory (getrusage's ru_maxrss): the
// issue's twenty-group query (which grew to 23 GB before the ceiling; now
// refused with exit 3 at 100000 candidates), --explain with twenty
// same_subtree groups (40 s before ExplainBudget), and capacity with
// flavors of 8 to 129 one-VCPU groups (16 groups took 9.2 GB before the
// search had bounds; 18 were OOM-killed).
func BenchmarkCandidatesPeakRSS(b *testing.B) {
	bin := cmdtest.BuildRpctl(b)
	db := cmdtest.NestedCloud(b, bin)
	// capacity with the many-group flavors, beside the twenty-group query:
	// each stops at a ceiling (3: the answers' memory; 5: the steps of a
	// flavor whose groups cannot fit on any host), which bounds its memory.
	for _, tc := range []struct {
		name string
		args []string
		code int
	}{
		{"20-groups", []string{"candidates", "--query", cmdtest.TwentyGroups()}, 3},
		{"20-groups-limit-1000", []string{"candidates", "--query", cmdtest.TwentyGroups(), "--limit", "1000"}, 0},
		{"explain-20-same-subtree", []string{"candidates", "--query", twentySameSubtree(), "--explain"}, 0},
		{"capacity-8-groups", []string{"capacity", "--flavor", cmdtest.GranularFlavorFile(b, 8)}, 0},
		{"capacity-12-groups", []string{"capacity", "--flavor", cmdtest.GranularFlavorFile(b, 12)}, 3},
		{"capacity-16-groups", []string{"capacity", "--flavor", cmdtest.GranularFlavorFile(b, 16)}, 3},
		{"capacity-20-groups", []string{"capacity", "--flavor", cmdtest.GranularFlavorFile(b, 20)}, 3},
		{"capacity-64-groups", []string{"capacity", "--flavor", cmdtest.GranularFlavorFile(b, 64)}, 3},
		{"capacity-129-groups", []string{"capacity", "--flavor", cmdtest.GranularFlavorFile(b, 129)}, 5},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var peak int64
			for b.Loop() {
				c := exec.Command(bin, append([]string{"--db", db}, tc.args...)...)
				out, _ := c.CombinedOutput()
				if c.ProcessState.ExitCode() != tc.code {
					b.Fatalf("exit %d, want %d: %.300s", c.ProcessState.ExitCode(), tc.code, out)
				}
				if ru, ok := c.ProcessState.SysUsage().(*syscall.Rusage); ok {
					peak = max(peak, ru.Maxrss)
				}
			}
			b.ReportMetric(float64(peak)/1024, "peak-RSS-MB")
		})
	}
}
