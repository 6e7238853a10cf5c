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
	// Page bounds the instances read at once (default DefaultPage).
	Page int

	cell  int
	after *Page
	run   *healRun
}

// Run heals at most count instances. found counts the instances that
// needed healing (healed or skipped), done those healed.
func (b *Batch) Run(ctx context.Context, count int) (found, done int, skipped []Skipped, err error) {
	if b.run == nil {
		b.run = &healRun{Healer: &Healer{Cells: b.Cells, Placement: b.Placement}, log: io.Discard, nodeCache: map[string]string{}}
	}
	page := b.Page
	if page <= 0 {
		page = DefaultPage
	}
	var queue []Write
	var hosts []string
	cr := &CellResult{}
	for b.cell < len(b.Cells) && len(queue) < count {
		cell := b.Cells[b.cell]
		insts, err := cell.Instances(ctx, b.after, page, "")
		if err != nil {
			return found, done, skipped, err
		}
		if len(insts) == 0 {
			// The queue holds this cell's instances only: write it
			// before moving on, so Skipped names the right cell.
			if len(queue) > 0 {
				break
			}
			b.cell, b.after = b.cell+1, nil
			b.run.nodeCache = map[string]string{}
			continue
		}
		current, err := currentAllocations(ctx, b.Placement, insts)
		if err != nil {
			return found, done, skipped, err
		}
		for i := range insts {
			in := &insts[i]
			b.after = pageAfter(in)
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
			if len(queue) == count {
				break
			}
		}
	}
	cellName := ""
	if b.cell < len(b.Cells) {
		cellName = b.Cells[b.cell].Name()
	}
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
		skipped = append(skipped, Skipped{Cell: cellName, Instance: queue[n].Consumer, Host: hosts[n], Err: err})
		queue, hosts = queue[n+1:], hosts[n+1:]
	}
	return found, done, skipped, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
