package migrate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"
)

// FillVIFListName is the migration's row in the summary table, named as
// nova-manage names it.
const FillVIFListName = "fill_virtual_interface_list"

// VIFInstance is an instance fill_virtual_interface_list checks, with its
// live info cache's network_info (nil: no cache row, or a NULL
// network_info).
type VIFInstance struct {
	UUID        string
	NetworkInfo *string
}

// VIFRow is a live virtual_interfaces row.
type VIFRow struct {
	ID   int64
	UUID string
	Tag  *string
}

// NewVIF is a virtual_interfaces row fill_virtual_interface_list creates
// from the info cache.
type NewVIF struct {
	UUID    string
	Address string
	Tag     *string
}

// ErrVIFMarkerNotFound is what VIFInstances returns when the cell's marker
// names an instance the cell no longer holds (archived or purged): Nova's
// InstanceList.get_by_filters raises MarkerNotFound then, at every batch.
var ErrVIFMarkerNotFound = errors.New("fill_virtual_interface_list's marker names an instance the cell no longer has (MarkerNotFound in Nova too); delete the virtual_interfaces row of instance " + FakeInstanceUUID + " to start over")

// VIFCell is a cell database's side of fill_virtual_interface_list;
// storage/celldb implements it.
type VIFCell interface {
	// VIFMarker returns the tag of the marker row (the virtual_interfaces
	// row of instance FakeInstanceUUID), nil when there is none.
	VIFMarker(ctx context.Context) (*string, error)
	// VIFInstances returns up to limit live instances (deleted = 0, not
	// soft-deleted, not hidden) in (created_at, id) order, after the
	// marker instance (any state) when marker is set:
	// InstanceList.get_by_filters({'deleted': False}, sort_key='created_at',
	// sort_dir='asc', marker, limit).
	VIFInstances(ctx context.Context, marker *string, limit int) ([]VIFInstance, error)
	// InstanceVIFs returns the instance's live virtual interfaces in
	// (created_at, id) order (virtual_interface_get_by_instance).
	InstanceVIFs(ctx context.Context, instanceUUID string) ([]VIFRow, error)
	// ReplaceVIFs soft-deletes the rows old (by id) and creates vifs for
	// the instance, in one transaction.
	ReplaceVIFs(ctx context.Context, instanceUUID string, old []int64, vifs []NewVIF, now time.Time) error
	// SetVIFMarker writes the marker as _set_or_delete_marker_for_migrate_instances
	// does: the marker rows deleted, the FakeInstanceUUID instance created
	// (and destroyed) when the cell has none, and a marker row whose tag
	// is marker.
	SetVIFMarker(ctx context.Context, marker string, now time.Time) error
}

// VIFCellOpener returns the database of a cell mapping, or nil when the run
// does not work on that cell (--cell) or has no database for it.
type VIFCellOpener func(ctx context.Context, cell CellMappingRef) (VIFCell, error)

// CellMappings lists the API database's cell mappings (cell0 included) in
// id order, as CellMappingList.get_all.
type CellMappings interface {
	ListCellMappings(ctx context.Context) ([]CellMappingRef, error)
}

// FillVIFList is Nova 26's fill_virtual_interface_list
// (nova/objects/virtual_interface.py): in every cell (cell_mappings' id
// order, cell0 included) it checks up to count instances from the cell's
// marker on, and rebuilds the virtual_interfaces of those whose live rows
// are fewer than, or ordered differently from, the VIFs of their info
// cache. found is the instances checked (those with a non-empty
// network_info), done those rebuilt; the marker of each cell moves to the
// last instance listed, so that every batch goes on from there.
//
// Where rpctl differs: an instance whose network_info is not the JSON list
// of VIFs Nova reads (or a VIF whose id or address is not a string) makes
// Nova's whole migration fail at every batch, before the marker moves;
// rpctl skips it as a bad row, naming it, and goes on.
type FillVIFList struct {
	API   CellMappings
	Cells VIFCellOpener
	Now   func() time.Time
}

// Name implements Migration.
func (*FillVIFList) Name() string { return FillVIFListName }

// cachedVIF is what fill_virtual_interface_list reads of a VIF in
// network_info: its id (the port) and MAC address.
type cachedVIF struct {
	ID      any `json:"id"`
	Address any `json:"address"`
}

