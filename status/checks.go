package status

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/rpctl/rpctl/internal/config"
	"github.com/rpctl/rpctl/internal/release"
	"github.com/rpctl/rpctl/migrate"
)

// DefaultMinServiceVersion is the nova-conductor/nova-osapi_compute service
// version rpctl's migration relies on: 37, the last SERVICE_VERSION of Stein
// (nova/objects/service.py: 37 is the first entry on compute RPC 5.1, which
// compute/rpcapi.py lists as Stein's; 38 adds the Train-only
// COMPUTE_STATUS_DISABLED trait). Stein is the release of the
// initial-allocation-ratios work: its conductors and API read a NULL or 0.0
// ratio as "unset" and fill it from initial_*_allocation_ratio, the
// semantics `rpctl migrate ratios` writes, and its computes report the
// inventories rpctl creates through update_provider_tree.
const DefaultMinServiceVersion = 37

// Control-plane binaries whose age blocks the migration; nova-api's service
// record is "nova-osapi_compute".
var controlBinaries = []string{"nova-conductor", "nova-osapi_compute"}

// Names of the checks, the literal strings of the table and --check.
const (
	CheckComputeNodeUUIDs  = "Compute Node UUIDs"
	CheckResourceProviders = "Resource Providers"
	CheckInventoryDrift    = "Inventory Drift"
	CheckAllocationRatios  = "Allocation Ratios"
	CheckOverCommitted     = "Over-committed Providers"
	CheckMissingRootIDs    = "Missing Root Provider IDs"
	CheckIncompleteConsum  = "Incomplete Consumers"
	CheckOrphanedProviders = "Orphaned Providers"
	CheckServiceVersions   = "Service Versions"
)

// Env is what the checks look at. A database that could not be opened is
// given by its error; the checks that need it fail with that error.
type Env struct {
	Cells     []Cell
	CellErrs  []error
	Placement Placement
	// PlacementErr is why Placement is nil.
	PlacementErr error
	Options      config.Options
	// Compute is what the compute nodes' nova-compute reads from nova.conf
	// (with --compute-config-dir, each host's own file): the config the
	// Compute Node Inventories check plans the rows with, the one `migrate
	// inventory` plans with. nil plans with Options (migrate.ComputeConfig).
	Compute *migrate.InventoryConfig
	// ComputeErr is why Compute could not be built; the check that plans
	// fails with it.
	ComputeErr error
	// MinServiceVersion is the oldest nova-conductor/nova-osapi_compute
	// version that passes; 0 means DefaultMinServiceVersion.
	MinServiceVersion int64
	// Aggregates compares Nova's host aggregates with Placement; nil with
	// AggregatesErr when the API database cannot be read, nil without it
	// when none is configured.
	Aggregates    AggregateDiffer
	AggregatesErr error
	// Release names the row of Releases the upstream checks follow
	// (release.Zed); "" means DefaultRelease.
	Release release.Name
	// Upstream is what the config files tell nova-status' and
	// placement-status' checks.
	Upstream Upstream
	// API is Nova's API database; APIErr why it is nil.
	API    APIDB
	APIErr error
	// MainCell is the cell of nova.conf's [database] connection, where
	// Cells v2 counts compute nodes as nova-status does; MainCellErr why
	// it could not be opened. Neither set (no [database] connection):
	// every cell's are counted.
	MainCell    Cell
	MainCellErr error
	// PlacementVersions and CinderVersions ask the Placement and Cinder
	// APIs nova.conf's [placement] and [cinder] reach for their highest
	// microversion; nil when not wired.
	PlacementVersions VersionsFunc
	CinderVersions    VersionsFunc
	// Sample is how many hosts a message names before "and N more"; 0
	// means 5.
	Sample int
	// Sources say where the checks read from (each Result's Source).
	Sources Sources

	nodesOnce  sync.Once
	nodes      map[string][]NodeCapacity // by cell name
	nodesErrs  []error
	provOnce   sync.Once
	provs      []ProviderTotals
	provErr    error
	byUUIDOnce sync.Once
	byUUID     map[string]*ProviderTotals
	overOnce   sync.Once
	over       []Overuse
	overErr    error
	missing    missingState
}

