package claims

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
)

// Exit codes of `rpctl claims heal`, nova-manage placement heal_allocations'
// (nova/cmd/manage.py, PlacementCommands.heal_allocations). 5, 6 and 7 are
// Neutron port failures: rpctl does not heal port allocations, so it never
// returns them.
const (
	ExitHealed          = 0   // allocations were created or updated
	ExitMaxCount        = 1   // --max-count reached, more may remain
	ExitNoComputeNode   = 2   // an instance's compute node record is missing
	ExitWriteFailed     = 3   // an allocation could not be written
	ExitNothingToDo     = 4   // completed, nothing healed (also --dry-run)
	ExitUnsupported     = 8   // vGPU or Cyborg device profile request
	ExitBadInput        = 127 // invalid option values, unknown instance or cell
	ExitUnexpectedError = 255
)

// NovaBatch is heal_allocations' page (and, without --max-count, the count
// at which it stops after a cell with exit 1).
const NovaBatch = 50

// DefaultPage is rpctl's page when --max-count is not given: pages only
// bound memory and round trips, every instance is still looked at in Nova's
// order, so a larger page changes nothing but speed.
const DefaultPage = 1000

// HealOptions are heal_allocations' options.
type HealOptions struct {
	// MaxCount limits how many instances are healed; 0 means batches until
	// complete.
	MaxCount int
	DryRun   bool
	// Instance heals only this instance (its cell is the only cell).
	Instance string
	// Force rebuilds the instance's allocation from its flavor even when it
	// has one (needs Instance).
	Force bool
	// Page overrides DefaultPage for unlimited runs.
	Page int
	// Log receives nova-manage's --verbose lines; nil discards them.
	Log io.Writer
	// DryRunOut receives the "[dry-run] ..." lines.
	DryRunOut io.Writer
	// Progress, when set, is told after every page how many instances
	// the heal has looked at, of how many (-1: not known; only a run
	// without --max-count or --instance counts them first).
	Progress func(done, total int)
}

// HealResult is what a heal did.
type HealResult struct {
	Code      int          `json:"exit_code"`
	Processed int          `json:"processed"`
	Cells     []CellResult `json:"cells"`
	// Message is the line nova-manage prints for a failure (codes 2, 3, 8).
	Message string `json:"message,omitempty"`
	// NoProvider counts, on a dry run, the instances whose allocation
	// names a provider that does not exist yet (a compute node without a
	// uuid or without a provider: `migrate inventory` creates them). They
	// are not printed as "[dry-run]" lines; NoProviderHosts are their
	// hosts, in order. The real run would stop at the first (code 3).
	NoProvider      int      `json:"no_provider_yet,omitempty"`
	NoProviderHosts []string `json:"no_provider_hosts,omitempty"`
}

// CellResult counts what happened in one cell.
type CellResult struct {
	Cell       string `json:"cell"`
	Candidates int    `json:"candidates"`
	Created    int    `json:"created"`
	Updated    int    `json:"updated"`
	UpToDate   int    `json:"up_to_date"`
	InTask     int    `json:"in_task_state"`
	NoHost     int    `json:"not_on_host"`
	DryRun     int    `json:"would_heal"`
}

// Healer heals instance allocations in the given cells.
type Healer struct {
	Cells     []Cell
	Placement Placement
	// PCI, when set, is where compute hosts report PCI devices: an
	// instance's devices on a reporting host are added to its allocation
	// (pci.go). Nil heals no PCI device allocation (nova-manage's
	// heal_allocations heals none either).
	PCI PCIProviders
}

type healKind int

const (
	healNone healKind = iota
	healCreate
	healUpdate
)

type healRun struct {
	*Healer
	o         HealOptions
	log       io.Writer
	nodeCache map[string]string
	// nodesRead holds the compute nodes a page's instances name, read
	// at once (NodeBatcher) for the lookups nodeCache does not answer.
	nodesRead map[HostNode]string
	// placer places instances on their trees (place.go); nil until the
	// first instance needs it.
	placer *placer
	// noProvider counts a dry run's instances with no provider to
	// allocate on yet, and their hosts in order.
	noProvider      int
	noProviderHosts []string
	// looked and total are the progress report's instances (Progress).
	looked, total int
}

// stop ends a heal with a code and nova-manage's message.
type stop struct {
	code int
	msg  string
}

func (s *stop) Error() string { return s.msg }

