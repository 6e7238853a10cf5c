package migrate_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/rpctl/rpctl/migrate"
)

// fakeMapping is an instance_mappings row of fakeMappingAPI.
type fakeMapping struct {
	uuid, project string
	cell          *int64
	queued        *bool
	user          *string
}

type fakeMappingAPI struct {
	cells    []migrate.CellMappingRef
	mappings []*fakeMapping
}

func (f *fakeMappingAPI) ListCellMappings(context.Context) ([]migrate.CellMappingRef, error) {
	return f.cells, nil
}

func (f *fakeMappingAPI) QueuedForDeleteUnset(_ context.Context, cellID int64, limit int) ([]string, error) {
	var out []string
	for _, m := range f.mappings {
		if m.queued == nil && m.cell != nil && *m.cell == cellID && len(out) < limit {
			out = append(out, m.uuid)
		}
	}
	return out, nil
}

func (f *fakeMappingAPI) SetQueuedForDelete(_ context.Context, cellID int64, uuids []string, queued bool, _ time.Time) (int, error) {
	n := 0
	for _, u := range uuids {
		for _, m := range f.mappings {
			if m.uuid == u && m.queued == nil && m.cell != nil && *m.cell == cellID {
				q := queued
				m.queued = &q
				n++
			}
		}
	}
	return n, nil
}

func (f *fakeMappingAPI) UserIDUnset(_ context.Context, limit int) ([]migrate.InstanceMappingRef, error) {
	var out []migrate.InstanceMappingRef
	for _, m := range f.mappings {
		if m.user == nil && m.project != migrate.FakeInstanceUUID && len(out) < limit {
			out = append(out, migrate.InstanceMappingRef{InstanceUUID: m.uuid, CellID: m.cell})
		}
	}
	return out, nil
}

func (f *fakeMappingAPI) SetUserIDs(_ context.Context, users map[string]string, _ time.Time) (int, error) {
	n := 0
	for _, m := range f.mappings {
		if u, ok := users[m.uuid]; ok && m.user == nil {
			m.user = &u
			n++
		}
	}
	return n, nil
}

// fakeInstance is an instances row of fakeInstanceCell.
type fakeInstance struct {
	deleted bool // deleted = id, or vm_state soft-delete
	user    *string
}

type fakeInstanceCell map[string]fakeInstance

func (c fakeInstanceCell) DeletedInstances(_ context.Context, uuids []string) (map[string]bool, error) {
	out := map[string]bool{}
	for _, u := range uuids {
		if i, ok := c[u]; ok && i.deleted {
			out[u] = true
		}
	}
	return out, nil
}

func (c fakeInstanceCell) InstanceUserIDs(_ context.Context, uuids []string) (map[string]*string, error) {
	out := map[string]*string{}
	for _, u := range uuids {
		if i, ok := c[u]; ok {
			out[u] = i.user
		}
	}
	return out, nil
}

func ptr[T any](v T) *T { return &v }

func TestInstanceMappingMigrations(t *testing.T) {
	ctx := context.Background()
	newCloud := func() (*fakeMappingAPI, migrate.CellOpener) {
		api := &fakeMappingAPI{cells: []migrate.CellMappingRef{{ID: 1, UUID: "c0", Name: "cell0"}, {ID: 2, UUID: "c1", Name: "cell1"}, {ID: 3, UUID: "c2", Name: "cell2"}}}
		cells := map[int64]fakeInstanceCell{
			1: {"a": {user: ptr("u0")}},
			2: {"b": {user: ptr("u1")}, "c": {deleted: true, user: ptr("u2")}, "d": {}},
			3: {"e": {user: ptr("u3")}},
		}
		api.mappings = []*fakeMapping{
			{uuid: "a", project: "p", cell: ptr(int64(1))},
			{uuid: "b", project: "p", cell: ptr(int64(2))},
			{uuid: "c", project: "p", cell: ptr(int64(2))},
			{uuid: "d", project: "p", cell: ptr(int64(2))},                      // NULL user_id in its instance
			{uuid: "x", project: "p", cell: ptr(int64(2))},                      // no instance
			{uuid: "y", project: "p"},                                           // no cell yet
			{uuid: "e", project: "p", cell: ptr(int64(3))},                      // a cell this run skips
			{uuid: "m", project: migrate.FakeInstanceUUID, cell: ptr(int64(2))}, // the vif marker
		}
		open := func(_ context.Context, c migrate.CellMappingRef) (migrate.InstanceCell, error) {
			if c.ID == 3 {
				return nil, nil
			}
			return cells[c.ID], nil
		}
		return api, open
	}

	api, open := newCloud()
	q := &migrate.QueuedForDelete{API: api, Cells: open}
	// count 3: cell0's one mapping, then cell1's first two (Nova limits
	// each cell's query to what is left).
	if found, done, err := q.Run(ctx, 3); err != nil || found != 3 || done != 3 {
		t.Fatalf("queued_for_delete(3) = %d, %d, %v; want 3, 3", found, done, err)
	}
	if found, done, err := q.Run(ctx, 50); err != nil || found != 3 || done != 3 {
		t.Fatalf("queued_for_delete(50) = %d, %d, %v; want 3, 3 (d, x and the marker; cell2 skipped, no-cell mapping never)", found, done, err)
	}
	want := map[string]*bool{"a": ptr(false), "b": ptr(false), "c": ptr(true), "d": ptr(false), "x": ptr(false), "y": nil, "e": nil, "m": ptr(false)}
	for _, m := range api.mappings {
		if (m.queued == nil) != (want[m.uuid] == nil) || (m.queued != nil && *m.queued != *want[m.uuid]) {
			t.Errorf("mapping %s: queued_for_delete %v, want %v", m.uuid, m.queued, want[m.uuid])
		}
	}

	var warned []string
	u := &migrate.UserID{API: api, Cells: open, Warn: func(s string) { warned = append(warned, s) }}
	found, done, err := u.Run(ctx, 50)
	var rows migrate.RowErrors
	if found != 7 || done != 3 || !errors.As(err, &rows) || len(rows) != 1 || rows[0].What != "instance mapping d" {
		t.Fatalf("user_id(50) = %d, %d, %v; want 7, 3 and instance mapping d skipped", found, done, err)
	}
	if len(warned) != 1 {
		t.Errorf("warnings: %q; want Nova's one", warned)
	}
	for _, m := range api.mappings {
		set := m.user != nil
		if want := m.uuid == "a" || m.uuid == "b" || m.uuid == "c"; set != want {
			t.Errorf("mapping %s: user_id %v", m.uuid, m.user)
		}
	}
}