// Prefetch starts, in the background, the bulk reads the given checks share
// or that take longest, so that the cell and Placement servers work at the
// same time while the checks still run, and report, in order.
func (e *Env) Prefetch(ctx context.Context, checks []Check) {
	need := map[string]bool{}
	for _, c := range checks {
		need[c.Name] = true
	}
	joined := need[CheckResourceProviders] || need[CheckInventoryDrift] || need[CheckOrphanedProviders]
	if joined || need[CheckComputeNodeUUIDs] || need[CheckAllocationRatios] {
		go e.loadNodes(ctx)
	}
	if joined {
		go e.loadProviders(ctx)
	}
	if need[CheckOverCommitted] {
		go e.loadOveruse(ctx)
	}
	if need[CheckOverCommitted] || need[CheckInstancesWithoutAllocations] {
		go e.loadMissing(ctx)
	}
}

func (e *Env) loadOveruse(ctx context.Context) ([]Overuse, error) {
	e.overOnce.Do(func() {
		if e.Placement == nil {
			e.overErr = e.placementErr()
			return
		}
		e.over, e.overErr = e.Placement.ListOverusedInventories(ctx)
	})
	return e.over, e.overErr
}

func (e *Env) sample() int {
	if e.Sample > 0 {
		return e.Sample
	}
	return 5
}

// Checks returns the upgrade checks in the order they run: nova-status'
// (nova.cmd.status.UpgradeCommands._upgrade_checks), placement-status'
// (placement.cmd.status.Checks._upgrade_checks), then rpctl's own.
func Checks(e *Env) []Check {
	return append(UpstreamChecks(e), OwnChecks(e)...)
}

// UpstreamChecks are nova-status' and placement-status' checks, in their
// order.
func UpstreamChecks(e *Env) []Check {
	return []Check{
		{Tool: ToolNova, Name: CheckCellsV2, Source: e.source(ReadsAPIDB | ReadsCells), Run: e.checkCellsV2},
		{Tool: ToolNova, Name: CheckPlacementAPI, Source: e.source(ReadsPlacementAPI), Run: e.checkPlacementAPI},
		{Tool: ToolNova, Name: CheckCinderAPI, Source: e.source(ReadsCinderAPI), Run: e.checkCinderAPI},
		{Tool: ToolNova, Name: CheckPolicyJSON, Source: e.policySource(func() string { return e.Upstream.NovaPolicyFile }), Run: func(context.Context) (Code, string, error) { return checkPolicyJSON(e.Upstream.NovaPolicyFile) }},
		{Tool: ToolNova, Name: CheckOldComputes, Source: e.source(ReadsCells), Run: e.checkOldComputes},
		{Tool: ToolNova, Name: CheckMachineTypeUnset, Source: e.source(ReadsCells), Run: e.checkMachineTypeSet},
		{Tool: ToolNova, Name: CheckServiceUserToken, Source: e.source(ReadsConfig), Run: e.checkServiceUserToken},
		{Tool: ToolPlacement, Name: CheckMissingRootIDs, Source: e.source(ReadsPlacement), Run: e.checkRootIDs},
		{Tool: ToolPlacement, Name: CheckIncompleteConsum, Source: e.source(ReadsPlacement), Run: e.checkIncompleteConsumers},
		{Tool: ToolPlacement, Name: CheckPolicyJSON, Source: e.policySource(func() string { return e.Upstream.PlacementPolicyFile }), Run: func(context.Context) (Code, string, error) { return checkPolicyJSON(e.Upstream.PlacementPolicyFile) }},
	}
}

