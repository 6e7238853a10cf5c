package migrate

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/rpctl/rpctl/internal/config"
)

// EmptyRatioName is the ratio migration's row in the summary table. It is
// Nova's function name, so that an operator comparing rpctl's table with
// nova-manage's finds the same row.
const EmptyRatioName = "migrate_empty_ratio"

// RatioChange is one ratio of one compute node that the migration sets.
type RatioChange struct {
	Cell   string      `json:"cell" yaml:"cell"`
	ID     int64       `json:"id" yaml:"id"`
	Host   string      `json:"host" yaml:"host"`
	Node   string      `json:"hypervisor_hostname" yaml:"hypervisor_hostname"`
	Ratio  string      `json:"ratio" yaml:"ratio"` // column: cpu_allocation_ratio, ...
	Old    *float64    `json:"old" yaml:"old"`     // nil: NULL
	New    float64     `json:"new" yaml:"new"`
	Source RatioSource `json:"source" yaml:"source"` // override or initial
	Option string      `json:"option" yaml:"option"` // the nova.conf option the value came from
}

// PlanRow decides the changes Nova's migrate_empty_ratio makes to one row:
// each NULL or 0.0 ratio gets ConfRatio, the others are untouched. A row
// whose fix would be 0.0 again (initial_xxx_allocation_ratio = 0.0 and no
// override) cannot be migrated: Nova would write 0.0 back and find the row
// again in every batch, forever; rpctl skips it with an error naming the
// option instead.
func PlanRow(cell string, n NodeRatios, r config.Ratios) ([]RatioChange, error) {
	var out []RatioChange
	for _, k := range RatioKinds {
		old := k.nodeRatio(n)
		override, initial := k.Conf(r)
		v, src, fix := EffectiveRatio(old, override, initial)
		if !fix {
			continue
		}
		opt := k.InitialOption()
		if src == FromOverride {
			opt = k.Option()
		}
		if v == 0 {
			return nil, fmt.Errorf("%s is %s and would stay 0.0: %s is 0.0 and %s is unset or 0.0",
				k.Option(), FormatRatio(old), k.InitialOption(), k.Option())
		}
		out = append(out, RatioChange{Cell: cell, ID: n.ID, Host: n.Host, Node: n.HypervisorHostname,
			Ratio: k.Option(), Old: old, New: v, Source: src, Option: opt})
	}
	return out, nil
}

func (k RatioKind) nodeRatio(n NodeRatios) *float64 {
	switch k {
	case RatioCPU:
		return n.CPU
	case RatioRAM:
		return n.RAM
	default:
		return n.Disk
	}
}

// FormatRatio prints a stored ratio as Nova's tools would: NULL, or the
// shortest decimal with at least one fractional digit ("16.0", "1.5").
func FormatRatio(v *float64) string {
	if v == nil {
		return "NULL"
	}
	s := strconv.FormatFloat(*v, 'f', -1, 64)
	for _, c := range s {
		if c == '.' || c == 'e' || c == 'N' || c == 'I' { // NaN, +Inf, -Inf stay as they are
			return s
		}
	}
	return s + ".0"
}

// EmptyRatios is Nova 26's migrate_empty_ratio over every given cell: each
// live compute_nodes row with a NULL or 0.0 ratio gets xxx_allocation_ratio
// when that is set (and not 0.0), else initial_xxx_allocation_ratio; the
// row's other ratios are untouched.
//
// Unlike nova-manage, which migrates only the cell of [database] connection,
// it works through the cells in order with one count budget, in id order,
// each Run continuing after the last row the previous one looked at: rows
// it must skip are reported once (RowErrors), and a row that becomes empty
// behind the cursor during the run is left to the next run.
type EmptyRatios struct {
	Cells  []Cell
	Ratios config.Ratios
	// Now stamps updated_at (Nova's ORM sets it on every update); nil is
	// time.Now.
	Now func() time.Time

	after map[Cell]int64 // last id looked at, per cell
}

