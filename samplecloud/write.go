package samplecloud

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rpctl/rpctl/internal/nova"
)

// WriteOptions control how Write treats databases that already hold data.
type WriteOptions struct {
	// Force writes into cell databases that already have compute nodes (and
	// an API database that already has flavors) by first deleting every row
	// of the tables sample-cloud writes: compute_nodes, services,
	// instances, instance_extra and migrations in each cell; host_mappings,
	// flavors and flavor_extra_specs in the API database. Cell mappings are
	// kept. It is meant for databases sample-cloud wrote before; rows of
	// other tables that reference instances make it fail on MySQL.
	Force bool
}

// ErrNotEmpty is returned when a target database already has data and
// WriteOptions.Force is not set.
var ErrNotEmpty = errors.New("database is not empty")

// CellSummary says what Write put into one cell database.
type CellSummary struct {
	Cell         string `json:"cell"`
	Database     string `json:"database"`
	ComputeNodes int    `json:"compute_nodes"`
	Deleted      int    `json:"deleted_compute_nodes"`
	Bad          int    `json:"bad_compute_nodes"`
	Services     int    `json:"services"`
	Instances    int    `json:"instances"`
	Migrations   int    `json:"migrations"`
}

// Summary says what Write did.
type Summary struct {
	Cells        []CellSummary `json:"cells"`
	API          string        `json:"api_database,omitempty"`
	CellMappings int           `json:"cell_mappings_created"`
	HostMappings int           `json:"host_mappings"`
	Flavors      int           `json:"flavors"`
	Aggregates   int           `json:"aggregates"`
}

// Write stores the cloud. It needs the cell databases; the API database is
// written when dbs has one, the Placement database never (a pre-migration
// cloud has no resource providers).
//
// With the embedded database (dbs.Embedded) there is one cell database, so
// every generated cell's rows go into it and all hosts map to the one cell
// mapping, "cell1"; the generated cells then only shape host names and the
// conductor services. Otherwise generated cell i goes to dbs.Cells[i] and
// their numbers must match.
//
// Cell mappings are created (cell0 with the fixed zero uuid, then one per
// cell database, URLs from CellConnectionURL) only when the API database has
// none; existing ones are matched to the cell databases by name. Compute
// nodes of mapped hosts get mapped = 1, as discover_hosts leaves them.
func Write(ctx context.Context, dbs Target, c *Cloud, o WriteOptions) (*Summary, error) {
	if len(dbs.Cells) == 0 {
		return nil, errors.New("no database configured for the Nova cell")
	}
	// groups[i] are the generated cells written into dbs.Cells[i].
	var groups [][]*Cell
	if dbs.Embedded {
		g := make([]*Cell, len(c.Cells))
		for i := range c.Cells {
			g[i] = &c.Cells[i]
		}
		groups = [][]*Cell{g}
	} else {
		if len(c.Cells) != len(dbs.Cells) {
			return nil, fmt.Errorf("the sample cloud has %d cells but %d cell databases are configured: give --cells %d or one --cell-db per cell",
				len(c.Cells), len(dbs.Cells), len(dbs.Cells))
		}
		for i := range c.Cells {
			groups = append(groups, []*Cell{&c.Cells[i]})
		}
	}

	for _, db := range dbs.Cells {
		n, err := db.CountComputeNodes(ctx, true)
		if err != nil {
			return nil, err
		}
		if n > 0 && !o.Force {
			return nil, fmt.Errorf("%s: %w: it already has %d compute nodes; sample-cloud writes only into an empty cell (--force deletes its compute nodes, services, instances and migrations first)",
				db.Label(), ErrNotEmpty, n)
		}
	}
	shape, err := RowShapeOf(c.Options.Release)
	if err != nil {
		return nil, err
	}
	sum := &Summary{}
	var api nova.APIRows
	mapped := map[string]bool{}
	if dbs.API != nil {
		var err error
		if api, err = apiRows(ctx, dbs, groups, c, o); err != nil {
			return nil, err
		}
		for _, h := range api.HostMappings {
			mapped[h.Host] = true
		}
		sum.API = dbs.API.Label()
		sum.CellMappings, sum.HostMappings, sum.Flavors = len(api.CellMappings), len(api.HostMappings), len(api.Flavors)
		sum.Aggregates = len(api.Aggregates)
	}

	bad := map[int64]bool{}
	for _, id := range c.Kinds["bad"] {
		bad[id] = true
	}
	for i, db := range dbs.Cells {
		rows := nova.CellRows{Replace: o.Force, Shape: shape}
		cs := CellSummary{Database: db.Label()}
		for _, cell := range groups[i] {
			if cs.Cell != "" {
				cs.Cell += "+"
			}
			cs.Cell += cell.Name
			rows.Services = append(rows.Services, cell.Services...)
			for _, n := range cell.ComputeNodes {
				if n.Host != nil && mapped[*n.Host] && !n.IsDeleted() {
					one := int64(1)
					n.Mapped = &one
				}
				rows.ComputeNodes = append(rows.ComputeNodes, n)
			}
			rows.Instances = append(rows.Instances, cell.Instances...)
			rows.Migrations = append(rows.Migrations, cell.Migrations...)
		}
		for _, n := range rows.ComputeNodes {
			switch {
			case n.IsDeleted():
				cs.Deleted++
			case bad[n.ID]:
				cs.Bad++
			default:
				cs.ComputeNodes++
			}
		}
		cs.Services, cs.Instances, cs.Migrations = len(rows.Services), len(rows.Instances), len(rows.Migrations)
		if err := db.InsertCellRows(ctx, rows); err != nil {
			return nil, err
		}
		sum.Cells = append(sum.Cells, cs)
	}
	if dbs.API != nil {
		if err := dbs.API.InsertAPIRows(ctx, api); err != nil {
			return nil, err
		}
	}
	return sum, nil
}

