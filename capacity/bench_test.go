package capacity

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/rpctl/rpctl/candidates"
	"github.com/rpctl/rpctl/flavors"
	"github.com/rpctl/rpctl/internal/nova"
)

// benchFlavors are 20 flavors of a public cloud's catalogue: general,
// memory-heavy, CPU-heavy, pinned (two queries), GPU, trait-bound.
func benchFlavors(b *testing.B) []Flavor {
	var defs []nova.Flavor
	for i, size := range []int64{1, 2, 4, 8, 16} {
		defs = append(defs,
			nova.Flavor{Name: fmt.Sprintf("m1.%d", size), VCPUs: size, MemoryMB: 2048 * size, RootGB: 20 * size},
			nova.Flavor{Name: fmt.Sprintf("r1.%d", size), VCPUs: size, MemoryMB: 8192 * size, RootGB: 40, EphemeralGB: 10 * int64(i)},
			nova.Flavor{Name: fmt.Sprintf("c1.%d", size), VCPUs: 2 * size, MemoryMB: 1024 * size, RootGB: 20, Swap: 1024})
	}
	defs = append(defs,
		nova.Flavor{Name: "p1.2", VCPUs: 2, MemoryMB: 4096, RootGB: 20, ExtraSpecs: map[string]string{"hw:cpu_policy": "dedicated"}},
		nova.Flavor{Name: "p1.4", VCPUs: 4, MemoryMB: 8192, RootGB: 40, ExtraSpecs: map[string]string{"hw:cpu_policy": "dedicated", "hw:emulator_threads_policy": "isolate"}},
		nova.Flavor{Name: "g1.1", VCPUs: 8, MemoryMB: 32768, RootGB: 80, ExtraSpecs: map[string]string{"resources1:CUSTOM_GPU": "2", "trait1:CUSTOM_GPU_A100": "required"}},
		nova.Flavor{Name: "a1.4", VCPUs: 4, MemoryMB: 8192, RootGB: 40, ExtraSpecs: map[string]string{"trait:HW_CPU_X86_AVX2": "required"}},
		nova.Flavor{Name: "t1.1", VCPUs: 1, MemoryMB: 512, RootGB: 1})
	var out []Flavor
	for i := range defs {
		f, _, err := NewFlavor(&defs[i], nil, flavors.Options{})
		if err != nil {
			b.Fatal(err)
		}
		out = append(out, f)
	}
	return out
}

// BenchmarkCapacity10kHosts20Flavors is the target: 10,000 hosts ×
// 20 flavors, independent mode (per host, per aggregate and total), under
// 2 s. The model is loaded beforehand, as `rpctl capacity` loads it once.
func BenchmarkCapacity10kHosts20Flavors(b *testing.B) {
	m, err := candidates.NewModel(candidates.CapacityInput(10000))
	if err != nil {
		b.Fatal(err)
	}
	fl := benchFlavors(b)
	if len(fl) != 20 {
		b.Fatalf("%d flavors", len(fl))
	}
	for _, mode := range []Mode{Independent, Pack} {
		b.Run(string(mode), func(b *testing.B) {
			// CPU seconds as well as wall time: on a shared machine the
			// wall clock mostly measures the other tenants.
			cpu0 := cpuTime()
			for b.Loop() {
				res, err := Count(context.Background(), m, fl, Options{Mode: mode})
				if err != nil {
					b.Fatal(err)
				}
				if len(res.Hosts) != 10000 {
					b.Fatalf("%d hosts", len(res.Hosts))
				}
			}
			b.ReportMetric((cpuTime()-cpu0).Seconds()*1000/float64(b.N), "cpu-ms/op")
		})
	}
}

// cpuTime is the process's user + system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
