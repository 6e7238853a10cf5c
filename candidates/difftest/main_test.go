package difftest

import (
	"os"
	"path/filepath"
	"testing"
)

// TestMain removes the rpctl binary the benchmarks built once for the
// whole run (buildRpctl): 29 MB left in the temporary directory by every
// `make bench` otherwise.
func TestMain(m *testing.M) {
	code := m.Run()
	if rpctlBin.path != "" {
		os.RemoveAll(filepath.Dir(rpctlBin.path))
	}
	os.Exit(code)
}
