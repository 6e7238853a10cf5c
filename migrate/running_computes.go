package migrate

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// ServiceDownTime is Nova's [DEFAULT]service_down_time default: a service
// whose updated_at is older is down.
const ServiceDownTime = 60 * time.Second

// ComputeServices is the optional part of a Cell that tells which
// nova-compute services run.
type ComputeServices interface {
	// ComputeServicesUpdatedSince lists the hosts of live, enabled
	// nova-compute services updated at or after since.
	ComputeServicesUpdatedSince(ctx context.Context, since time.Time) ([]string, error)
}

// RunningComputesWarning is the warning for a layout a running
// nova-compute undoes, or "" when the layout is flat or no compute service
// of the cells is up. Nova 26's libvirt driver rewrites the root
// provider's VCPU, MEMORY_MB and DISK_GB at every periodic update and
// leaves other providers alone: a nested tree then gets VCPU and MEMORY_MB
// back on its root, counted twice.
func RunningComputesWarning(ctx context.Context, cells []Cell, layout string, now time.Time) (string, error) {
	if layout != LayoutNested {
		return "", nil
	}
	var up []string
	for _, c := range cells {
		cs, ok := c.(ComputeServices)
		if !ok {
			continue
		}
		hosts, err := cs.ComputeServicesUpdatedSince(ctx, now.Add(-ServiceDownTime))
		if err != nil {
			return "", err
		}
		up = append(up, hosts...)
	}
	if len(up) == 0 {
		return "", nil
	}
	shown := up
	if len(shown) > 5 {
		shown = shown[:5]
	}
	more := ""
	if len(up) > len(shown) {
		more = fmt.Sprintf(" and %d more", len(up)-len(shown))
	}
	return fmt.Sprintf("warning: --layout nested on a cloud whose nova-compute services run (%d up: %s%s): each one rewrites its root provider's VCPU, MEMORY_MB and DISK_GB at its next update, and the NUMA children keep theirs, so the cloud counts them twice (rpctl status then fails). Only the flat layout survives a running nova-compute; use nested for clouds whose tools report that way, or for offline what-if questions.",
		len(up), strings.Join(shown, ", "), more), nil
}
