package claims

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/rpctl/rpctl/flavors"
	"github.com/rpctl/rpctl/internal/nova"
)

// Flavor is the part of an embedded Flavor object that decides an
// instance's resources.
type Flavor struct {
	Name        string            `json:"name"`
	VCPUs       int64             `json:"vcpus"`
	MemoryMB    int64             `json:"memory_mb"`
	RootGB      int64             `json:"root_gb"`
	EphemeralGB int64             `json:"ephemeral_gb"`
	Swap        int64             `json:"swap"` // MiB
	ExtraSpecs  map[string]string `json:"extra_specs"`
}

// ParseFlavor reads the current flavor from instance_extra.flavor
// ({"cur": <Flavor primitive>, "old": ..., "new": ...}), which is what Nova
// loads as instance.flavor.
func ParseFlavor(raw *string) (Flavor, error) {
	if raw == nil || *raw == "" {
		return Flavor{}, errors.New("instance_extra.flavor is empty")
	}
	var v struct {
		Cur *struct {
			Data Flavor `json:"nova_object.data"`
		} `json:"cur"`
	}
	if err := json.Unmarshal([]byte(*raw), &v); err != nil {
		return Flavor{}, fmt.Errorf("instance_extra.flavor: %v", err)
	}
	if v.Cur == nil {
		return Flavor{}, errors.New(`instance_extra.flavor has no "cur" flavor`)
	}
	return v.Cur.Data, nil
}

// UnsupportedError is an instance Nova refuses to heal (exit 8).
type UnsupportedError struct{ Msg string }

func (e *UnsupportedError) Error() string { return e.Msg }

// CheckHealable refuses what nova-manage refuses: vGPU and Cyborg device
// profile requests, whose allocations live on nested providers.
func CheckHealable(uuid string, f Flavor) error {
	if f.ExtraSpecs["resources:VGPU"] != "" {
		return &UnsupportedError{fmt.Sprintf("Healing allocation for instance %s with vGPU resource request is not supported.", uuid)}
	}
	if f.ExtraSpecs["accel:device_profile"] != "" {
		return &UnsupportedError{fmt.Sprintf("Healing allocation for instance %s with Cyborg device profile request is not supported.", uuid)}
	}
	return nil
}

// Resources is nova.scheduler.utils.resources_from_flavor for a request
// spec with no image (as heal_allocations builds it): the merged resources
// of the flavor's Placement request (flavors.Build, Nova's ResourceRequest
// port): resources[N]:CLASS=N extra specs summed over groups, hw:cpu_policy
// dedicated/mixed as PCPU, VCPU/MEMORY_MB from the flavor unless
// overridden, DISK_GB = ephemeral + swap (rounded up to GiB) + root unless
// the instance boots from volume, zero amounts dropped.
func Resources(f Flavor, bootFromVolume bool) (map[string]int64, error) {
	nf := &nova.Flavor{Name: f.Name, VCPUs: f.VCPUs, MemoryMB: f.MemoryMB, RootGB: f.RootGB, EphemeralGB: f.EphemeralGB, Swap: f.Swap, ExtraSpecs: f.ExtraSpecs}
	req, err := flavors.Build(nf, nil, flavors.Options{BootFromVolume: bootFromVolume})
	if err != nil {
		return nil, err
	}
	out := map[string]int64{}
	for _, g := range req.Groups {
		for rc, n := range g.Resources {
			out[rc] += n
		}
	}
	for rc, n := range out {
		if n == 0 {
			delete(out, rc)
		}
	}
	return out, nil
}
