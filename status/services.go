package status

import (
	"context"
	"fmt"
)

// OldControlServices lists the live nova-conductor and nova-osapi_compute
// services of every cell older than min ("cell1: nova-conductor on ctl1
// (version 30)"), and how many there are in all. The inventory migration
// refuses to run while there are any: older control planes do not read the
// allocation ratios and providers it writes as it writes them.
func OldControlServices(ctx context.Context, cells []Cell, min int64, sample int) ([]string, int, error) {
	if min <= 0 {
		min = DefaultMinServiceVersion
	}
	var out []string
	total := 0
	for _, c := range cells {
		sv, err := c.ServiceVersionSummary(ctx, controlBinaries, min, sample)
		if err != nil {
			return nil, 0, err
		}
		for _, s := range sv {
			total += s.Below
			for _, f := range s.First {
				if len(out) < sample {
					out = append(out, fmt.Sprintf("%s: %s on %s (version %d)", cellName(c), s.Binary, f.Host, f.Version))
				}
			}
		}
	}
	return out, total, nil
}
