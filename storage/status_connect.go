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
	if s.PlacementDB.URL == "" {
		r.PlacementErr = fmt.Errorf("%w for Placement: give --db FILE (the embedded default), --placement-db URL, or --config-file placement.conf with [placement_database] connection", ErrNoDatabase)
	} else if d, err := Connect(ctx, Sources{PlacementDB: s.PlacementDB}, NeedPlacement, 0); err != nil {
		r.PlacementErr = err
	} else {
		r.Placement = d.Placement
		r.opened = append(r.opened, d.opened...)
	}
	switch {
	case len(s.CellDBs) > 0:
		// One Connect per cell, so that one dead cell does not hide the
		// others.
		for _, c := range s.CellDBs {
			d, err := Connect(ctx, Sources{CellDBs: []Source{c}}, NeedCells, 0)
			if err != nil {
				r.CellErrs = append(r.CellErrs, err)
				continue
			}
			d.Cells[0].Name = cellNameFromURL(c.URL, len(r.Cells)+len(r.CellErrs))
			r.Cells = append(r.Cells, d.Cells...)
			r.opened = append(r.opened, d.opened...)
		}
	case s.APIDB.URL != "":
		api, err := Connect(ctx, Sources{APIDB: s.APIDB}, NeedAPI, 0)
		if err != nil {
			r.CellErrs = append(r.CellErrs, fmt.Errorf("cannot list the cells: %w", err))
			break
		}
		r.opened = append(r.opened, api.opened...)
		cells, err := ListCellMappings(ctx, api.API)
		if err != nil {
			r.CellErrs = append(r.CellErrs, fmt.Errorf("cannot list the cells: %w", err))
			break
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
			d, err := Connect(ctx, Sources{CellDBs: []Source{{URL: u, Origin: "cell_mappings " + c.Name}}}, NeedCells, 0)
			if err != nil {
				r.CellErrs = append(r.CellErrs, fmt.Errorf("cell %q: %w", c.Name, err))
				continue
			}
			d.Cells[0].Name = c.Name
			r.Cells = append(r.Cells, d.Cells...)
			r.opened = append(r.opened, d.opened...)
		}
		if len(r.Cells) == 0 && len(r.CellErrs) == 0 && s.ConfigCell.URL != "" {
			r.connectConfigCell(ctx, s.ConfigCell)
		}
	case s.ConfigCell.URL != "":
		r.connectConfigCell(ctx, s.ConfigCell)
	}
	if len(r.Cells) == 0 && len(r.CellErrs) == 0 {
		r.CellErrs = append(r.CellErrs, fmt.Errorf("%w for the Nova cell: give --db FILE (the embedded default), --cell-db URL, or --config-file nova.conf with [database] connection (or [api_database] connection with cell mappings)", ErrNoDatabase))
	}
	return r, nil
}

func (r *Reachable) connectConfigCell(ctx context.Context, src Source) {
	d, err := Connect(ctx, Sources{ConfigCell: src}, NeedCells, 0)
	if err != nil {
		r.CellErrs = append(r.CellErrs, err)
		return
	}
	r.Cells = append(r.Cells, d.Cells...)
	r.opened = append(r.opened, d.opened...)
}