// Heal runs heal_allocations over h.Cells. Bad options return code 127 with
// nova-manage's message; an unexpected failure returns a plain error (exit
// 255).
func (h *Healer) Heal(ctx context.Context, o HealOptions) (HealResult, error) {
	r := &healRun{Healer: h, o: o, log: o.Log}
	if r.log == nil {
		r.log = io.Discard
	}
	if o.DryRunOut == nil {
		r.o.DryRunOut = r.log
	}
	res := HealResult{}
	if o.Force && o.Instance == "" {
		return HealResult{Code: ExitBadInput, Message: "The --instance flag is required when using --force flag."}, nil
	}
	maxCount, unlimited := o.MaxCount, false
	switch {
	case o.Instance != "":
		maxCount = 1
	case o.MaxCount != 0:
		if o.MaxCount < 1 {
			return HealResult{Code: ExitBadInput, Message: "Must supply a positive integer for --max-count."}, nil
		}
	default:
		maxCount, unlimited = NovaBatch, true
		fmt.Fprintf(r.log, "Running batches of %d until complete\n", NovaBatch)
	}
	if len(h.Cells) == 0 {
		fmt.Fprintln(r.log, "No cells to process.")
		return HealResult{Code: ExitNothingToDo}, nil
	}
	r.total = -1
	if o.Progress != nil && unlimited {
		n, err := countInstances(ctx, h.Cells)
		if err != nil {
			return res, err
		}
		r.total = n
		o.Progress(0, r.total)
	}
	for _, cell := range h.Cells {
		fmt.Fprintf(r.log, "Looking for instances in cell: %s\n", cell.Name())
		limit := maxCount
		if !unlimited {
			// Nova shrinks the next cell's query by what earlier cells
			// healed; after an over-count (a cell's later pages can heal
			// past the limit) the limit is negative and its instance query
			// fails.
			limit = maxCount - res.Processed
			if limit < 0 {
				return res, fmt.Errorf("cell %s: instance query with a negative limit (%d): an earlier cell healed more than --max-count", cell.Name(), limit)
			}
		} else if r.o.Page > 0 {
			limit = r.o.Page
		} else {
			limit = DefaultPage
		}
		r.nodeCache = map[string]string{}
		cr := CellResult{Cell: cell.Name()}
		n, err := r.healCell(ctx, cell, limit, unlimited, &cr)
		res.Processed += n
		res.Cells = append(res.Cells, cr)
		if err != nil {
			var s *stop
			if errors.As(err, &s) {
				res.Code, res.Message = s.code, s.msg
				return res, nil
			}
			return res, err
		}
		if res.Processed == maxCount && o.Instance == "" {
			fmt.Fprintf(r.log, "Max count reached. Processed %d instances.\n", res.Processed)
			res.Code = ExitMaxCount
			return res, nil
		}
	}
	fmt.Fprintf(r.log, "Processed %d instances.\n", res.Processed)
	if res.Processed == 0 {
		res.Code = ExitNothingToDo
	}
	if r.noProvider > 0 {
		// The real run would stop at the first of them: say so with
		// its code, not Nova's dry-run 4.
		res.NoProvider, res.NoProviderHosts = r.noProvider, r.noProviderHosts
		res.Code = ExitWriteFailed
	}
	return res, nil
}

// missingProvider reports an allocation that names a provider Placement
// does not have: the empty uuid of a compute node that has none yet, or
// (when the placer read Placement's providers) a uuid with no provider.
func (r *healRun) missingProvider(a Allocations) bool {
	for rp := range a.Allocations {
		if rp == "" || (r.placer != nil && !r.placer.has(rp)) {
			return true
		}
	}
	return false
}

// healCell is _heal_instances_in_cell: pages of limit instances, oldest
// first; with a limit, it returns once a page ends with exactly limit
// healed (so a later page can heal past it, as Nova's does).
func (r *healRun) healCell(ctx context.Context, cell Cell, limit int, unlimited bool, cr *CellResult) (int, error) {
	processed := 0
	var after *Page
	for {
		if err := ctx.Err(); err != nil {
			return processed, err
		}
		insts, err := cell.Instances(ctx, after, limit, r.o.Instance)
		if err != nil {
			return processed, err
		}
		if len(insts) == 0 {
			return processed, nil
		}
		fmt.Fprintf(r.log, "Found %d candidate instances.\n", len(insts))
		cr.Candidates += len(insts)
		n, err := r.healPage(ctx, cell, insts, cr)
		processed += n
		if err != nil {
			return processed, err
		}
		if r.o.Progress != nil {
			r.looked += len(insts)
			r.o.Progress(r.looked, r.total)
		}
		if (!unlimited && processed == limit) || r.o.Instance != "" {
			return processed, nil
		}
		after = pageAfter(&insts[len(insts)-1])
	}
}

// currentAllocations reads what Placement holds for the instances of a page
// that heal_allocations asks Placement about: those in no task state and on
// a node.
func currentAllocations(ctx context.Context, p Placement, insts []Instance) (map[string]*Allocations, error) {
	var uuids []string
	for _, in := range insts {
		if in.TaskState == nil && in.Node != nil {
			uuids = append(uuids, in.UUID)
		}
	}
	return p.ConsumerAllocations(ctx, uuids)
}

