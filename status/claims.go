package status

import (
	"context"
	"fmt"
	"sort"
	"sync"

	"github.com/rpctl/rpctl/claims"
)

// CheckInstancesWithoutAllocations names the check of instances that hold
// no claim in Placement.
const CheckInstancesWithoutAllocations = "Instances Without Allocations"

// missingInstance is a live instance on a node, in no task state, whose
// consumer has no allocation: heal_allocations' candidates.
type missingInstance struct {
	uuid string
	// provider is its compute node's uuid ("" when unknown) and usage what
	// its flavor asks for there (nil when the flavor cannot be read).
	provider string
	usage    map[string]int64
}

// missingState is what loadMissing found, per cell in the cells' order.
type missingState struct {
	once    sync.Once
	byCell  map[string][]missingInstance
	errs    []error
	scanned int
}

// statusPage bounds the instances read at once.
const statusPage = 5000

func (e *Env) loadMissing(ctx context.Context) (map[string][]missingInstance, []error) {
	e.missing.once.Do(func() {
		m := &e.missing
		m.byCell = map[string][]missingInstance{}
		if e.Placement == nil {
			m.errs = []error{e.placementErr()}
			return
		}
		have, err := e.Placement.ConsumersWithAllocations(ctx)
		if err != nil {
			m.errs = []error{err}
			return
		}
		nodes, nerrs := e.loadNodes(ctx)
		m.errs = append(m.errs, nerrs...)
		m.errs = append(m.errs, e.forEachCell(func(c Cell) error {
			byNode := map[[2]string]string{}
			for _, n := range nodes[cellName(c)] {
				if !n.Deleted {
					if _, dup := byNode[[2]string{n.Host, n.Node}]; !dup {
						byNode[[2]string{n.Host, n.Node}] = n.UUID
					}
				}
			}
			var after *claims.Page
			for {
				insts, err := c.Instances(ctx, after, statusPage, "")
				if err != nil {
					return err
				}
				if len(insts) == 0 {
					return nil
				}
				for _, in := range insts {
					m.scanned++
					if in.TaskState != nil || in.Node == nil || have[in.UUID] {
						continue
					}
					mi := missingInstance{uuid: in.UUID}
					host := ""
					if in.Host != nil {
						host = *in.Host
					}
					mi.provider = byNode[[2]string{host, *in.Node}]
					if f, err := claims.ParseFlavor(in.FlavorJSON); err == nil {
						bfv := in.ImageRef == ""
						if in.RootIsVolume != nil {
							bfv = *in.RootIsVolume
						}
						mi.usage, _ = claims.Resources(f, bfv)
					}
					m.byCell[cellName(c)] = append(m.byCell[cellName(c)], mi)
				}
				last := insts[len(insts)-1]
				after = &claims.Page{CreatedAt: last.CreatedAt, ID: last.ID}
			}
		})...)
	})
	return e.missing.byCell, e.missing.errs
}

func (e *Env) checkInstancesWithoutAllocations(ctx context.Context) (Code, string, error) {
	byCell, errs := e.loadMissing(ctx)
	if e.Placement == nil {
		return unavailable(errs...)
	}
	var pcs []perCell
	total := 0
	for _, cell := range e.cellOrder() {
		pc := perCell{cell: cell}
		for _, mi := range byCell[cell] {
			pc.count++
			if len(pc.first) < e.sample() {
				pc.first = append(pc.first, mi.uuid)
			}
		}
		pcs = append(pcs, pc)
		total += pc.count
	}
	if total == 0 {
		return e.withErrors(Success, "", errs)
	}
	d := fmt.Sprintf("%s on a host %s no allocation in Placement (%s), so the scheduler does not see what they use and may over-commit their hosts. Run \"rpctl claims heal\" (or \"rpctl migrate allocations\").",
		plural(total, "instance", "instances"), hasHave(total), joinCells(pcs))
	return e.withErrors(Warning, d, errs)
}

// overuseWithMissing adds what instances without allocations use on their
// providers to Placement's own usage, and returns the inventories that
// then exceed their capacity, besides those Placement already shows.
func (e *Env) overuseWithMissing(ctx context.Context, over []Overuse) ([]Overuse, error) {
	byCell, _ := e.loadMissing(ctx)
	extra := map[string]map[string]int64{}
	for _, list := range byCell {
		for _, mi := range list {
			if mi.provider == "" || mi.usage == nil {
				continue
			}
			if extra[mi.provider] == nil {
				extra[mi.provider] = map[string]int64{}
			}
			for rc, n := range mi.usage {
				extra[mi.provider][rc] += n
			}
		}
	}
	if len(extra) == 0 {
		return over, nil
	}
	uuids := make([]string, 0, len(extra))
	for u := range extra {
		uuids = append(uuids, u)
	}
	sort.Strings(uuids)
	invs, err := e.Placement.InventoryUsages(ctx, uuids)
	if err != nil {
		return nil, err
	}
	seen := map[[2]string]bool{}
	for _, o := range over {
		seen[[2]string{o.UUID, o.Class}] = true
	}
	out := append([]Overuse(nil), over...)
	for _, o := range invs {
		add := extra[o.UUID][o.Class]
		if add == 0 {
			continue
		}
		o.Used += add
		o.Unclaimed = add
		if float64(o.Used) > o.Capacity() {
			if seen[[2]string{o.UUID, o.Class}] {
				for i := range out {
					if out[i].UUID == o.UUID && out[i].Class == o.Class {
						out[i] = o
					}
				}
				continue
			}
			out = append(out, o)
		}
	}
	return out, nil
}
