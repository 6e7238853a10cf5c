package claims

import (
	"context"
)

// Snapshot returns every consumer's claim on every provider in the claim
// store's layout: host and node of the provider's compute node ("" when its
// root is none), resize_target for an instance's claim on the destination of
// its in-progress migration, the consumer's created_at.
func Snapshot(ctx context.Context, ledger Ledger, cells []CellView) ([]Claim, error) {
	nova, hs, err := load(ctx, ledger, cells)
	if err != nil {
		return nil, err
	}
	out := make([]Claim, 0, len(hs))
	for _, h := range hs {
		cn := nova.Nodes[h.RootUUID]
		c := Claim{Host: cn.Host, Node: cn.Node, InstanceUUID: h.Consumer, ResizeTarget: nova.ResizeTarget(h.RootUUID, h.Consumer),
			CreatedAt: h.CreatedAt, ProviderUUID: h.ProviderUUID, Resources: h.Resources}
		c.FillV1()
		out = append(out, c)
	}
	return out, nil
}
