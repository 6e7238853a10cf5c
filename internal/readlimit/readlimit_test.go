package readlimit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFile: a file within the bound is read whole; one past it, and the
// devices that never end, are refused after max+1 bytes with a message
// naming the path and the bound.
func TestFile(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small")
	big := filepath.Join(dir, "big")
	os.WriteFile(small, []byte("0123456789"), 0o600)
	os.WriteFile(big, []byte(strings.Repeat("x", 11)), 0o600)
	for _, tc := range []struct {
		path, want string
	}{
		{small, ""},
		{big, big + ": more than 10 bytes: not a test file"},
		{"/dev/zero", "/dev/zero: more than 10 bytes"},
		{"/dev/urandom", "/dev/urandom: more than 10 bytes"},
		{filepath.Join(dir, "none"), "no such file"},
	} {
		data, err := File(tc.path, 10, "a test file")
		switch {
		case tc.want == "" && (err != nil || string(data) != "0123456789"):
			t.Errorf("%s: %q %v", tc.path, data, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want %q", tc.path, err, tc.want)
		}
	}
	for n, want := range map[int64]string{1 << 20: "1 MiB", 16 << 20: "16 MiB", 512 << 10: "512 KiB", 100: "100 bytes"} {
		if got := Size(n); got != want {
			t.Errorf("Size(%d) = %q, want %q", n, got, want)
		}
	}
}
