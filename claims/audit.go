package claims

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// NovaClasses are the classes whose allocations Nova's audit looks at: an
// allocation holding any of them is Nova's (nova/cmd/manage.py NOVA_RCS).
var NovaClasses = []string{"VCPU", "MEMORY_MB", "DISK_GB", "VGPU", "NET_BW_EGR_KILOBIT_PER_SEC",
	"NET_BW_IGR_KILOBIT_PER_SEC", "PCPU", "MEM_ENCRYPTION_CONTEXT"}

func novaOwned(res map[string]int64) bool {
	for _, rc := range NovaClasses {
		if _, ok := res[rc]; ok {
			return true
		}
	}
	return false
}

// Exit codes of `claims audit`, nova-manage placement audit's.
const (
	AuditNone         = 0
	AuditDeleteFailed = 1
	AuditFound        = 3
	AuditDeleted      = 4
)

// AuditOptions select what Audit looks at and does.
type AuditOptions struct {
	Provider string        // one provider's uuid; "" all
	Expiry   time.Duration // allocations whose consumer is younger are never orphans
	Delete   bool
	Now      time.Time
	// Progress, when set, is told about every step in the words of
	// nova-manage's --verbose output.
	Progress func(string)
	// Counted, when set, is told after every allocation looked at how
	// many of how many (issue 35: the progress bar).
	Counted func(done, total int)
}

// Orphan is an allocation nothing in Nova owns.
type Orphan struct {
	Holding
	// Type is what the cells say the consumer is: instance, migration or
	// unknown.
	Type    string
	Deleted bool
	Failed  error
}

// AuditResult is what an audit found and did.
type AuditResult struct {
	Orphans []Orphan
	// Young are allocations that would be orphans but whose consumer is
	// younger than the expiry.
	Young []Holding
	// Stopped names the provider whose delete failed (the run stops there,
	// as Nova's does).
	Stopped string
}

// Code is the exit code nova-manage placement audit would give.
func (r *AuditResult) Code(deleting bool) int {
	switch {
	case r.Stopped != "":
		return AuditDeleteFailed
	case len(r.Orphans) == 0:
		return AuditNone
	case deleting:
		return AuditDeleted
	}
	return AuditFound
}

// ErrBadInput marks errors that are the operator's input (exit 127).
var ErrBadInput = errors.New("invalid input")

// auditBatch bounds the removals made ahead at once.
const auditBatch = 1000

