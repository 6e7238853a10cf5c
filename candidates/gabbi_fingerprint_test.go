package candidates

import (
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGabbiResultsUnchanged pins the exact bodies (order included) of every
// gabbi fixture query, unlimited, capped by MaxCandidates and breadth-first,
// as recorded before the unsuffixed group's product became lazy.
// RPCTL_WRITE_FINGERPRINTS=1 rewrites the file after an intended change.
func TestGabbiResultsUnchanged(t *testing.T) {
	path := filepath.Join("testdata", "gabbi", "fingerprints.txt")
	var lines []string
	for _, c := range gabbiClouds() {
		m := c.toModel(t)
		h := fnv.New64a()
		for i := range c.Queries {
			req := c.request(&c.Queries[i])
			for _, opt := range []Options{{}, {MaxCandidates: 2}, {MaxCandidates: 3, Strategy: "breadth-first"}} {
				r, err := m.Candidates(req, opt)
				if err != nil {
					fmt.Fprintf(h, "error %v\n", err)
					continue
				}
				b, _ := r.MarshalPlacement(req.Microversion)
				h.Write(b)
				h.Write([]byte{'\n'})
			}
		}
		lines = append(lines, fmt.Sprintf("%s %016x", c.Name, h.Sum64()))
	}
	got := strings.Join(lines, "\n") + "\n"
	if os.Getenv("RPCTL_WRITE_FINGERPRINTS") != "" {
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
