package difftest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type fnv struct{ sum uint64 }

func fnv64() *fnv { return &fnv{sum: 14695981039346656037} }

func (h *fnv) add(s string) {
	for i := 0; i < len(s); i++ {
		h.sum ^= uint64(s[i])
		h.sum *= 1099511628211
	}
	h.sum ^= 0xff
	h.sum *= 1099511628211
}

func checkFingerprints(t *testing.T, path string, lines []string) {
	t.Helper()
	got := strings.Join(lines, "\n") + "\n"
	if os.Getenv("RPCTL_WRITE_FINGERPRINTS") != "" {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (RPCTL_WRITE_FINGERPRINTS=1 records it)", err)
	}
	if string(want) != got {
		t.Fatalf("answers changed:\nwant\n%s\ngot\n%s", want, got)
	}
}
