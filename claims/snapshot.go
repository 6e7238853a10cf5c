package claims

import (
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Claim is one consumer's allocation on one resource provider.
type Claim struct {
	ID           int64
	Host         string // the compute node's host; "" when the provider is no compute node
	Node         string // hypervisor_hostname
	InstanceUUID string // the consumer: an instance, a migration, or anything else
	VCPUs        int64
	MemoryMB     int64
	DiskGB       int64
	// PCI lists the PCI classes held, "CLASS=N" joined by commas in class
	// order ("" none), as layout v1 stores them.
	PCI string
	// ResizeTarget is true for an instance's claim on the destination node
	// of its in-progress migration.
	ResizeTarget bool
	CreatedAt    time.Time
	// Since layout v2. ProviderUUID is "" for claims upgraded from v1 (v1
	// did not record it).
	ProviderUUID string
	Resources    map[string]int64
}

// pciClass says whether a resource class is a PCI device class for the v1
// `pci` column.
func pciClass(rc string) bool {
	switch rc {
	case "PCI_DEVICE", "SRIOV_NET_VF", "CUSTOM_SRIOV_NET_PF":
		return true
	}
	return strings.HasPrefix(rc, "CUSTOM_PCI_")
}

// FillV1 sets the v1 columns (vcpus, memory_mb, disk_gb, pci) from Resources.
func (c *Claim) FillV1() {
	c.VCPUs, c.MemoryMB, c.DiskGB = c.Resources["VCPU"], c.Resources["MEMORY_MB"], c.Resources["DISK_GB"]
	var pci []string
	for _, rc := range sortedKeys(c.Resources) {
		if pciClass(rc) {
			pci = append(pci, rc+"="+strconv.FormatInt(c.Resources[rc], 10))
		}
	}
	c.PCI = strings.Join(pci, ",")
}

func sortedKeys(m map[string]int64) []string { return slices.Sorted(maps.Keys(m)) }