// readNodes reads, when the cell can, the compute nodes of a page's
// instances in one go, for fromFlavor's lookups: the same (host, node)
// lookups it would make one by one, so its answers do not change.
func (r *healRun) readNodes(ctx context.Context, cell Cell, insts []Instance) error {
	r.nodesRead = nil
	nb, ok := cell.(NodeBatcher)
	if !ok {
		return nil
	}
	var keys []HostNode
	seen := map[HostNode]bool{}
	for _, in := range insts {
		if in.Node == nil {
			continue
		}
		if _, cached := r.nodeCache[*in.Node]; cached {
			continue
		}
		k := HostNode{Node: *in.Node}
		if in.Host != nil {
			k.Host = *in.Host
		}
		if !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return nil
	}
	got, err := nb.ComputeNodeUUIDs(ctx, keys)
	if err != nil {
		return err
	}
	r.nodesRead = got
	return nil
}

// pageAfter is the marker of the page that follows instance in.
func pageAfter(in *Instance) *Page { return &Page{CreatedAt: in.CreatedAt, ID: in.ID} }

type pending struct {
	w    Write
	kind healKind
	in   *Instance
}

// healPage decides every instance of a page in order and writes the
// allocations in order; a failure stops at that instance with the ones
// before it written, as Nova's one-by-one PUTs leave them.
func (r *healRun) healPage(ctx context.Context, cell Cell, insts []Instance, cr *CellResult) (int, error) {
	current, err := currentAllocations(ctx, r.Placement, insts)
	if err != nil {
		return 0, err
	}
	if err := r.readNodes(ctx, cell, insts); err != nil {
		return 0, err
	}
	var queue []pending
	processed := 0
	flush := func() error {
		if len(queue) == 0 {
			return nil
		}
		ws := make([]Write, len(queue))
		for i, p := range queue {
			ws[i] = p.w
		}
		n, err := r.Placement.PutAllocations(ctx, ws)
		var we *WriteError
		rereads := 0 // of the consumer at the head of the queue
		for errors.As(err, &we) && we.Conflict && (n > 0 || rereads < conflictRereads) {
			// Another writer (another heal, on Galera possibly through
			// another node) changed this consumer since the page was read:
			// read it again and decide again, rather than stop the run.
			if n > 0 {
				rereads = 0
			}
			rereads++
			r.logWritten(queue[:n], cr)
			processed += n
			queue, ws = queue[n:], ws[n:]
			cur, rerr := r.Placement.ConsumerAllocations(ctx, []string{queue[0].in.UUID})
			if rerr != nil {
				return rerr
			}
			r.recount(queue[0].w, cur[queue[0].in.UUID])
			w, kind, derr := r.decide(ctx, cell, queue[0].in, cur[queue[0].in.UUID], cr)
			if derr != nil {
				return derr
			}
			if kind == healNone {
				queue, ws = queue[1:], ws[1:]
			} else {
				queue[0].w, queue[0].kind, ws[0] = w, kind, w
			}
			if len(queue) == 0 {
				n, err = 0, nil
				break
			}
			n, err = r.Placement.PutAllocations(ctx, ws)
		}
		r.logWritten(queue[:n], cr)
		processed += n
		queue = nil
		if err != nil {
			if errors.As(err, &we) {
				return &stop{ExitWriteFailed, fmt.Sprintf("Failed to update allocations for consumer %s. Error: %s", we.Consumer, we.Detail)}
			}
			return err
		}
		return nil
	}
	for i := range insts {
		in := &insts[i]
		w, kind, err := r.decide(ctx, cell, in, current[in.UUID], cr)
		if err != nil {
			if ferr := flush(); ferr != nil {
				return processed, ferr
			}
			return processed, err
		}
		if kind == healNone {
			continue
		}
		if r.o.DryRun && r.missingProvider(w.Alloc) {
			r.noProvider++
			if in.Host != nil && !slices.Contains(r.noProviderHosts, *in.Host) {
				r.noProviderHosts = append(r.noProviderHosts, *in.Host)
			}
			continue
		}
		if r.o.DryRun {
			cr.DryRun++
			body, _ := json.Marshal(w.Alloc)
			verb := "Create"
			if kind == healUpdate {
				verb = "Update"
			}
			fmt.Fprintf(r.o.DryRunOut, "[dry-run] %s allocations for instance %s: %s\n", verb, in.UUID, body)
			continue
		}
		queue = append(queue, pending{w, kind, in})
	}
	return processed, flush()
}

// logWritten counts and logs the written allocations as nova-manage does.
func (r *healRun) logWritten(written []pending, cr *CellResult) {
	for _, p := range written {
		if p.kind == healCreate {
			cr.Created++
			fmt.Fprintf(r.log, "Successfully created allocations for instance %s.\n", p.w.Consumer)
		} else {
			cr.Updated++
			fmt.Fprintf(r.log, "Successfully updated allocations for instance %s.\n", p.w.Consumer)
		}
	}
}