// Name implements Migration.
func (m *EmptyRatios) Name() string { return EmptyRatioName }

// Run implements Migration: it migrates at most count rows. found counts the
// rows that needed migrating when it looked (skipped ones included, so found
// may exceed count), done those it changed; a row that a running nova-compute
// fixed between the two is in neither.
func (m *EmptyRatios) Run(ctx context.Context, count int) (found, done int, err error) {
	if m.after == nil {
		m.after = map[Cell]int64{}
	}
	var bad RowErrors
	for _, cell := range m.Cells {
		// Skipped rows do not use the budget: they must not keep good rows
		// behind them from being migrated.
		for count-done > 0 {
			nodes, err := cell.ListEmptyRatioNodes(ctx, m.after[cell], count-done)
			if err != nil {
				return found, done, err
			}
			if len(nodes) == 0 {
				break
			}
			var ids []int64
			for _, n := range nodes {
				if _, perr := PlanRow(cell.Name(), n, m.Ratios); perr != nil {
					bad = append(bad, &RowError{Migration: EmptyRatioName, Cell: cell.Name(), ID: n.ID, Host: n.Host, Err: perr})
					found++
					continue
				}
				ids = append(ids, n.ID)
			}
			// The next page starts after this one: skipped rows are reported
			// once, and the database need not step over the rows already
			// fixed on every page (which made 100k rows quadratic).
			m.after[cell] = nodes[len(nodes)-1].ID
			n, err := cell.FillEmptyRatios(ctx, ids, m.fill(), m.now())
			if err != nil {
				return found, done, err
			}
			found += n
			done += n
			if n < len(ids) {
				// Rows changed under us (a nova-compute fixed or deleted
				// them): leave this cell's remaining pages to the next call
				// rather than spin here.
				break
			}
		}
	}
	if len(bad) > 0 {
		return found, done, bad
	}
	return found, done, nil
}

// fill is the value for each column; a kind whose ConfRatio is 0.0 is never
// written (PlanRow skipped every row that needed it).
func (m *EmptyRatios) fill() RatioFill {
	var f RatioFill
	for _, k := range RatioKinds {
		override, initial := k.Conf(m.Ratios)
		v, _ := ConfRatio(override, initial)
		if v == 0 {
			continue
		}
		switch k {
		case RatioCPU:
			f.CPU = &v
		case RatioRAM:
			f.RAM = &v
		default:
			f.Disk = &v
		}
	}
	return f
}

func (m *EmptyRatios) now() time.Time {
	if m.Now != nil {
		return m.Now().UTC()
	}
	return time.Now().UTC()
}

// PlanEmptyRatios lists, without writing, the changes a run over cells would
// make, at most limit rows (limit <= 0: all), and the rows it would skip.
func PlanEmptyRatios(ctx context.Context, cells []Cell, r config.Ratios, limit int) ([]RatioChange, RowErrors, error) {
	var out []RatioChange
	var bad RowErrors
	rows := 0
	for _, cell := range cells {
		var after int64
		for limit <= 0 || rows < limit {
			page := ratioReadPage
			if limit > 0 {
				page = min(page, limit-rows)
			}
			nodes, err := cell.ListEmptyRatioNodes(ctx, after, page)
			if err != nil {
				return nil, nil, err
			}
			for _, n := range nodes {
				after = n.ID
				rows++
				ch, perr := PlanRow(cell.Name(), n, r)
				if perr != nil {
					bad = append(bad, &RowError{Migration: EmptyRatioName, Cell: cell.Name(), ID: n.ID, Host: n.Host, Err: perr})
					continue
				}
				out = append(out, ch...)
			}
			if len(nodes) < page {
				break
			}
		}
	}
	return out, bad, nil
}

// ratioReadPage is how many candidate rows one read fetches; reading in
// pages keeps a 100,000-node cell from being held in memory at once.
const ratioReadPage = 1000
