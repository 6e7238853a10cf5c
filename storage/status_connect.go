package storage

import (
	"context"
	"fmt"
)

// Reachable are the databases of a run that tolerates unreachable ones: an
// upgrade check must report a dead database as the failure of the checks that
// need it, not refuse to start.
type Reachable struct {
	Cells []*DB
	// CellErrs say which cells could not be opened (or listed) and why.
	CellErrs     []error
	Placement    *DB
	PlacementErr error
	// Embedded is true for --db (one SQLite file for everything).
	Embedded bool
	opened   []*DB
}

// Close closes every connection.
func (r *Reachable) Close() error {
	d := Databases{opened: r.opened}
	return d.Close()
}

// ConnectReachable opens the cells and Placement that s names, as Connect
// does, but records an unreachable or unconfigured database in CellErrs or
// PlacementErr instead of failing. Only a contradiction in the flags
// themselves is an error.
func ConnectReachable(ctx context.Context, s Sources) (*Reachable, error) {
	r := &Reachable{}
	if s.Embedded != "" {
		d, err := Connect(ctx, s, NeedCells|NeedPlacement, 0)
		if err != nil {
			if len(s.CellDBs) > 0 || s.APIDB.URL != "" || s.PlacementDB.URL != "" {
				return nil, err
			}
			r.CellErrs, r.PlacementErr = []error{err}, err
			return r, nil
		}
		r.Cells, r.Placement, r.Embedded, r.opened = d.Cells, d.Placement, true, d.opened
		return r, nil
	}
	// Connect's error for an empty URL names every way to configure it.
	if d, err := Connect(ctx, Sources{PlacementDB: s.PlacementDB}, NeedPlacement, 0); err != nil {
		r.PlacementErr = err
	} else {
		r.Placement = d.Placement
		r.opened = append(r.opened, d.opened...)
	}
	// One Connect per cell, so that one dead cell does not hide the others.
	switch {
	case len(s.CellDBs) > 0:
		for i, c := range s.CellDBs {
			r.connectCell(ctx, Sources{CellDBs: []Source{c}}, cellNameFromURL(c.URL, i), "")
		}
	case s.APIDB.URL != "":
		r.connectMappedCells(ctx, s)
	}
	if len(r.Cells) == 0 && len(r.CellErrs) == 0 {
		// [database] connection, or, when that is empty too, Connect's
		// error naming every way to configure a cell.
		r.connectCell(ctx, Sources{ConfigCell: s.ConfigCell}, "", "")
	}
	return r, nil
}

// connectMappedCells opens the cells of the API database's cell_mappings.
// The API database itself is only needed for the list.
func (r *Reachable) connectMappedCells(ctx context.Context, s Sources) {
	api, err := Connect(ctx, Sources{APIDB: s.APIDB}, NeedAPI, 0)
	var cells []CellMapping
	if err == nil {
		cells, err = s.listCellMappings(ctx, api.API)
		api.Close()
	}
	if err != nil {
		r.CellErrs = append(r.CellErrs, fmt.Errorf("cannot list the cells: %w", err))
		return
	}
	for _, c := range cells {
		if c.UUID == cell0UUID || c.Name == "cell0" {
			continue
		}
		u, err := ExpandCellURL(c.DatabaseConnection, s.ConfigCell.URL)
		if err != nil {
			r.CellErrs = append(r.CellErrs, fmt.Errorf("cell mapping %q (%s): %w", c.Name, c.UUID, err))
			continue
		}
		r.connectCell(ctx, Sources{CellDBs: []Source{{URL: u, Origin: "cell_mappings " + c.Name}}}, c.Name, fmt.Sprintf("cell %q: ", c.Name))
	}
}

// connectCell opens the one cell s names, recording why not (after
// errPrefix) instead of failing; a non-empty name replaces the one Connect
// gives it.
func (r *Reachable) connectCell(ctx context.Context, s Sources, name, errPrefix string) {
	d, err := Connect(ctx, s, NeedCells, 0)
	if err != nil {
		r.CellErrs = append(r.CellErrs, fmt.Errorf("%s%w", errPrefix, err))
		return
	}
	if name != "" {
		d.Cells[0].Name = name
	}
	r.Cells = append(r.Cells, d.Cells...)
	r.opened = append(r.opened, d.opened...)
}
