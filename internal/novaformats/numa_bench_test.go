package novaformats_test

// An external test: samplecloud imports status, whose imports reach this
// package (status -> migrate -> novaformats).

import (
	"testing"

	"github.com/rpctl/rpctl/internal/novaformats"
	"github.com/rpctl/rpctl/samplecloud"
)

// BenchmarkParseNUMATopology: the one-pass reader against the general one,
// on a generated cloud's numa_topology blobs (MB/s of JSON).
func BenchmarkParseNUMATopology(b *testing.B) {
	var blobs [][]byte
	size := 0
	c := samplecloud.Generate(samplecloud.Options{Nodes: 500, Seed: 5})
	for _, cell := range c.Cells {
		for _, n := range cell.ComputeNodes {
			if n.NUMATopology != nil {
				blobs = append(blobs, []byte(*n.NUMATopology))
				size += len(*n.NUMATopology)
			}
		}
	}
	for _, bc := range []struct {
		name string
		fn   func([]byte) ([]novaformats.NUMACell, error)
	}{{"fast", novaformats.ParseNUMAForTest}, {"general", novaformats.GeneralNUMAForTest}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(size))
			for b.Loop() {
				for _, r := range blobs {
					if _, err := bc.fn(r); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
