package claims

import (
	"context"
	"errors"
	"io"
)

// Skipped is an instance a batch could not heal, and why (its compute
// node is missing, it asks for vGPU, Placement refused its allocation).
type Skipped struct {
	Cell     string
	Instance string
	Host     string
	Err      error
}

// Batch heals instances in bounded steps for an online migration: each
// Run heals at most count instances, in heal_allocations' order and with
// its rules, and remembers where it stopped, so the runner's batches walk
// every cell once. Unlike heal_allocations it does not stop at an instance
// it cannot heal: that one is reported as Skipped and the rest go on.
type Batch struct {
	Cells     []Cell
	Placement Placement
	// PCI is Healer.PCI.
	PCI PCIProviders
	// Page bounds the instances read at once (default DefaultPage).
	Page int
	// Progress, when set, is told after every instance how many the
	// batches have looked at, of how many (counted at the first Run).
	Progress func(done, total int)

	cell          int
	after         *Page
	run           *healRun
	looked, total int
	// elsewhere counts the instances found healed by another writer
	// between this batch's read and its write.
	elsewhere int
}

// DoneElsewhere is how many of the instances Run reported done were found
// healed by another writer (another run, on Galera possibly through another
// node) rather than by this batch: their consumer generation conflict was
// re-read, as Nova re-reads after a 409.
func (b *Batch) DoneElsewhere() int { return b.elsewhere }

// conflictRereads bounds how often one instance is re-read after its
// consumer changed under the write.
const conflictRereads = 3

// Run heals at most count instances. found counts the instances that
// needed healing (healed or skipped), done those healed.
func (b *Batch) Run(ctx context.Context, count int) (found, done int, skipped []Skipped, err error) {
	if b.run == nil {
		b.run = &healRun{Healer: &Healer{Cells: b.Cells, Placement: b.Placement, PCI: b.PCI}, log: io.Discard, nodeCache: map[string]string{}}
		if b.Progress != nil {
			if b.total, err = countInstances(ctx, b.Cells); err != nil {
				return 0, 0, nil, err
			}
			b.Progress(0, b.total)
		}
	}
	page := b.Page
	if page <= 0 {
		page = DefaultPage
	}
	var queue []Write
	var hosts []string
	var insts []*Instance
	cr := &CellResult{}
	for b.cell < len(b.Cells) && len(queue) < count {
		cell := b.Cells[b.cell]
		rows, err := cell.Instances(ctx, b.after, page, "")
		if err != nil {
			return found, done, skipped, err
		}
		if len(rows) == 0 {
			// The queue holds this cell's instances only: write it
			// before moving on, so Skipped names the right cell.
			if len(queue) > 0 {
				break
			}
			b.cell, b.after = b.cell+1, nil
			b.run.nodeCache = map[string]string{}
			continue
		}
		current, err := currentAllocations(ctx, b.Placement, rows)
		if err != nil {
			return found, done, skipped, err
		}
		if err := b.run.readNodes(ctx, cell, rows); err != nil {
			return found, done, skipped, err
		}
		for i := range rows {
			in := &rows[i]
			b.after = pageAfter(in)
			if b.Progress != nil {
				b.looked++
				b.Progress(b.looked, b.total)
			}
			w, kind, err := b.run.decide(ctx, cell, in, current[in.UUID], cr)
			if err != nil {
				var s *stop
				if !errors.As(err, &s) {
					return found, done, skipped, err
				}
				found++
				skipped = append(skipped, Skipped{Cell: cell.Name(), Instance: in.UUID, Host: deref(in.Host), Err: errors.New(s.msg)})
				continue
			}
			if kind == healNone {
				continue
			}
			found++
			queue = append(queue, w)
			hosts = append(hosts, deref(in.Host))
			insts = append(insts, in)
			if len(queue) == count {
				break
			}
		}
	}
	cellName := ""
	var cell Cell
	if b.cell < len(b.Cells) {
		cell = b.Cells[b.cell]
		cellName = cell.Name()
	}
	rereads := 0
	for len(queue) > 0 {
		n, err := b.Placement.PutAllocations(ctx, queue)
		done += n
		if err == nil {
			break
		}
		var we *WriteError
		if !errors.As(err, &we) {
			return found, done, skipped, err
		}
		if n > 0 {
			rereads = 0
		}
		queue, hosts, insts = queue[n:], hosts[n:], insts[n:]
		if rereads++; we.Conflict && cell != nil && rereads <= conflictRereads {
			// Someone else wrote this consumer since we read it: read it
			// again and decide again, as heal_allocations would on its
			// next run.
			w, kind, rerr := b.reread(ctx, cell, insts[0], queue[0], cr)
			if rerr != nil {
				return found, done, skipped, rerr
			}
			if kind != healNone {
				queue[0] = w
				continue
			}
			done++
			b.elsewhere++
		} else {
			if err := b.forget(ctx, queue[0]); err != nil {
				return found, done, skipped, err
			}
			skipped = append(skipped, Skipped{Cell: cellName, Instance: queue[0].Consumer, Host: hosts[0], Err: refused(we)})
		}
		rereads = 0
		queue, hosts, insts = queue[1:], hosts[1:], insts[1:]
	}
	return found, done, skipped, nil
}

// reread decides an instance again from what Placement holds now; prev
// is the write that met the conflict.
func (b *Batch) reread(ctx context.Context, cell Cell, in *Instance, prev Write, cr *CellResult) (Write, healKind, error) {
	cur, err := b.Placement.ConsumerAllocations(ctx, []string{in.UUID})
	if err != nil {
		return Write{}, healNone, err
	}
	b.run.recount(prev, cur[in.UUID])
	w, kind, err := b.run.decide(ctx, cell, in, cur[in.UUID], cr)
	var s *stop
	if errors.As(err, &s) {
		return Write{}, healNone, nil
	}
	return w, kind, err
}

// forget takes a skipped write out of the model: the consumer counts as
// Placement holds it, and the next instances may use the room it claimed.
func (b *Batch) forget(ctx context.Context, w Write) error {
	if b.run.placer == nil {
		return nil
	}
	cur, err := b.Placement.ConsumerAllocations(ctx, []string{w.Consumer})
	if err != nil {
		return err
	}
	b.run.recount(w, cur[w.Consumer])
	return nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