// OwnChecks are rpctl's checks, in the order they run.
func OwnChecks(e *Env) []Check {
	return []Check{
		{Tool: ToolRpctl, Name: CheckComputeNodeUUIDs, Source: e.source(ReadsCells), Run: e.checkUUIDs},
		{Tool: ToolRpctl, Name: CheckResourceProviders, Source: e.source(ReadsCells | ReadsPlacement), Run: e.checkProviders},
		{Tool: ToolRpctl, Name: CheckInventoryDrift, Source: e.source(ReadsCells | ReadsPlacement), Run: e.checkDrift},
		{Tool: ToolRpctl, Name: CheckComputeInventories, Source: e.source(ReadsConfig | ReadsCells | ReadsPlacement), Run: e.checkComputeInventories},
		{Tool: ToolRpctl, Name: CheckAllocationRatios, Source: e.source(ReadsCells), Run: e.checkRatios},
		{Tool: ToolRpctl, Name: CheckInstancesWithoutAllocations, Source: e.source(ReadsCells | ReadsPlacement), Run: e.checkInstancesWithoutAllocations},
		{Tool: ToolRpctl, Name: CheckOverCommitted, Source: e.source(ReadsCells | ReadsPlacement), Run: e.checkOverCommitted},
		{Tool: ToolRpctl, Name: CheckOrphanedProviders, Source: e.source(ReadsCells | ReadsPlacement), Run: e.checkOrphans},
		{Tool: ToolRpctl, Name: CheckServiceVersions, Source: e.source(ReadsCells), Run: e.checkServiceVersions},
		{Tool: ToolRpctl, Name: CheckAggregatesInSync, Source: e.source(ReadsAPIDB | ReadsCells | ReadsPlacement), Run: e.checkAggregates},
		{Tool: ToolRpctl, Name: CheckDatabaseCluster, Source: e.source(ReadsCells | ReadsPlacement), Run: e.checkDatabaseCluster},
	}
}

// unavailable is the Failure of a check whose database cannot be read
// (the error already names the database and what is missing): the check has
// no verdict, so the run exits 255 as nova-status does when its database is
// down, never 2, which CI reads as a verdict on the cloud.
func unavailable(errs ...error) (Code, string, error) {
	return Failure, "", &unreadableError{unavailableDetails(errs)}
}

func unavailableDetails(errs []error) string {
	var msgs []string
	for _, err := range errs {
		if err != nil {
			msgs = append(msgs, err.Error())
		}
	}
	return "Cannot run the check: " + strings.Join(msgs, "; ")
}

// unreadableError is a check's database that cannot be read; its message is
// the check's details.
type unreadableError struct{ details string }

func (e *unreadableError) Error() string { return e.details }

