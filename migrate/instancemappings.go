package migrate

import (
	"context"
	"fmt"
	"time"
)

// The instance mapping migrations: Nova 26's populate_queued_for_delete and
// populate_user_id (nova/objects/instance_mapping.py), which fill the API
// database's instance_mappings columns added in Rocky and Stein from the
// instances of the mapping's cell.

// QueuedForDeleteName and UserIDName are the migrations' rows in the summary
// table, named as nova-manage names them.
const (
	QueuedForDeleteName = "populate_queued_for_delete"
	UserIDName          = "populate_user_id"
)

// FakeInstanceUUID is the project id of the marker instance Nova's
// fill_virtual_interface_list creates (virtual_interface.FAKE_UUID);
// populate_user_id leaves its mapping alone.
const FakeInstanceUUID = "00000000-0000-0000-0000-000000000000"

// CellMappingRef is a row of cell_mappings, as the migrations that walk
// every cell read it.
type CellMappingRef struct {
	ID   int64
	UUID string
	Name string
}

// InstanceMappingRef is an instance_mappings row without a user_id.
type InstanceMappingRef struct {
	InstanceUUID string
	CellID       *int64 // NULL while the instance is being built
}

// InstanceMappingAPI is the API database's side of the instance mapping
// migrations; storage/apidb implements it.
type InstanceMappingAPI interface {
	// ListCellMappings returns every cell mapping (cell0 included) in id
	// order, as CellMappingList.get_all.
	ListCellMappings(ctx context.Context) ([]CellMappingRef, error)
	// QueuedForDeleteUnset returns the instance uuids of up to limit
	// mappings of the cell whose queued_for_delete is NULL, in the order
	// the database gives them (Nova's query has no ORDER BY: the same
	// server picks the same rows for both tools).
	QueuedForDeleteUnset(ctx context.Context, cellID int64, limit int) ([]string, error)
	// SetQueuedForDelete sets queued_for_delete (and updated_at) of the
	// cell's mappings of these instances that are still NULL, and returns
	// how many it changed.
	SetQueuedForDelete(ctx context.Context, cellID int64, instances []string, queued bool, now time.Time) (int, error)
	// UserIDUnset returns up to limit mappings whose user_id is NULL,
	// except the fill_virtual_interface_list marker's (project_id
	// FakeInstanceUUID), in the order the database gives them (as Nova's
	// query, which has no ORDER BY).
	UserIDUnset(ctx context.Context, limit int) ([]InstanceMappingRef, error)
	// SetUserIDs sets user_id (and updated_at) of the mappings of these
	// instances whose user_id is still NULL, and returns how many it
	// changed.
	SetUserIDs(ctx context.Context, userIDs map[string]string, now time.Time) (int, error)
}

// InstanceCell is a cell database's side of the instance mapping
// migrations; storage/celldb implements it.
type InstanceCell interface {
	// DeletedInstances returns which of these instances are deleted or
	// soft-deleted: deleted = id or vm_state 'soft-delete' (Nova's
	// instance_get_all_by_filters_sort with deleted=True,
	// soft_deleted=True).
	DeletedInstances(ctx context.Context, uuids []string) (map[string]bool, error)
	// InstanceUserIDs returns the user_id of each of these instances found,
	// deleted ones included (nil for a NULL user_id).
	InstanceUserIDs(ctx context.Context, uuids []string) (map[string]*string, error)
}

// CellOpener returns the database of a cell mapping, or nil when the run does
// not work on that cell (--cell) or has no database for it.
type CellOpener func(ctx context.Context, cell CellMappingRef) (InstanceCell, error)

// QueuedForDelete is Nova 26's populate_queued_for_delete.
type QueuedForDelete struct {
	API   InstanceMappingAPI
	Cells CellOpener
	Now   func() time.Time
}

// Name implements Migration.
func (*QueuedForDelete) Name() string { return QueuedForDeleteName }

