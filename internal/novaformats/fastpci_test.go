package novaformats_test

import (
	"testing"

	"github.com/rpctl/rpctl/internal/nova"
	"github.com/rpctl/rpctl/internal/novaformats"
)

// TestFastPCIMatchesGeneral: the one-pass reader of PciDevicePoolList
// primitives gives exactly what the object-by-object reader gives, on every
// pci_stats a generated cloud stores and on edge cases; what it does not
// accept falls through to the general reader.
func TestFastPCIMatchesGeneral(t *testing.T) {
	blobs := generatedBlobs(t, func(n nova.ComputeNode) *string { return n.PCIStats })
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
	checkFastPath(t, blobs, novaformats.FastPCIForTest, novaformats.GeneralPCIForTest, 4)
}
