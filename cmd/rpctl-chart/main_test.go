package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/internal/testdb"
)

// TestPlotRunsChartProgram builds rpctl and rpctl-chart side by side, as
// make build does, and draws a chart through rpctl: the drawing happens in
// Rpctl-chart (rpctl links no plotting library), and without rpctl-chart
// beside it or on PATH rpctl says which program is missing.
func TestPlotRunsChartProgram(t *testing.T) {
	if testing.Short() {
		t.Skip("builds two binaries")
	}
	dir := t.TempDir()
	build := exec.Command("go", "build", "-o", dir, "./cmd/rpctl", "./cmd/rpctl-chart")
	build.Dir = testdb.RepoRoot()
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	rpctl := filepath.Join(dir, "rpctl")
	db := filepath.Join(dir, "cloud.db")
	run := func(args ...string) (string, int) {
		t.Helper()
		c := exec.Command(rpctl, append([]string{"--db", db}, args...)...)
		c.Env = append(os.Environ(), "RPCTL_DEFAULT_CONFIG_FILES=", "PATH=/usr/bin:/bin")
		out, _ := c.CombinedOutput()
		return string(out), c.ProcessState.ExitCode()
	}
	for _, args := range [][]string{{"sample-cloud", "--nodes", "6"}, {"migrate", "inventory"}} {
		if out, code := run(args...); code != 0 {
			t.Fatalf("rpctl %v: exit %d\n%s", args, code, out)
		}
	}
	svg := filepath.Join(dir, "c.svg")
	if out, code := run("capacity", "--flavor", "m1.small", "--plot", svg); code != 0 || !strings.Contains(out, "Chart written to") {
		t.Fatalf("capacity --plot: exit %d\n%s", code, out)
	}
	if b, err := os.ReadFile(svg); err != nil || !bytes.HasPrefix(b, []byte("<?xml")) {
		t.Fatalf("%s: %v, starts %.20q", svg, err, b)
	}
	if err := os.Remove(filepath.Join(dir, "rpctl-chart")); err != nil {
		t.Fatal(err)
	}
	out, code := run("capacity", "--flavor", "m1.small", "--plot", filepath.Join(dir, "d.svg"))
	if code == 0 || !strings.Contains(out, "runs rpctl-chart, which is neither beside rpctl nor on PATH") {
		t.Errorf("without rpctl-chart: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "d.svg")); err == nil {
		t.Error("d.svg written without rpctl-chart")
	}
}