// decide is _heal_allocations_for_instance up to the PUT.
func (r *healRun) decide(ctx context.Context, cell Cell, in *Instance, cur *Allocations, cr *CellResult) (Write, healKind, error) {
	if in.TaskState != nil {
		cr.InTask++
		fmt.Fprintf(r.log, "Instance %s is undergoing a task state transition: %s\n", in.UUID, *in.TaskState)
		return Write{}, healNone, nil
	}
	if in.Node == nil {
		cr.NoHost++
		fmt.Fprintf(r.log, "Instance %s is not on a host.\n", in.UUID)
		return Write{}, healNone, nil
	}
	flavor, err := ParseFlavor(in.FlavorJSON)
	if err != nil {
		return Write{}, healNone, fmt.Errorf("cell %s: instance %s: %w", cell.Name(), in.UUID, err)
	}
	if err := CheckHealable(in.UUID, flavor); err != nil {
		return Write{}, healNone, &stop{ExitUnsupported, err.Error()}
	}
	kind := healNone
	var alloc Allocations
	if cur != nil && len(cur.Allocations) > 0 {
		alloc = *cur
	} else {
		kind = healCreate
		if alloc, err = r.fromFlavor(ctx, cell, in, flavor, nil); err != nil {
			return Write{}, healNone, err
		}
	}
	if alloc.ProjectID != in.ProjectID || alloc.UserID != in.UserID {
		kind = healUpdate
		alloc.ProjectID, alloc.UserID = in.ProjectID, in.UserID
	}
	if r.o.Force {
		fmt.Fprintf(r.log, "Force flag passed for instance %s\n", in.UUID)
		kind = healUpdate
		fresh, err := r.fromFlavor(ctx, cell, in, flavor, &alloc)
		if err != nil {
			return Write{}, healNone, err
		}
		fresh.ConsumerGeneration = alloc.ConsumerGeneration
		alloc = fresh
	}
	pci, err := r.addPCI(ctx, cell, in, &alloc)
	if err != nil {
		return Write{}, healNone, fmt.Errorf("cell %s: instance %s: %w", cell.Name(), in.UUID, err)
	}
	if pci && kind == healNone {
		kind = healUpdate
	}
	if kind == healNone {
		cr.UpToDate++
		fmt.Fprintf(r.log, "The allocation of instance %s is up-to-date. Nothing to be healed.\n", in.UUID)
		return Write{}, healNone, nil
	}
	// The PUT body carries no provider generations (Placement ignores them).
	out := Allocations{Allocations: map[string]ProviderAllocation{}, ProjectID: alloc.ProjectID, UserID: alloc.UserID, ConsumerGeneration: alloc.ConsumerGeneration}
	for rp, pa := range alloc.Allocations {
		out.Allocations[rp] = ProviderAllocation{Resources: pa.Resources}
	}
	return Write{Consumer: in.UUID, Alloc: out}, kind, nil
}

// fromFlavor is _heal_missing_alloc: the flavor's resources against the
// instance's compute node, placed where its tree holds them (placeFor);
// held is the allocation a forced rebuild replaces.
func (r *healRun) fromFlavor(ctx context.Context, cell Cell, in *Instance, f Flavor, held *Allocations) (Allocations, error) {
	node, ok := r.nodeCache[*in.Node]
	if !ok {
		host := ""
		if in.Host != nil {
			host = *in.Host
		}
		var err error
		node, ok = r.nodesRead[HostNode{host, *in.Node}]
		if !ok {
			node, err = cell.ComputeNodeUUID(ctx, host, *in.Node)
		}
		if errors.Is(err, ErrComputeHostNotFound) {
			hostRepr := "None"
			if in.Host != nil {
				hostRepr = *in.Host
			}
			return Allocations{}, &stop{ExitNoComputeNode, fmt.Sprintf("Compute host %s could not be found.", hostRepr)}
		}
		if err != nil {
			return Allocations{}, err
		}
		r.nodeCache[*in.Node] = node
	}
	bfv := in.ImageRef == ""
	if in.RootIsVolume != nil {
		bfv = *in.RootIsVolume
	}
	res, err := Resources(f, bfv)
	if err != nil {
		return Allocations{}, fmt.Errorf("instance %s: %w", in.UUID, err)
	}
	placed, err := r.placeFor(ctx, in, node, f, bfv, res, held)
	if err != nil {
		var pe *PlaceError
		if errors.As(err, &pe) {
			return Allocations{}, &stop{ExitWriteFailed, pe.Error()}
		}
		return Allocations{}, err
	}
	return Allocations{
		Allocations: placed,
		ProjectID:   in.ProjectID,
		UserID:      in.UserID,
	}, nil
}