// Audit finds (and with Delete removes) orphaned allocations with Nova 26's
// rules: walking providers in id order, an allocation holding any of
// NovaClasses is orphaned when its consumer is neither a live instance on the
// node of the provider's root (its compute node) nor an in-progress migration
// from or to that node — and, beyond Nova, when the consumer is older than
// Expiry. A provider whose root is no compute node has only orphans (Nova's
// rule, which includes sharing providers). Every removal is its own
// transaction (Ledger.RemoveConsumerFromProvider), so an interrupted run
// leaves whole consumers and a re-run finishes the job.
func Audit(ctx context.Context, ledger Ledger, cells []CellView, o AuditOptions) (*AuditResult, error) {
	say := o.Progress
	if say == nil {
		say = func(string) {}
	}
	if o.Provider != "" {
		ok, err := ledger.ProviderExists(ctx, o.Provider)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, fmt.Errorf("%w: resource provider with UUID %s does not exist", ErrBadInput, o.Provider)
		}
	}
	nova, all, err := load(ctx, ledger, cells)
	if err != nil {
		return nil, err
	}
	res := &AuditResult{}
	missingSaid := map[string]bool{}
	hs := byProvider(all)
	// The removals are made ahead in batches when the ledger can (each
	// its own transaction, in the loop's order, none past the first that
	// fails), and taken here in order: the same removals, lines and stop
	// as one at a time; a failed one is made again alone, which gives its
	// own error.
	batch, _ := ledger.(BatchRemover)
	var ahead []Removal
	var aheadErr []error
	orphaned := func(h Holding) bool {
		return (o.Provider == "" || h.ProviderUUID == o.Provider) && novaOwned(h.Resources) &&
			!nova.Known(h.RootUUID, h.Consumer) && o.Now.Sub(h.CreatedAt) >= o.Expiry
	}
	remove := func(i int) error {
		h := hs[i]
		if len(ahead) == 0 && batch != nil {
			var rs []Removal
			for _, n := range hs[i:] {
				if res.Stopped != "" && n.ProviderID != h.ProviderID {
					break // Nova stops after the provider whose delete failed
				}
				if orphaned(n) && len(rs) < auditBatch {
					rs = append(rs, Removal{n.Consumer, n.ProviderID})
				}
			}
			done, err := batch.RemoveConsumersFromProviders(ctx, rs)
			if errors.Is(err, ErrNoBatch) {
				batch = nil
			} else {
				ahead, aheadErr = rs[:done], make([]error, done)
				if err != nil {
					ahead, aheadErr = rs[:done+1], append(aheadErr, err)
				}
			}
		}
		if len(ahead) > 0 {
			r, err := ahead[0], aheadErr[0]
			ahead, aheadErr = ahead[1:], aheadErr[1:]
			if r.Consumer != h.Consumer || r.ProviderID != h.ProviderID {
				return fmt.Errorf("internal error: removal of consumer %s from provider %d was made ahead as %s from %d", h.Consumer, h.ProviderID, r.Consumer, r.ProviderID)
			}
			if err == nil {
				return nil
			}
		}
		_, err := ledger.RemoveConsumerFromProvider(ctx, h.Consumer, h.ProviderID)
		return err
	}
	total := 0
	for _, h := range hs {
		if o.Provider == "" || h.ProviderUUID == o.Provider {
			total++
		}
	}
	looked := 0
	count := func() {
		if o.Counted != nil {
			o.Counted(looked, total)
		}
	}
	count()
	for i, h := range hs {
		if ctx.Err() != nil && len(ahead) == 0 {
			// A signal: what was done so far is in res, for the caller
			// to report (removals made ahead are taken first); every
			// removal was its own transaction.
			return res, context.Cause(ctx)
		}
		if o.Provider != "" && h.ProviderUUID != o.Provider {
			continue
		}
		looked++
		if _, ok := nova.Nodes[h.RootUUID]; !ok && !missingSaid[h.ProviderUUID] {
			missingSaid[h.ProviderUUID] = true
			say(fmt.Sprintf("The compute node for UUID %s can not be found", h.RootUUID))
		}
		if novaOwned(h.Resources) && !nova.Known(h.RootUUID, h.Consumer) {
			if age := o.Now.Sub(h.CreatedAt); age < o.Expiry {
				res.Young = append(res.Young, h)
				say(fmt.Sprintf("Allocations for consumer UUID %s on Resource Provider %s are younger than the expiry (%s < %s): kept", h.Consumer, h.ProviderUUID, age.Round(time.Second), o.Expiry))
			} else {
				orphan := Orphan{Holding: h, Type: nova.Type(h.Consumer)}
				say(fmt.Sprintf("Allocations were set against consumer UUID %s but no existing instances or active migrations are related. ", h.Consumer))
				if o.Delete {
					if err := remove(i); err != nil && ctx.Err() != nil {
						return res, context.Cause(ctx)
					} else if err != nil {
						orphan.Failed = err
						res.Stopped = h.ProviderUUID
						say(fmt.Sprintf("Not able to delete allocations for consumer UUID %s: %v", h.Consumer, err))
					} else {
						orphan.Deleted = true
						say(fmt.Sprintf("Deleted allocations for consumer UUID %s on Resource Provider %s: %s", h.Consumer, h.ProviderUUID, pyDict(h.Resources)))
					}
				} else {
					say(fmt.Sprintf("Allocations for consumer UUID %s on Resource Provider %s can be deleted: %s", h.Consumer, h.ProviderUUID, pyDict(h.Resources)))
				}
				res.Orphans = append(res.Orphans, orphan)
			}
		}
		count()
		// Nova stops after the provider whose delete failed.
		if res.Stopped != "" && (i+1 == len(hs) || hs[i+1].ProviderID != h.ProviderID) {
			say(fmt.Sprintf("The Resource Provider %s had problems when deleting allocations. Stopping now. Please fix the problem by hand and run again.", res.Stopped))
			return res, nil
		}
	}
	if n := len(res.Orphans); n > 0 {
		suffix := "s."
		if n == 1 {
			suffix = "."
		}
		say(fmt.Sprintf("Processed %d allocation%s", n, suffix))
	}
	return res, nil
}

// pyDict prints resources as Python prints a dict of them (Nova's message
// shows the dict), classes in name order.
func pyDict(res map[string]int64) string {
	s := "{"
	for i, rc := range SortedClasses(res) {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("'%s': %d", rc, res[rc])
	}
	return s + "}"
}