// Run implements Migration, as populate_queued_for_delete does: cells in id
// order; in each, up to the remaining count of mappings whose
// queued_for_delete is NULL; those whose instance is deleted or
// soft-deleted get True, the others (a live instance, or none in the cell)
// False; the count drops by the mappings read, and the walk stops when it
// reaches 0. found and done are both the mappings written. Mappings without
// a cell are never touched (Nova walks the cells).
func (m *QueuedForDelete) Run(ctx context.Context, count int) (found, done int, err error) {
	cells, err := m.API.ListCellMappings(ctx)
	if err != nil {
		return 0, 0, err
	}
	now := timeNow(m.Now)
	for _, c := range cells {
		ims, err := m.API.QueuedForDeleteUnset(ctx, c.ID, count)
		if err != nil {
			return done, done, err
		}
		if len(ims) == 0 {
			continue
		}
		cell, err := m.Cells(ctx, c)
		if err != nil {
			return done, done, fmt.Errorf("cell %s (%s): %w", c.Name, c.UUID, err)
		}
		if cell == nil {
			// Not a cell of this run (--cell): its mappings wait.
			continue
		}
		deleted, err := cell.DeletedInstances(ctx, ims)
		if err != nil {
			return done, done, fmt.Errorf("cell %s (%s): %w", c.Name, c.UUID, err)
		}
		var gone, live []string
		for _, u := range ims {
			if deleted[u] {
				gone = append(gone, u)
			} else {
				live = append(live, u)
			}
		}
		for _, set := range []struct {
			uuids  []string
			queued bool
		}{{gone, true}, {live, false}} {
			if len(set.uuids) == 0 {
				continue
			}
			n, err := m.API.SetQueuedForDelete(ctx, c.ID, set.uuids, set.queued, now)
			done += n
			if err != nil {
				return done, done, err
			}
		}
		count -= len(ims)
		if count <= 0 {
			break
		}
	}
	return done, done, nil
}

// UserID is Nova 26's populate_user_id.
type UserID struct {
	API   InstanceMappingAPI
	Cells CellOpener
	Now   func() time.Time
	// Warn receives Nova's warning when some mappings could not be
	// migrated (no cell yet, no instance in their cell).
	Warn func(string)
}

// Name implements Migration.
func (*UserID) Name() string { return UserIDName }

// Run implements Migration, as populate_user_id does: found is the mappings
// without a user_id (up to count, the marker's excepted); each one whose
// instance its cell holds (deleted and soft-deleted ones included) takes
// the instance's user_id, and done counts them. A mapping without a cell,
// or whose instance is not in its cell, is left (Nova warns that the
// mappings "were not migratable"; nova-manage then stops asking, as found >
// done). An instance whose user_id is NULL would leave its mapping NULL
// while Nova counts it done, and nova-manage would find it again at every
// batch, for ever; rpctl skips it as a bad row.
func (m *UserID) Run(ctx context.Context, count int) (found, done int, err error) {
	ims, err := m.API.UserIDUnset(ctx, count)
	if err != nil {
		return 0, 0, err
	}
	found = len(ims)
	if found == 0 {
		return 0, 0, nil
	}
	cells, err := m.API.ListCellMappings(ctx)
	if err != nil {
		return found, 0, err
	}
	byID := map[int64]CellMappingRef{}
	for _, c := range cells {
		byID[c.ID] = c
	}
	// Nova groups the mappings by cell in the order it first meets them.
	var order []int64
	byCell := map[int64][]string{}
	unmigratable := false
	for _, im := range ims {
		if im.CellID == nil {
			unmigratable = true
			continue
		}
		if _, ok := byCell[*im.CellID]; !ok {
			order = append(order, *im.CellID)
		}
		byCell[*im.CellID] = append(byCell[*im.CellID], im.InstanceUUID)
	}
	now := timeNow(m.Now)
	var bad RowErrors
	for _, id := range order {
		c := byID[id]
		uuids := byCell[id]
		cell, err := m.Cells(ctx, c)
		if err == nil && cell == nil {
			unmigratable = true
			continue
		}
		var users map[string]*string
		if err == nil {
			users, err = cell.InstanceUserIDs(ctx, uuids)
		}
		if err != nil {
			// Nova: "Encountered exception ... Continuing to the next
			// cell."
			m.warn(fmt.Sprintf("Encountered exception: %q while querying instances from cell: %s(%s). Continuing to the next cell.", err.Error(), c.UUID, c.Name))
			unmigratable = true
			continue
		}
		set := map[string]string{}
		for _, u := range uuids {
			uid, ok := users[u]
			switch {
			case !ok:
				unmigratable = true
			case uid == nil:
				bad = append(bad, &RowError{Migration: UserIDName, Cell: c.Name, What: "instance mapping " + u,
					Err: fmt.Errorf("its instance's user_id is NULL: nothing to copy (Nova would copy the NULL and find the mapping again at every batch)")})
			default:
				set[u] = *uid
			}
		}
		if len(set) > 0 {
			n, err := m.API.SetUserIDs(ctx, set, now)
			done += n
			if err != nil {
				return found, done, err
			}
		}
	}
	if unmigratable {
		m.warn("Some instance mappings were not migratable. This may be transient due to in-flight instance builds, or could be due to stale data that will be cleaned up after running \"nova-manage db archive_deleted_rows --purge\".")
	}
	if len(bad) > 0 {
		return found, done, bad
	}
	return found, done, nil
}

func (m *UserID) warn(s string) {
	if m.Warn != nil {
		m.Warn(s)
	}
}

func timeNow(now func() time.Time) time.Time {
	if now != nil {
		return now().UTC()
	}
	return time.Now().UTC()
}
