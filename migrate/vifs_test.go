package migrate_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rpctl/rpctl/migrate"
)

// fakeVIFCell is a cell of instances in listing order, each with its
// network_info and live VIF ports.
type fakeVIFCell struct {
	order    []string
	cache    map[string]*string
	vifs     map[string][]migrate.VIFRow
	marker   *string
	replaced map[string][]migrate.NewVIF
	nextID   int64
}

func (c *fakeVIFCell) VIFMarker(context.Context) (*string, error) { return c.marker, nil }

func (c *fakeVIFCell) VIFInstances(_ context.Context, marker *string, limit int) ([]migrate.VIFInstance, error) {
	start := 0
	if marker != nil {
		i := slices.Index(c.order, *marker)
		if i < 0 {
			return nil, migrate.ErrVIFMarkerNotFound
		}
		start = i + 1
	}
	var out []migrate.VIFInstance
	for _, u := range c.order[start:] {
		if len(out) == limit {
			break
		}
		out = append(out, migrate.VIFInstance{UUID: u, NetworkInfo: c.cache[u]})
	}
	return out, nil
}

func (c *fakeVIFCell) InstanceVIFs(_ context.Context, u string) ([]migrate.VIFRow, error) {
	return c.vifs[u], nil
}

func (c *fakeVIFCell) ReplaceVIFs(_ context.Context, u string, old []int64, vifs []migrate.NewVIF, _ time.Time) error {
	if c.replaced == nil {
		c.replaced = map[string][]migrate.NewVIF{}
	}
	c.replaced[u] = vifs
	var rows []migrate.VIFRow
	for _, v := range vifs {
		c.nextID++
		rows = append(rows, migrate.VIFRow{ID: c.nextID, UUID: v.UUID, Tag: v.Tag})
	}
	c.vifs[u] = rows
	return nil
}

func (c *fakeVIFCell) SetVIFMarker(_ context.Context, marker string, _ time.Time) error {
	c.marker = &marker
	return nil
}

type fakeMappings []migrate.CellMappingRef

func (f fakeMappings) ListCellMappings(context.Context) ([]migrate.CellMappingRef, error) {
	return f, nil
}

func nwInfo(s string) *string { return &s }

func TestFillVIFList(t *testing.T) {
	tag := "disk-tag"
	cell := &fakeVIFCell{
		order: []string{"pre-newton", "reordered", "equal", "more", "no-cache", "empty", "bad", migrate.FakeInstanceUUID, "null-addr"},
		cache: map[string]*string{
			"pre-newton": nwInfo(`[{"id": "p1", "address": "fa:16:3e:00:00:01"}, {"id": "p2", "address": "fa:16:3e:00:00:02"}]`),
			"reordered":  nwInfo(`[{"id": "p3", "address": "m3"}, {"id": "p4", "address": "m4"}]`),
			"equal":      nwInfo(`[{"id": "p5", "address": "m5"}]`),
			"more":       nwInfo(`[{"id": "p6", "address": "m6"}]`),
			"empty":      nwInfo(`[]`),
			"bad":        nwInfo(`null`),
			"null-addr":  nwInfo(`[{"id": "p9"}]`),
		},
		vifs: map[string][]migrate.VIFRow{
			"reordered": {{ID: 1, UUID: "p4"}, {ID: 2, UUID: "p3", Tag: &tag}},
			"equal":     {{ID: 3, UUID: "p5"}},
			"more":      {{ID: 4, UUID: "p6"}, {ID: 5, UUID: "p7"}},
		},
		nextID: 100,
	}
	m := &migrate.FillVIFList{API: fakeMappings{{ID: 1, UUID: "c1", Name: "cell1"}}, Cells: func(context.Context, migrate.CellMappingRef) (migrate.VIFCell, error) { return cell, nil }}

	// A batch of 3: pre-newton and reordered rebuilt, equal checked; the
	// marker stops at equal.
	found, done, err := m.Run(context.Background(), 3)
	if err != nil || found != 3 || done != 2 {
		t.Fatalf("first batch: found %d done %d err %v, want 3 2 nil", found, done, err)
	}
	if cell.marker == nil || *cell.marker != "equal" {
		t.Fatalf("marker %v, want equal", cell.marker)
	}
	want := []migrate.NewVIF{{UUID: "p3", Address: "m3/p3", Tag: &tag}, {UUID: "p4", Address: "m4/p4"}}
	if got := cell.replaced["reordered"]; len(got) != 2 || got[0].UUID != want[0].UUID || got[0].Address != want[0].Address || got[0].Tag == nil || *got[0].Tag != tag || got[1].Tag != nil || got[1].Address != want[1].Address {
		t.Errorf("reordered rebuilt as %+v, want %+v (the tag follows its port)", got, want)
	}
	if got := cell.replaced["pre-newton"]; len(got) != 2 || got[0].Address != "fa:16:3e:00:00:01/p1" {
		t.Errorf("pre-newton rebuilt as %+v", got)
	}

	// The rest: more (checked, left), no-cache and empty (not counted),
	// bad (skipped, named), the fake instance (never), null-addr
	// (rebuilt, Python's "None").
	found, done, err = m.Run(context.Background(), 50)
	var rows migrate.RowErrors
	if !errors.As(err, &rows) || len(rows) != 1 || !strings.Contains(rows[0].Error(), "instance bad") {
		t.Fatalf("second batch error %v, want the bad row named", err)
	}
	if found != 2 || done != 1 {
		t.Errorf("second batch: found %d done %d, want 2 1", found, done)
	}
	if got := cell.replaced["null-addr"]; len(got) != 1 || got[0].Address != "None/p9" {
		t.Errorf("null-addr rebuilt as %+v, want address None/p9", got)
	}
	if _, ok := cell.replaced["more"]; ok {
		t.Error("an instance with more rows than its cache was rebuilt")
	}
	// The marker is at the end: nothing more.
	if found, done, err = m.Run(context.Background(), 50); found != 0 || done != 0 || err != nil {
		t.Errorf("third batch: %d %d %v, want nothing", found, done, err)
	}
}

func TestParseNetworkInfoRefuses(t *testing.T) {
	for _, s := range []string{`null`, `{}`, `[1]`, `[{"id": 5}]`, `[{"id": "p", "address": 7}]`, `not json`} {
		cell := &fakeVIFCell{order: []string{"i"}, cache: map[string]*string{"i": nwInfo(s)}, vifs: map[string][]migrate.VIFRow{}}
		m := &migrate.FillVIFList{API: fakeMappings{{ID: 1, Name: "c"}}, Cells: func(context.Context, migrate.CellMappingRef) (migrate.VIFCell, error) { return cell, nil }}
		found, _, err := m.Run(context.Background(), 5)
		var rows migrate.RowErrors
		if !errors.As(err, &rows) || found != 0 {
			t.Errorf("network_info %s: found %d, err %v; want a bad row", s, found, err)
		}
	}
}