// forEachCell calls fn for every cell; read errors are collected so that
// one broken cell does not hide what the others show.
func (e *Env) forEachCell(fn func(c Cell) error) []error {
	errs := append([]error(nil), e.CellErrs...)
	for _, c := range e.Cells {
		if err := fn(c); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

func cellName(c Cell) string {
	if n := c.Name(); n != "" {
		return n
	}
	return "default"
}

// hostOf names a node by its hypervisor_hostname, the name `openstack
// hypervisor list` and the provider carry.
func hostOf(r NodeRef) string {
	switch {
	case r.Node != "":
		return r.Node
	case r.Host != "":
		return r.Host
	}
	return fmt.Sprintf("id=%d", r.ID)
}

// listSome joins the first items and says how many more there are.
func listSome(items []string, total int) string {
	s := strings.Join(items, ", ")
	if more := total - len(items); more > 0 {
		s += fmt.Sprintf(" and %d more", more)
	}
	return s
}

func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

// perCell formats "cell1: a, b and 3 more; cell2: c" from per-cell samples.
type perCell struct {
	cell  string
	count int
	first []string
}

// tally calls describe on every node of every readable cell, in the cells'
// order, and counts per cell the items it adds, keeping the first few.
func (e *Env) tally(nodes map[string][]NodeCapacity, describe func(n NodeCapacity, add func(string))) (pcs []perCell, total int) {
	for _, cell := range e.cellOrder() {
		pc := perCell{cell: cell}
		add := func(item string) {
			pc.count++
			if len(pc.first) < e.sample() {
				pc.first = append(pc.first, item)
			}
		}
		for _, n := range nodes[cell] {
			describe(n, add)
		}
		pcs = append(pcs, pc)
		total += pc.count
	}
	return pcs, total
}

func joinCells(pc []perCell) string {
	var parts []string
	for _, p := range pc {
		if p.count > 0 {
			parts = append(parts, fmt.Sprintf("%s: %s", p.cell, listSome(p.first, p.count)))
		}
	}
	return strings.Join(parts, "; ")
}

// withErrors turns a verdict into a Failure when some cells could not be
// read, keeping what the readable cells showed.
func (e *Env) withErrors(code Code, details string, errs []error) (Code, string, error) {
	if len(errs) == 0 {
		return code, details, nil
	}
	msg := unavailableDetails(errs)
	if details != "" && len(e.Cells) > 0 {
		msg += " Readable cells: " + details
	}
	return Failure, "", &unreadableError{msg}
}

func (e *Env) checkUUIDs(ctx context.Context) (Code, string, error) {
	nodes, errs := e.loadNodes(ctx)
	pcs, total := e.tally(nodes, func(n NodeCapacity, add func(string)) {
		if !n.Deleted && n.UUID == "" {
			add(hostOf(n.NodeRef))
		}
	})
	if total == 0 {
		return e.withErrors(Success, "", errs)
	}
	d := fmt.Sprintf("%s %s a NULL uuid, so no resource provider can be created for them (%s). Run \"rpctl migrate inventory\".",
		plural(total, "compute node", "compute nodes"), hasHave(total), joinCells(pcs))
	return e.withErrors(Warning, d, errs)
}

func hasHave(n int) string {
	if n == 1 {
		return "has"
	}
	return "have"
}

func (e *Env) checkRatios(ctx context.Context) (Code, string, error) {
	var msgs []string
	code := Success
	// An explicit 0.0 option is a mistake Nova cannot recover from at the
	// resource tracker: it would publish a capacity of zero.
	r := e.Options.Ratios
	for _, o := range []struct {
		name string
		v    *float64
		src  string
	}{{"cpu_allocation_ratio", r.CPU, r.CPUSource}, {"ram_allocation_ratio", r.RAM, r.RAMSource}, {"disk_allocation_ratio", r.Disk, r.DiskSource}} {
		if o.v != nil && *o.v == 0 {
			code = Failure
			msgs = append(msgs, fmt.Sprintf("[DEFAULT] %s is set to 0.0 (%s); unset it or give a positive ratio.", o.name, o.src))
		}
	}
	nodes, errs := e.loadNodes(ctx)
	// Empty is what Nova's migrate_empty_ratio selects: any ratio NULL or 0.0.
	empty, emptyN := e.tally(nodes, func(n NodeCapacity, add func(string)) {
		if !n.Deleted && slices.ContainsFunc(ratiosOf(n), func(r *float64) bool { return r == nil || *r == 0 }) {
			add(hostOf(n.NodeRef))
		}
	})
	negative, negN := e.tally(nodes, func(n NodeCapacity, add func(string)) {
		if !n.Deleted && slices.ContainsFunc(ratiosOf(n), func(r *float64) bool { return r != nil && *r < 0 }) {
			add(hostOf(n.NodeRef))
		}
	})
	if emptyN > 0 {
		code = max(code, Warning)
		msgs = append(msgs, fmt.Sprintf("%s %s a 0.0 or NULL allocation ratio (%s). Run \"rpctl migrate ratios\".",
			plural(emptyN, "compute node", "compute nodes"), hasHave(emptyN), joinCells(empty)))
	}
	if negN > 0 {
		code = max(code, Warning)
		msgs = append(msgs, fmt.Sprintf("%s %s a negative allocation ratio, which no Nova option can set (%s); fix them by hand.",
			plural(negN, "compute node", "compute nodes"), hasHave(negN), joinCells(negative)))
	}
	return e.withErrors(code, strings.Join(msgs, " "), errs)
}

func ratiosOf(n NodeCapacity) []*float64 {
	return []*float64{n.CPURatio, n.RAMRatio, n.DiskRatio}
}

// loadNodes reads every cell's nodes once for the checks that look at them;
// the errors are those of the cells that could not be read.
func (e *Env) loadNodes(ctx context.Context) (map[string][]NodeCapacity, []error) {
	e.nodesOnce.Do(func() {
		e.nodes = map[string][]NodeCapacity{}
		e.nodesErrs = e.forEachCell(func(c Cell) error {
			ns, err := c.ListNodeCapacities(ctx)
			if err != nil {
				return err
			}
			e.nodes[cellName(c)] = ns
			return nil
		})
	})
	return e.nodes, e.nodesErrs
}

func (e *Env) loadProviders(ctx context.Context) ([]ProviderTotals, error) {
	e.provOnce.Do(func() {
		if e.Placement == nil {
			e.provErr = e.placementErr()
			return
		}
		e.provs, e.provErr = e.Placement.ListProviderTotals(ctx)
	})
	return e.provs, e.provErr
}

// providersByUUID indexes the providers once for the checks that join
// them with the nodes (100,000 entries; they run concurrently).
func (e *Env) providersByUUID(provs []ProviderTotals) map[string]*ProviderTotals {
	e.byUUIDOnce.Do(func() {
		e.byUUID = make(map[string]*ProviderTotals, len(provs))
		for i := range provs {
			e.byUUID[provs[i].UUID] = &provs[i]
		}
	})
	return e.byUUID
}

func (e *Env) placementErr() error {
	if e.PlacementErr != nil {
		return e.PlacementErr
	}
	return errors.New("no Placement database")
}

// cellOrder is the cells' names in the order they were given.
func (e *Env) cellOrder() []string {
	var out []string
	for _, c := range e.Cells {
		out = append(out, cellName(c))
	}
	return out
}

// legacyClasses are the inventory classes a compute node's legacy columns
// describe, in Placement's standard order.
var legacyClasses = []string{"VCPU", "MEMORY_MB", "DISK_GB"}

func legacy(n NodeCapacity) [3]int64 { return [3]int64{n.VCPUs, n.MemoryMB, n.LocalGB} }

func placementTotals(p ProviderTotals) [3]*int64 { return [3]*int64{p.VCPU, p.Memory, p.Disk} }

func (e *Env) checkProviders(ctx context.Context) (Code, string, error) {
	nodes, nerrs := e.loadNodes(ctx)
	provs, perr := e.loadProviders(ctx)
	if perr != nil {
		return unavailable(append([]error{perr}, nerrs...)...)
	}
	byUUID := e.providersByUUID(provs)
	// A node without a uuid is the UUID check's business.
	noProv, noProvN := e.tally(nodes, func(n NodeCapacity, add func(string)) {
		if !n.Deleted && n.UUID != "" && byUUID[n.UUID] == nil {
			add(hostOf(n.NodeRef))
		}
	})
	trees := e.providerTrees(provs)
	noInv, noInvN := e.tally(nodes, func(n NodeCapacity, add func(string)) {
		p := byUUID[n.UUID]
		if n.Deleted || n.UUID == "" || p == nil {
			return
		}
		var missing []string
		held := trees.holders(n.UUID)
		for i, v := range legacy(n) {
			if v > 0 && len(held[i]) == 0 {
				missing = append(missing, legacyClasses[i])
			}
		}
		if len(missing) > 0 {
			add(fmt.Sprintf("%s (%s)", hostOf(n.NodeRef), strings.Join(missing, ", ")))
		}
	})
	twice, twiceN := e.tally(nodes, func(n NodeCapacity, add func(string)) {
		if n.Deleted || n.UUID == "" || byUUID[n.UUID] == nil {
			return
		}
		if d := trees.doubled(n.UUID); d != "" {
			add(fmt.Sprintf("%s (%s)", hostOf(n.NodeRef), d))
		}
	})
	var msgs []string
	if noProvN > 0 {
		msgs = append(msgs, fmt.Sprintf("%s with a uuid %s no resource provider (%s).",
			plural(noProvN, "compute node", "compute nodes"), hasHave(noProvN), joinCells(noProv)))
	}
	if noInvN > 0 {
		msgs = append(msgs, fmt.Sprintf("%s %s no inventory for a class their node has (%s).",
			plural(noInvN, "resource provider", "resource providers"), hasHave(noInvN), joinCells(noInv)))
	}
	if twiceN > 0 {
		// A running nova-compute puts VCPU, MEMORY_MB and DISK_GB back on
		// the root of a nested tree: the cloud then offers them twice.
		d := fmt.Sprintf("%s the same class twice, so the cloud offers it twice (%s). Run \"rpctl migrate inventory\" with the --layout and --shared-storage the cloud should have (a nested layout only holds where no nova-compute runs).",
			plural(twiceN, "compute node's provider tree holds", "compute nodes' provider trees hold"), joinCells(twice))
		if len(msgs) > 0 {
			d = strings.Join(msgs, " ") + " " + d
		}
		return e.withErrors(Failure, d, nerrs)
	}
	if len(msgs) == 0 {
		return e.withErrors(Success, "", nerrs)
	}
	msgs = append(msgs, "Run \"rpctl migrate inventory\" (with the --layout and --shared-storage the cloud was migrated with).")
	return e.withErrors(Warning, strings.Join(msgs, " "), nerrs)
}

func (e *Env) checkDrift(ctx context.Context) (Code, string, error) {
	nodes, nerrs := e.loadNodes(ctx)
	provs, perr := e.loadProviders(ctx)
	if perr != nil {
		return unavailable(append([]error{perr}, nerrs...)...)
	}
	byUUID := e.providersByUUID(provs)
	pcs, total := e.tally(nodes, func(n NodeCapacity, add func(string)) {
		for _, d := range driftOf("", n, byUUID[n.UUID]) {
			add(fmt.Sprintf("%s %s legacy %d Placement %d", d.Host, d.Class, d.Legacy, d.Placement))
		}
	})
	if total == 0 {
		return e.withErrors(Success, "", nerrs)
	}
	d := fmt.Sprintf("%s with the compute node's legacy vcpus/memory_mb/local_gb (%s). Check the compute nodes' resource tracker, or re-run \"rpctl migrate inventory\".",
		plural(total, "inventory total disagrees", "inventory totals disagree"), joinCells(pcs))
	return e.withErrors(Warning, d, nerrs)
}

func (e *Env) checkOverCommitted(ctx context.Context) (Code, string, error) {
	over, err := e.loadOveruse(ctx)
	if err != nil {
		return unavailable(err)
	}
	if over, err = e.overuseWithMissing(ctx, over); err != nil {
		return unavailable(err)
	}
	unclaimed := false
	if len(over) == 0 {
		return Success, "", nil
	}
	provs := map[string]bool{}
	var first []string
	for _, o := range over {
		provs[o.UUID] = true
		if len(first) < e.sample() {
			name := o.Name
			if name == "" {
				name = o.UUID
			}
			capacity := o.Capacity()
			note := ""
			if o.Unclaimed > 0 {
				note = fmt.Sprintf(" (%d of it by instances without allocations)", o.Unclaimed)
			}
			consumers, err := e.overConsumers(ctx, o)
			if err != nil {
				return unavailable(err)
			}
			first = append(first, fmt.Sprintf("%s %s used %d%s > capacity %s ((%d - %d) * %s; %s)",
				name, o.Class, o.Used, note, migrate.FormatRatio(&capacity), o.Total, o.Reserved, migrate.FormatRatio(&o.AllocationRatio), consumers))
		}
		unclaimed = unclaimed || o.Unclaimed > 0
	}
	hint := ""
	if unclaimed {
		hint = " Instances without allocations are counted too: \"rpctl claims heal\" would fail for them (no room)."
	}
	return Failure, fmt.Sprintf("%s on %s exceed Placement's capacity (total - reserved) * allocation_ratio: %s. New instances cannot land there and moves will fail; raise the allocation ratio or move instances away.%s",
		plural(len(over), "inventory's allocations", "inventories' allocations"), plural(len(provs), "resource provider", "resource providers"),
		listSome(first, len(over)), hint), nil
}

// overConsumers names the consumers holding an over-committed inventory,
// the most recent first: which claims to look at (two claims racing for
// the last unit, say; see the README on Placement's over-commit race).
func (e *Env) overConsumers(ctx context.Context, o Overuse) (string, error) {
	cs, err := e.Placement.ProviderConsumers(ctx, o.UUID, o.Class)
	if err != nil {
		return "", err
	}
	if len(cs) == 0 {
		return "no consumer holds it", nil
	}
	var names []string
	for _, c := range cs {
		if len(names) == e.sample() {
			break
		}
		names = append(names, fmt.Sprintf("%s (%d)", c.Consumer, c.Used))
	}
	return "consumers, most recent first: " + listSome(names, len(cs)), nil
}

// The two checks of placement-status upgrade check (placement 8.0.0
// placement/cmd/status.py), with its words.
func (e *Env) checkRootIDs(ctx context.Context) (Code, string, error) {
	if e.Placement == nil {
		return unavailable(e.placementErr())
	}
	missing, err := e.Placement.MissingRootProviderIDs(ctx)
	if err != nil {
		return unavailable(err)
	}
	if missing {
		return Failure, `There is at least one resource provider table record which misses its root provider id. Run the "placement-manage db online_data_migrations" command.`, nil
	}
	return Success, "", nil
}

func (e *Env) checkIncompleteConsumers(ctx context.Context) (Code, string, error) {
	if e.Placement == nil {
		return unavailable(e.placementErr())
	}
	n, err := e.Placement.IncompleteConsumers(ctx)
	if err != nil {
		return unavailable(err)
	}
	if n > 0 {
		return Warning, fmt.Sprintf(`There are %d incomplete consumers table records for existing allocations. Run the "placement-manage db online_data_migrations" command.`, n), nil
	}
	return Success, "", nil
}

func (e *Env) checkOrphans(ctx context.Context) (Code, string, error) {
	nodes, nerrs := e.loadNodes(ctx)
	provs, perr := e.loadProviders(ctx)
	if perr != nil || len(nerrs) > 0 {
		// Without every cell a provider cannot be called orphaned.
		return unavailable(append([]error{perr}, nerrs...)...)
	}
	live, deleted := map[string]bool{}, map[string]string{}
	for cell, ns := range nodes {
		for _, n := range ns {
			switch {
			case n.UUID == "":
			case n.Deleted:
				deleted[n.UUID] = cell + ": " + hostOf(n.NodeRef)
			default:
				live[n.UUID] = true
			}
		}
	}
	var orphans []string
	for _, p := range provs {
		if !p.Root || p.Sharing || live[p.UUID] {
			continue
		}
		name := p.Name
		if name == "" {
			name = p.UUID
		}
		if d, ok := deleted[p.UUID]; ok {
			orphans = append(orphans, fmt.Sprintf("%s (node deleted, %s)", name, d))
		} else {
			orphans = append(orphans, fmt.Sprintf("%s (no compute node)", name))
		}
	}
	if len(orphans) == 0 {
		return Success, "", nil
	}
	sort.Strings(orphans)
	n := len(orphans)
	return Warning, fmt.Sprintf("%s without a parent %s no live compute node in any cell: %s. Delete them (openstack resource provider delete) once their allocations are gone.",
		plural(n, "resource provider", "resource providers"), hasHave(n), listSome(orphans[:min(n, e.sample())], n)), nil
}

func (e *Env) checkServiceVersions(ctx context.Context) (Code, string, error) {
	threshold := e.MinServiceVersion
	if threshold <= 0 {
		threshold = DefaultMinServiceVersion
	}
	type agg struct {
		count, below int
		min          int64
		first        []string
	}
	bins := append(append([]string(nil), controlBinaries...), "nova-compute")
	per := map[string]*agg{}
	for _, b := range bins {
		per[b] = &agg{}
	}
	errs := e.forEachCell(func(c Cell) error {
		sv, err := c.ServiceVersionSummary(ctx, bins, threshold, e.sample())
		if err != nil {
			return err
		}
		for _, s := range sv {
			a := per[s.Binary]
			if a.count == 0 || s.Min < a.min {
				a.min = s.Min
			}
			a.count += s.Count
			a.below += s.Below
			for _, f := range s.First {
				if len(a.first) < e.sample() {
					a.first = append(a.first, fmt.Sprintf("%s: %s (%d)", cellName(c), f.Host, f.Version))
				}
			}
		}
		return nil
	})
	code := Success
	var msgs []string
	for _, b := range controlBinaries {
		a := per[b]
		switch {
		case a.count == 0:
			code = max(code, Warning)
			msgs = append(msgs, fmt.Sprintf("No live %s service found in any cell, so its version cannot be checked.", b))
		case a.below > 0:
			code = Failure
			msgs = append(msgs, fmt.Sprintf("%s older than service version %d (minimum %d): %s. Upgrade them before migrating to Placement.",
				plural(a.below, b+" service is", b+" services are"), threshold, a.min, listSome(a.first, a.below)))
		}
	}
	if a := per["nova-compute"]; a.below > 0 {
		code = max(code, Warning)
		msgs = append(msgs, fmt.Sprintf("%s older than service version %d (minimum %d): %s. They keep working, but upgrade them so they report inventories as Placement expects.",
			plural(a.below, "nova-compute service is", "nova-compute services are"), threshold, a.min, listSome(a.first, a.below)))
	}
	return e.withErrors(code, strings.Join(msgs, " "), errs)
}
