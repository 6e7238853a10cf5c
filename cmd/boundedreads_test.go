package cmd_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/cmd/internal/cmdtest"
)

// TestBoundedFileReads (issue 37 row 12): every file rpctl reads besides
// the databases and config files — --flavor and --image files (candidates,
// capacity, exporter), provider apply -f — is read up to a bound: /dev/zero,
// /dev/urandom and a file past the bound are refused, exit 2, in a line
// naming the path and the bound, instead of being read until memory runs
// out. A file within the bound still reads.
func TestBoundedFileReads(t *testing.T) {
	db := cmdtest.FlavorCloud(t)
	big := filepath.Join(t.TempDir(), "big.json")
	if err := os.WriteFile(big, []byte(`{"name": "x", "vcpus": 1, "ram": 1, "disk": 0, "pad": "`+strings.Repeat("x", 1<<20)+`"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	small := filepath.Join(t.TempDir(), "small.json")
	if err := os.WriteFile(small, []byte(`{"name": "small", "vcpus": 1, "ram": 64, "disk": 0}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string // "" is exit 0
	}{
		{[]string{"candidates", "--flavor", "/dev/zero"}, "/dev/zero: more than 1 MiB: not a flavor file"},
		{[]string{"candidates", "--flavor", "/dev/urandom"}, "/dev/urandom: more than 1 MiB: not a flavor file"},
		{[]string{"candidates", "--flavor", big}, "big.json: more than 1 MiB: not a flavor file"},
		{[]string{"candidates", "--flavor", "m1.small", "--image", "/dev/zero"}, "/dev/zero: more than 1 MiB: not an image file"},
		{[]string{"capacity", "--flavor", "/dev/urandom"}, "/dev/urandom: more than 1 MiB: not a flavor file"},
		{[]string{"exporter", "--flavor", "/dev/zero"}, "/dev/zero: more than 1 MiB: not a flavor file"},
		{[]string{"exporter", "--flavor", "m1.small", "--image", "/dev/urandom"}, "/dev/urandom: more than 1 MiB: not an image file"},
		{[]string{"provider", "apply", "-f", "/dev/zero", "--dry-run"}, "/dev/zero: more than 16 MiB: not a provider config file"},
		{[]string{"provider", "apply", "-f", "/dev/urandom", "--dry-run"}, "/dev/urandom: more than 16 MiB: not a provider config file"},
		{[]string{"-f", "value", "candidates", "--flavor", small, "--limit", "1"}, ""},
	} {
		_, errOut, code := cmdtest.Rpctl(t, append([]string{"--db", db}, tc.args...)...)
		switch {
		case tc.want == "" && code != 0:
			t.Errorf("%q: exit %d: %s", tc.args, code, errOut)
		case tc.want != "" && (code != 2 || !strings.Contains(errOut, tc.want)):
			t.Errorf("%q: exit %d %q, want 2 and %q", tc.args, code, errOut, tc.want)
		}
	}
}
