package iostreams

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestGrowOutputPipe: a pipe grows to what was asked (1 MiB is within
// Linux's default pipe-max-size), and what is not a pipe is left alone.
func TestGrowOutputPipe(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	before, err := unix.FcntlInt(w.Fd(), unix.F_GETPIPE_SZ, 0)
	if err != nil {
		t.Fatal(err)
	}
	s := &IOStreams{Out: w}
	s.GrowOutputPipe(1 << 20)
	after, err := unix.FcntlInt(w.Fd(), unix.F_GETPIPE_SZ, 0)
	if err != nil {
		t.Fatal(err)
	}
	if after < 1<<20 || after <= before {
		t.Errorf("pipe buffer %d -> %d bytes, want at least 1 MiB", before, after)
	}
	file, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	(&IOStreams{Out: file}).GrowOutputPipe(1 << 20) // no effect, no panic
	(&IOStreams{Out: &bytes.Buffer{}}).GrowOutputPipe(1 << 20)
}
