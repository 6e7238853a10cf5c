package cmdutil

import (
	"context"
	"fmt"
	"slices"

	"github.com/rpctl/rpctl/internal/dsn"
	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/apidb"
)

// CellByRef finds the opened cell ref names, however the cells were named
// on the command line: by the name rpctl gave it (a --cell-db URL's
// database name, a cell mapping's name), or, with an API database, by a
// Cell mapping's name or uuid whose database is one of the opened ones.
// found is false when ref names no opened cell; err is a failure to read
// the mappings.
func CellByRef(ctx context.Context, f *Factory, dbs *storage.Databases, ref string) (cell *storage.DB, found bool, err error) {
	for _, c := range dbs.Cells {
		if c.Name == ref {
			return c, true, nil
		}
	}
	if dbs.API == nil {
		return nil, false, nil
	}
	maps, err := apidb.ListCellMappings(ctx, dbs.API)
	if err != nil {
		return nil, false, err
	}
	s, err := f.Sources()
	if err != nil {
		return nil, false, err
	}
	for _, m := range maps {
		if m.Name != ref && m.UUID != ref {
			continue
		}
		for _, c := range dbs.Cells {
			if c.Name == m.Name {
				return c, true, nil
			}
		}
		u, err := storage.ExpandCellURL(m.DatabaseConnection, s.ConfigCell.URL)
		if err != nil {
			return nil, false, fmt.Errorf("cell mapping %q (%s): %w", m.Name, m.UUID, err)
		}
		t, err := dsn.Parse(u)
		if err != nil {
			return nil, false, fmt.Errorf("cell mapping %q (%s): %w", m.Name, m.UUID, err)
		}
		for _, c := range dbs.Cells {
			if dsn.SameDatabase(c.Target, t) {
				return c, true, nil
			}
		}
	}
	return nil, false, nil
}

// SelectCells narrows dbs.Cells to the named cells (cellByRef: rpctl's
// Name, or a cell mapping's name or uuid).
func SelectCells(ctx context.Context, f *Factory, dbs *storage.Databases, names []string) error {
	if len(names) == 0 {
		return nil
	}
	var keep []*storage.DB
	for _, n := range names {
		c, found, err := CellByRef(ctx, f, dbs, n)
		if err != nil {
			return err
		}
		if found && !slices.Contains(keep, c) {
			keep = append(keep, c)
		}
		if !found {
			var have []string
			for _, c := range dbs.Cells {
				have = append(have, c.Name)
			}
			return fmt.Errorf("--cell %q: no such cell: no cell named %q among %q", n, n, have)
		}
	}
	dbs.Cells = keep
	return nil
}