// apiRows works out the cell mappings to create, the host mappings and the
// flavors for the API database.
func apiRows(ctx context.Context, dbs Target, groups [][]*Cell, c *Cloud, o WriteOptions) (nova.APIRows, error) {
	r := nova.APIRows{Flavors: c.Flavors, Aggregates: c.Aggregates, Replace: o.Force}
	nFlavors, err := dbs.API.CountFlavors(ctx)
	if err != nil {
		return r, err
	}
	if nFlavors > 0 && !o.Force {
		return r, fmt.Errorf("%s: %w: it already has %d flavors (--force deletes flavors and host mappings first)", dbs.API.Label(), ErrNotEmpty, nFlavors)
	}
	existing, err := dbs.API.CellMappings(ctx)
	if err != nil {
		return r, err
	}
	created := Snapshot.Add(-1000 * 24 * time.Hour)
	var nextID int64 = 1
	byName := map[string]int64{}
	for _, m := range existing {
		byName[m.Name] = m.ID
		nextID = max(nextID, m.ID+1)
	}
	if len(existing) == 0 {
		// Nova always has cell0 (nova-status fails without its mapping,
		// and nova-manage db sync fans out to its database): mapped, it
		// must exist. Created before any row is written.
		u, err := dbs.Cells[0].CreateCell0(ctx, c.Options.Release)
		if err != nil {
			return r, err
		}
		r.CellMappings = append(r.CellMappings, nova.CellMapping{ID: nextID, UUID: nova.Cell0UUID, Name: "cell0",
			TransportURL: "none:///", DatabaseConnection: u, CreatedAt: &created})
		nextID++
	}
	for i, db := range dbs.Cells {
		name := groups[i][0].Name
		if dbs.Embedded {
			name = db.Name()
		}
		id, ok := byName[db.Name()]
		if !ok {
			id, ok = byName[name]
		}
		if !ok {
			u, err := db.ConnectionURL()
			if err != nil {
				return r, err
			}
			id = nextID
			nextID++
			r.CellMappings = append(r.CellMappings, nova.CellMapping{ID: id, UUID: groups[i][0].UUID, Name: name,
				TransportURL: "none:///", DatabaseConnection: u, CreatedAt: &created})
		}
		for _, cell := range groups[i] {
			for _, h := range cell.MappedHosts {
				r.HostMappings = append(r.HostMappings, nova.HostMapping{ID: int64(len(r.HostMappings) + 1), CellID: id, Host: h, CreatedAt: &created})
			}
			for _, in := range cell.Instances {
				cellID, user := id, in.UserID
				r.InstanceMappings = append(r.InstanceMappings, nova.InstanceMapping{InstanceUUID: in.UUID, CellID: &cellID,
					ProjectID: in.ProjectID, UserID: &user, CreatedAt: in.CreatedAt})
			}
		}
	}
	return r, nil
}
