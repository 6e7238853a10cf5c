package cmd_test

import (
	"context"
	"os"
	"testing"

	"github.com/rpctl/rpctl/capacity/chart"
	"github.com/rpctl/rpctl/cmd"
	"github.com/rpctl/rpctl/internal/iostreams"
)

// rpctl runs the command tree as main does and returns stdout, stderr and
// the exit code.
func rpctl(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	ios, _, out, errOut := iostreams.Test()
	code := cmd.Run(context.Background(), ios, "test", args)
	return out.String(), errOut.String(), code
}

// TestMain keeps the machine's /etc/nova/nova.conf and
// /etc/placement/placement.conf out of the tests; tests that want default
// files set RPCTL_DEFAULT_CONFIG_FILES themselves. The commands run here
// as in rpctl-chart (capacity --plot draws in-process).
func TestMain(m *testing.M) {
	os.Setenv("RPCTL_DEFAULT_CONFIG_FILES", "")
	cmd.DrawChart = chart.Capacity
	os.Exit(m.Run())
}
