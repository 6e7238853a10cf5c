package novaformats_test

import (
	"reflect"
	"testing"

	"github.com/rpctl/rpctl/internal/novaformats"
	"github.com/rpctl/rpctl/samplecloud"
)

// TestFastPCIMatchesGeneral: the one-pass reader of PciDevicePoolList
// primitives gives exactly what the object-by-object reader gives, on every
// pci_stats a generated cloud stores and on edge cases; what it does not
// accept falls through to the general reader.
func TestFastPCIMatchesGeneral(t *testing.T) {
	var blobs []string
	c := samplecloud.Generate(samplecloud.Options{Nodes: 1500, Seed: 5, BadRows: 20})
	for _, cell := range c.Cells {
		for _, n := range cell.ComputeNodes {
			if n.PCIStats != nil {
				blobs = append(blobs, *n.PCIStats)
			}
		}
	}
	if len(blobs) < 500 {
		t.Fatalf("only %d pci_stats blobs", len(blobs))
	}
	pool := func(data string) string {
		return `{"nova_object.name": "PciDevicePoolList", "nova_object.version": "1.1", "nova_object.data": {"objects": [{"nova_object.name": "PciDevicePool", "nova_object.version": "1.1", "nova_object.data": ` + data + `}]}}`
	}
	blobs = append(blobs,
		pool(`{"count": 2, "vendor_id": "8086", "product_id": "154d", "numa_node": null, "tags": {"dev_type": "type-VF", "physical_network": null}}`),
		pool(`{"count": 2, "tags": null}`),
		pool(`{"count": 2, "tags": {}}`),
		pool(`{"count": 2, "numa_node": 1, "tags": {"a": "1", "a": "2"}}`),
		pool(`{"count": 2, "tags": {"a": 1}}`),
		pool(`{"count": 2, "tags": {"\u0061": "x"}}`),
		pool(`{"count": -1}`),
		pool(`{"count": 1.0}`),
		pool(`{"count": "3"}`),
		pool(`{"Count": 3}`),
		pool(`{"count": 3, "count": 4}`),
		pool(`{"vendor_id": "8086"}`),
		pool(`{"count": 3, "vendor_id": null}`),
		pool(`{"count": 3, "vendor_id": 8086}`),
		pool(`{"count": 3, "extra": [{"x": [1, 2.5, "\"", null]}]}`),
		pool(`null`),
		`{"nova_object.name": "PciDevicePoolList", "nova_object.data": {"objects": null}}`,
		`{"nova_object.name": "PciDevicePoolList", "nova_object.data": {"objects": [null]}}`,
		`{"nova_object.name": "PciDevicePoolList", "nova_object.data": null}`,
		`{"nova_object.name": "Other", "nova_object.data": {"objects": []}}`,
		pool(`{"count": 3}`)+"]",
	)
	accepted := 0
	for i, b := range blobs {
		fast, ok := novaformats.FastPCIForTest([]byte(b))
		want, err := novaformats.GeneralPCIForTest([]byte(b))
		if !ok {
			continue
		}
		accepted++
		if err != nil {
			t.Errorf("blob %d: fast path accepted what the general one rejects (%v): %.200s", i, err, b)
			continue
		}
		if !reflect.DeepEqual(fast, want) {
			t.Errorf("blob %d: fast %+v, general %+v: %.200s", i, fast, want, b)
		}
	}
	if accepted < len(blobs)/4 {
		t.Errorf("the fast path took only %d of %d blobs", accepted, len(blobs))
	}
	t.Logf("fast path took %d of %d blobs", accepted, len(blobs))
}