// parseNetworkInfo reads network_info as NetworkInfo.hydrate does: a JSON
// list of objects; the ids and the addresses Nova writes, "%s/%s" %
// (address, id), in Python's words (a missing or null address is "None").
func parseNetworkInfo(s string) (ids, addresses []string, err error) {
	var vifs []cachedVIF
	if err := json.Unmarshal([]byte(s), &vifs); err != nil {
		return nil, nil, fmt.Errorf("instance_info_caches.network_info is not a JSON list of VIFs: %v", err)
	}
	if vifs == nil {
		return nil, nil, fmt.Errorf("instance_info_caches.network_info is %q, not a JSON list of VIFs", s)
	}
	for i, v := range vifs {
		id, ok := v.ID.(string)
		if !ok {
			return nil, nil, fmt.Errorf("instance_info_caches.network_info VIF %d: id %v is not a string", i, v.ID)
		}
		addr := "None"
		switch a := v.Address.(type) {
		case string:
			addr = a
		case nil:
		default:
			return nil, nil, fmt.Errorf("instance_info_caches.network_info VIF %s: address %v is not a string", id, v.Address)
		}
		ids = append(ids, id)
		addresses = append(addresses, addr+"/"+id)
	}
	return ids, addresses, nil
}

// Run implements Migration.
func (m *FillVIFList) Run(ctx context.Context, count int) (found, done int, err error) {
	cells, err := m.API.ListCellMappings(ctx)
	if err != nil {
		return 0, 0, err
	}
	now := timeNow(m.Now)
	var bad RowErrors
	for _, c := range cells {
		if found >= count {
			// Nova: "We reached the limit of checked instances per this
			// function run."
			break
		}
		cell, err := m.Cells(ctx, c)
		if err != nil {
			return found, done, fmt.Errorf("cell %s (%s): %w", c.Name, c.UUID, err)
		}
		if cell == nil {
			continue
		}
		f, d, rows, err := m.runCell(ctx, cell, c, count-found, now)
		found, done, bad = found+f, done+d, append(bad, rows...)
		if err != nil {
			return found, done, fmt.Errorf("cell %s (%s): %w", c.Name, c.UUID, err)
		}
	}
	if len(bad) > 0 {
		return found, done, bad
	}
	return found, done, nil
}

func (m *FillVIFList) runCell(ctx context.Context, cell VIFCell, c CellMappingRef, limit int, now time.Time) (found, done int, bad RowErrors, err error) {
	marker, err := cell.VIFMarker(ctx)
	if err != nil {
		return 0, 0, nil, err
	}
	instances, err := cell.VIFInstances(ctx, marker, limit)
	if err != nil {
		return 0, 0, nil, err
	}
	for _, inst := range instances {
		if inst.UUID == FakeInstanceUUID || inst.NetworkInfo == nil {
			continue
		}
		ids, addresses, perr := parseNetworkInfo(*inst.NetworkInfo)
		if perr != nil {
			bad = append(bad, &RowError{Migration: FillVIFListName, Cell: c.Name, What: "instance " + inst.UUID, Err: perr})
			continue
		}
		if len(ids) == 0 {
			// "InstanceInfoCache object has not set NetworkInfo field."
			continue
		}
		vifs, err := cell.InstanceVIFs(ctx, inst.UUID)
		if err != nil {
			return found, done, bad, err
		}
		found++
		dbIDs := make([]string, len(vifs))
		for i, v := range vifs {
			dbIDs[i] = v.UUID
		}
		// Equal lists: nothing to do; more rows than the cache (an
		// interface being attached, or a broken cache): Nova does nothing
		// either; fewer rows (a pre-Newton instance) or another order:
		// the cache is the source of truth.
		if slices.Equal(ids, dbIDs) || len(dbIDs) > len(ids) {
			continue
		}
		old := make([]int64, len(vifs))
		for i, v := range vifs {
			old[i] = v.ID
		}
		nv := make([]NewVIF, len(ids))
		for i, id := range ids {
			nv[i] = NewVIF{UUID: id, Address: addresses[i]}
			// The tag of the first old row of the same port.
			if j := slices.IndexFunc(vifs, func(v VIFRow) bool { return v.UUID == id }); j >= 0 {
				nv[i].Tag = vifs[j].Tag
			}
		}
		if err := cell.ReplaceVIFs(ctx, inst.UUID, old, nv, now); err != nil {
			return found, done, bad, fmt.Errorf("instance %s: %w", inst.UUID, err)
		}
		done++
	}
	if len(instances) > 0 {
		if err := cell.SetVIFMarker(ctx, instances[len(instances)-1].UUID, now); err != nil {
			return found, done, bad, err
		}
	}
	return found, done, bad, nil
}
