package candidates

import (
	"context"
	"fmt"
	"hash/fnv"
	"path/filepath"
	"testing"

	"github.com/rpctl/rpctl/candidates/internal/acbody"
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
				r, err := m.Search(context.Background(), req, opt)
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
	acbody.CheckFingerprints(t, path, lines)
}
