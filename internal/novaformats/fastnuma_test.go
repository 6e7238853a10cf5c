package novaformats_test

import (
	"reflect"
	"testing"

	"github.com/rpctl/rpctl/internal/nova"
	"github.com/rpctl/rpctl/internal/novaformats"
	"github.com/rpctl/rpctl/samplecloud"
)

// TestFastNUMAMatchesGeneral: the one-pass reader of NUMATopology
// primitives gives exactly what the object-by-object reader gives, on every
// numa_topology a generated cloud stores and on edge cases; what it does
// not accept falls through to the general reader.
func TestFastNUMAMatchesGeneral(t *testing.T) {
	blobs := generatedBlobs(t, func(n nova.ComputeNode) *string { return n.NUMATopology })
	cell := func(data string) string {
		return `{"nova_object.name": "NUMATopology", "nova_object.version": "1.2", "nova_object.data": {"cells": [{"nova_object.name": "NUMACell", "nova_object.version": "1.5", "nova_object.data": ` + data + `}]}}`
	}
	blobs = append(blobs,
		cell(`{"id": 0, "cpuset": [], "pcpuset": null, "memory": 1, "siblings": [[], [1], null, [2, 3]]}`),
		cell(`{"id": 0, "cpuset": [ 1 , 2 ], "memory": 1, "siblings": []}`),
		cell(`{"id": 0, "cpuset": [1.0], "memory": 1}`),
		cell(`{"id": 0, "cpuset": ["1"], "memory": 1}`),
		cell(`{"id": 0, "cpuset": [null], "memory": 1}`),
		cell(`{"id": 0, "cpuset": [99999999999999999999], "memory": 1}`),
		cell(`{"id": 0, "cpuset": [1e2], "memory": 1}`),
		cell(`{"id": 0, "cpuset": [-1], "memory": 1, "siblings": [[1], [-2]], "socket": 1}`),
		cell(`{"id": 0, "siblings": [[1, "x"]], "memory": 1}`),
		cell(`{"id": 0, "siblings": [1], "memory": 1}`),
		cell(`{"id": 0, "siblings": {"a": 1}, "memory": 1}`),
		cell(`{"id": 0, "cpuset": {}, "memory": 1}`),
		cell(`{"id": 0, "cpuset": [1], "cpuset": [2, 3], "memory": 1}`),
		cell(`{"id": 0}`),
		// The one-pass reader gives up on what it is not sure encoding/json
		// reads the same way; what it does take must match.
		cell(`{"ID": 0, "memory": 1}`),
		cell(`{"id": 01, "memory": 1}`),
		cell(`{"id": 0, "memory": 1, "socket": null, "cpuset": [0,1], "pcpuset": [], "siblings": null}`),
		cell(`{"id": 0, "memory": 1, "socket": 2, "extra": {"a": [1, -2.5e3, true, false, null, "x\"y\u00e9"], "b": {}}}`),
		cell(`{"id": 0, "memory": 1, "cpu\u0073et": [1]}`),
		cell(`{"id": 0, "memory": 1, "extra": [1, 2.]}`),
		cell(`{"id": 0, "memory": 1, "extra": "\x"}`),
		cell(`{"id": 0, "memory": 1, "id": 1}`),
		cell(`{"id": 0, "memory": 1e3}`),
		cell(`{"id": 0,`+"\f"+` "memory": 1}`),
		cell(`{"id": -0, "memory": 1, "socket": 1}`)+" ",
		cell(`{"id": 0, "memory": 1}`)+" x",
		`{"nova_object.name": "NUMA\u0054opology", "nova_object.data": {"cells": []}}`,
		`{"nova_object.name": "NUMATopology", "nova_object.version": "1.2", "nova_object.changes": ["cells"], "nova_object.namespace": "nova", "nova_object.data": {"cells": null}}`,
		cell(`null`),
		`{"nova_object.name": "NUMATopology", "nova_object.version": 1, "nova_object.data": {"cells": []}}`,
		`{"nova_object.name": "NUMATopology", "nova_object.data": {"cells": [null]}}`,
		`{"nova_object.name": "NUMATopology", "nova_object.data": null}`,
		`{"nova_object.name": "Other", "nova_object.data": {"cells": []}}`,
	)
	checkFastPath(t, blobs, novaformats.FastNUMAForTest, novaformats.GeneralNUMAForTest, 3)
}

// generatedBlobs are the values of one blob column of a generated cloud
// with bad rows.
func generatedBlobs(t *testing.T, col func(nova.ComputeNode) *string) []string {
	t.Helper()
	var blobs []string
	c := samplecloud.Generate(samplecloud.Options{Nodes: 1500, Seed: 5, BadRows: 20})
	for _, cell := range c.Cells {
		for _, n := range cell.ComputeNodes {
			if v := col(n); v != nil {
				blobs = append(blobs, *v)
			}
		}
	}
	if len(blobs) < 500 {
		t.Fatalf("only %d blobs", len(blobs))
	}
	return blobs
}

// checkFastPath: wherever the one-pass reader takes a blob, the general
// reader accepts it too and reads the same; the one-pass reader must take
// at least 1/part of the blobs.
func checkFastPath[T any](t *testing.T, blobs []string, fast func([]byte) (T, bool), general func([]byte) (T, error), part int) {
	t.Helper()
	accepted := 0
	for i, b := range blobs {
		got, ok := fast([]byte(b))
		want, err := general([]byte(b))
		if !ok {
			continue
		}
		accepted++
		if err != nil {
			t.Errorf("blob %d: fast path accepted what the general one rejects (%v): %.200s", i, err, b)
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("blob %d: fast %+v, general %+v: %.200s", i, got, want, b)
		}
	}
	if accepted < len(blobs)/part {
		t.Errorf("the fast path took only %d of %d blobs", accepted, len(blobs))
	}
	t.Logf("fast path took %d of %d blobs", accepted, len(blobs))
}
