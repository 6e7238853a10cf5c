package cmdtest

import (
	"os"
	"testing"

	"github.com/rpctl/rpctl/capacity/chart"
	capacitycmd "github.com/rpctl/rpctl/cmd/capacity"
)

// Main is every command package's TestMain: it keeps the machine's
// /etc/nova/nova.conf and /etc/placement/placement.conf out of the tests
// (tests that want default files set RPCTL_DEFAULT_CONFIG_FILES
// themselves), and the commands run as in rpctl-chart (capacity --plot
// draws in-process).
func Main(m *testing.M) {
	os.Setenv("RPCTL_DEFAULT_CONFIG_FILES", "")
	capacitycmd.DrawChart = chart.Capacity
	os.Exit(m.Run())
}
