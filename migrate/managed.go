package migrate

// ManagesClass reports whether `migrate inventory` owns the resource class
// on the providers it writes, so a class the node no longer has is removed,
// and other writers such as provider config files must leave it alone.
// Other classes (an operator's, or a nova-compute's) are left alone. A
// switch, not a map: nothing is built at init.
func ManagesClass(rc string) bool {
	switch rc {
	case "VCPU", "MEMORY_MB", "DISK_GB", "PCPU", "PCI_DEVICE", "SRIOV_NET_VF",
		PFResourceClass, "NUMA_THREAD", "NUMA_CORE", "NUMA_SOCKET", "NUMA_MEMORY_MB":
		return true
	}
	return false
}
