package metrics

import (
	"github.com/rpctl/rpctl/claims"
	"github.com/rpctl/rpctl/status"
)

// Status is the families of upgrade check results: each check's verdict
// (0 Success, 1 Warning, 2 Failure) and whether it could not run.
func Status(results []status.Result) []*Family {
	res := gauge("rpctl_status_check_result", "The upgrade check's result: 0 Success, 1 Warning, 2 Failure (rpctl status); tool is nova-status, placement-status or rpctl.", "check", "tool")
	broke := gauge("rpctl_status_check_error", "1 when the check crashed or could not read its database (its result is then 2).", "check", "tool")
	for _, r := range results {
		tool := r.Tool
		if tool == "" {
			tool = status.ToolRpctl
		}
		res.Add(float64(r.Code), r.Check, tool)
		e := 0.0
		if r.Crashed || r.Unreadable {
			e = 1
		}
		broke.Add(e, r.Check, tool)
	}
	return []*Family{res, broke}
}

// Drift is the families of inventory totals that disagree with their
// compute node's legacy columns.
func Drift(ds []status.Drift) []*Family {
	d := gauge("rpctl_inventory_drift", "Placement's inventory total minus the compute node's legacy vcpus/memory_mb/local_gb, for each that disagree.",
		"provider", "provider_uuid", "resource_class", "cell", "host")
	n := gauge("rpctl_inventory_drifted_inventories", "Inventories whose total disagrees with their compute node's legacy column.")
	for _, x := range ds {
		d.Add(float64(x.Placement-x.Legacy), x.Provider, x.ProviderUUID, x.Class, x.Cell, x.Host)
	}
	n.Add(float64(len(ds)))
	return []*Family{d, n}
}

// Missing is the families of instances without allocations, per provider
// (its compute node's; "" when unknown) and class.
func Missing(ms []status.Missing) []*Family {
	labels := []string{"provider", "provider_uuid", "resource_class"}
	n := gauge("rpctl_claims_missing_allocations", "Live instances on the provider that hold no allocation of the class their flavor asks for (rpctl claims heal would write them).", labels...)
	amount := gauge("rpctl_claims_missing_resources", "The amount of the class those instances' flavors ask for.", labels...)
	for _, m := range ms {
		n.Add(float64(m.Instances), m.Provider, m.ProviderUUID, m.Class)
		amount.Add(float64(m.Amount), m.Provider, m.ProviderUUID, m.Class)
	}
	return []*Family{n, amount}
}

// Audit is the families of a claims audit: orphaned allocations per
// provider and class, and in all.
func Audit(res *claims.AuditResult) []*Family {
	labels := []string{"provider", "provider_uuid", "resource_class"}
	n := gauge("rpctl_claims_orphaned_allocations", "Consumers holding the class on the provider that no instance or in-progress migration owns (nova-manage placement audit's orphans).", labels...)
	amount := gauge("rpctl_claims_orphaned_resources", "The amount of the class those orphaned allocations hold.", labels...)
	all := gauge("rpctl_claims_orphans", "Orphaned allocations (consumer and provider pairs) found by the audit.")
	young := gauge("rpctl_claims_young_allocations", "Allocations that would be orphans but whose consumer is younger than the expiry.")
	type key struct{ uuid, rc string }
	var order []key
	count := map[key]int64{}
	sum := map[key]int64{}
	name := map[string]string{}
	for _, o := range res.Orphans {
		name[o.ProviderUUID] = o.ProviderName
		for _, rc := range claims.SortedClasses(o.Resources) {
			k := key{o.ProviderUUID, rc}
			if _, ok := count[k]; !ok {
				order = append(order, k)
			}
			count[k]++
			sum[k] += o.Resources[rc]
		}
	}
	for _, k := range order {
		n.Add(float64(count[k]), name[k.uuid], k.uuid, k.rc)
		amount.Add(float64(sum[k]), name[k.uuid], k.uuid, k.rc)
	}
	all.Add(float64(len(res.Orphans)))
	young.Add(float64(len(res.Young)))
	return []*Family{n, amount, all, young}
}
