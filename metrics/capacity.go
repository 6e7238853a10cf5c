package metrics

import (
	"slices"
	"strings"

	"github.com/rpctl/rpctl/capacity"
)

// Nova is what the API database knows beside Placement, for labels.
type Nova struct {
	// Public is each flavor's is_public; a flavor from a file is absent.
	Public map[string]bool
	// AggregateNames and AggregateMetadata are by aggregate UUID.
	AggregateNames    map[string]string
	AggregateMetadata map[string]map[string]string
}

// pyBool is how os-capacity's label prints a Python bool.
func pyBool(b, known bool) string {
	switch {
	case !known:
		return ""
	case b:
		return "True"
	}
	return "False"
}

// hostAggregates is os-capacity's az_aggregate and project_aggregate of a
// host: the availability zone of its aggregates (metadata
// availability_zone), and the name of its aggregate that filters tenants
// (metadata filter_tenant_id*), "multiple" when several do.
func (n Nova) hostAggregates(aggs []string) (az, project string) {
	for _, u := range aggs {
		md := n.AggregateMetadata[u]
		if z := md["availability_zone"]; z != "" {
			az = z
		}
		for k := range md {
			if strings.HasPrefix(k, "filter_tenant_id") {
				if project == "" {
					project = n.AggregateNames[u]
				} else {
					project = "multiple"
				}
				break
			}
		}
	}
	return az, project
}

// Capacity is the families of capacity results (one per mode counted).
// The os-capacity families come from the independent result: what fits if
// the cloud is filled with that flavor alone. Its total is rpctl's
// cloud-wide fill (a sharing provider's room is counted once, not once per
// host as a sum over hosts would); its per-host series are published, as
// os-capacity does, only where something fits.
func Capacity(results []*capacity.Result, nova Nova) []*Family {
	osTotal := &Family{Name: "openstack_free_capacity_by_flavor_total", Type: Untyped,
		Help:   "Free capacity if you fill the cloud full of each flavor (os-capacity's metric, rpctl's exact count).",
		Labels: []string{"flavor_name", "public"}}
	osHost := gauge("openstack_free_capacity_hypervisor_by_flavor",
		"Free capacity for each hypervisor if you fill remaining space full of each flavor (os-capacity's metric, rpctl's exact count; hosts where nothing fits are left out).",
		"hypervisor", "flavor_name", "az_aggregate", "project_aggregate")
	total := gauge("rpctl_capacity_free_slots",
		"Instances of the flavor that still fit on all hosts counted: mode independent fills the cloud with that flavor alone, mode pack with the mix.",
		"mode", "flavor_name")
	perAgg := gauge("rpctl_capacity_aggregate_free_slots",
		"Instances of the flavor that still fit on the hosts of a Placement aggregate (a Nova host aggregate when named), filled together.",
		"mode", "flavor_name", "aggregate", "aggregate_name")
	aggHosts := gauge("rpctl_capacity_aggregate_hosts", "Hosts counted in each aggregate.", "aggregate", "aggregate_name")
	hosts := gauge("rpctl_capacity_hosts", "Hosts (non-sharing root providers) counted.")
	seenAgg := map[string]bool{}
	independent := false
	for i, res := range results {
		mode := string(res.Mode)
		for fi, fl := range res.Flavors {
			total.Add(float64(res.Total[fi]), mode, fl)
		}
		for _, a := range res.Aggregates {
			for fi, fl := range res.Flavors {
				perAgg.Add(float64(a.Free[fi]), mode, fl, a.UUID, a.Name)
			}
			if !seenAgg[a.UUID] {
				seenAgg[a.UUID] = true
				aggHosts.Add(float64(a.Hosts), a.UUID, a.Name)
			}
		}
		if i == 0 {
			hosts.Add(float64(len(res.Hosts)))
		}
		if res.Mode != capacity.Independent || independent {
			continue
		}
		independent = true
		for fi, fl := range res.Flavors {
			pub, known := nova.Public[fl]
			osTotal.Add(float64(res.Total[fi]), fl, pyBool(pub, known))
		}
		hs := slices.Clone(res.Hosts)
		slices.SortFunc(hs, func(a, b capacity.Host) int { return strings.Compare(a.Name, b.Name) })
		for _, h := range hs {
			az, project := nova.hostAggregates(h.Aggregates)
			for fi, fl := range res.Flavors {
				if h.Free[fi] > 0 {
					osHost.Add(float64(h.Free[fi]), h.Name, fl, az, project)
				}
			}
		}
	}
	out := []*Family{total, perAgg, aggHosts, hosts}
	if independent {
		out = append([]*Family{osTotal, osHost}, out...)
	}
	return out
}
