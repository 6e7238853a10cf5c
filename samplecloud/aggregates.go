package samplecloud

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/google/uuid"

	"github.com/rpctl/rpctl/internal/nova"
)

// aggregates builds the cloud's host aggregates the way operators use them:
// availability zones covering every live host, tenant-isolation aggregates
// (filter_tenant_id), a hardware aggregate with a required trait and one
// by a plain key, so that hosts sit in several aggregates, and one empty
// aggregate. Its own random stream keeps every other row of a seed's cloud
// as it was before clouds had aggregates.
func aggregates(seed int64, cells []Cell) []nova.Aggregate {
	rng := rand.New(rand.NewPCG(uint64(seed), 0xa66_5eed))
	newUUID := func() string {
		var b [16]byte
		for i := range b {
			b[i] = byte(rng.UintN(256))
		}
		b[6] = b[6]&0x0f | 0x40
		b[8] = b[8]&0x3f | 0x80
		return uuid.UUID(b).String()
	}
	var hosts []string
	for _, c := range cells {
		hosts = append(hosts, c.MappedHosts...)
	}
	created := Snapshot.Add(-700 * 24 * time.Hour)
	var out []nova.Aggregate
	add := func(name string, md map[string]string, members []string) {
		out = append(out, nova.Aggregate{ID: int64(len(out) + 1), UUID: newUUID(), Name: name,
			Hosts: members, Metadata: md, CreatedAt: &created})
	}
	zones := min(3, len(hosts))
	for z := 0; z < zones; z++ {
		var members []string
		for i := z; i < len(hosts); i += zones {
			members = append(members, hosts[i])
		}
		name := fmt.Sprintf("az%d", z+1)
		add(name, map[string]string{"availability_zone": name}, members)
	}
	some := func(percent int) []string {
		var members []string
		for _, h := range hosts {
			if rng.IntN(100) < percent {
				members = append(members, h)
			}
		}
		return members
	}
	for _, p := range projects {
		add("tenant-"+p[:8], map[string]string{"filter_tenant_id": p}, some(8))
	}
	add("gpu", map[string]string{"trait:CUSTOM_GPU_TESLA_T4": "required"}, some(10))
	add("ssd", map[string]string{"ssd": "true"}, some(30))
	add("spare", map[string]string{}, nil)
	return out
}
