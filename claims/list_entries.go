package claims

import (
	"context"
	"slices"
	"time"
)

// ListOptions filter List; empty fields match everything.
type ListOptions struct {
	Host     string   // the provider's compute node host or hypervisor_hostname
	Provider string   // provider uuid or name
	Consumer string   // consumer uuid
	Projects []string // consumer project ids
	// Orphans keeps only what Audit would call orphaned with Expiry.
	Orphans bool
	Expiry  time.Duration
	Now     time.Time
}

// Entry is one consumer's allocation on one provider, with what Nova says.
type Entry struct {
	Holding
	Type   string // instance, migration, unknown
	Host   string // the provider's compute node ("" when it is none)
	Node   string
	Nova   string // NovaActive, NovaOtherNode, NovaDeleted, NovaMigrating, NovaUnknown
	Orphan bool   // Audit's verdict (Nova's rule and the expiry)
}

// List returns every allocation matching o, by consumer then provider id.
func List(ctx context.Context, ledger Ledger, cells []CellView, o ListOptions) ([]Entry, error) {
	nova, hs, err := load(ctx, ledger, cells)
	if err != nil {
		return nil, err
	}
	var out []Entry
	for _, h := range hs {
		cn := nova.Nodes[h.RootUUID]
		e := Entry{Holding: h, Type: nova.Type(h.Consumer), Host: cn.Host, Node: cn.Node, Nova: nova.Says(h.RootUUID, h.Consumer)}
		e.Orphan = novaOwned(h.Resources) && !nova.Known(h.RootUUID, h.Consumer) && o.Now.Sub(h.CreatedAt) >= o.Expiry
		switch {
		case o.Host != "" && o.Host != cn.Host && o.Host != cn.Node:
		case o.Provider != "" && o.Provider != h.ProviderUUID && o.Provider != h.ProviderName:
		case o.Consumer != "" && o.Consumer != h.Consumer:
		case len(o.Projects) > 0 && !slices.Contains(o.Projects, h.Project):
		case o.Orphans && !e.Orphan:
		default:
			out = append(out, e)
		}
	}
	return out, nil
}
