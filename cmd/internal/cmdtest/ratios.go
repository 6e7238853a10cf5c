package cmdtest

import (
	"fmt"

	"github.com/rpctl/rpctl/internal/nova"
)

func RatiosFP(v float64) *float64 { return &v }

func RatiosNode(id int64, cpu, ram, disk *float64) nova.ComputeNode {
	host := fmt.Sprintf("compute%03d", id)
	return nova.ComputeNode{ID: id, Host: &host, HypervisorHostname: &host, VCPUs: 8, MemoryMB: 4096, LocalGB: 100,
		HypervisorType: "QEMU", HypervisorVersion: 6002000, CPUInfo: "{}",
		CPUAllocationRatio: cpu, RAMAllocationRatio: ram, DiskAllocationRatio: disk}
}
