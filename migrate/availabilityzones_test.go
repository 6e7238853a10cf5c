package migrate_test

import (
	"context"
	"testing"
	"time"

	"github.com/rpctl/rpctl/internal/nova"
	"github.com/rpctl/rpctl/migrate"
)

type fakeAZCell struct {
	name  string
	insts []migrate.InstanceHost
	set   map[int64]string
}

func (c *fakeAZCell) Name() string { return c.name }

func (c *fakeAZCell) InstancesMissingAZ(_ context.Context, limit int) ([]migrate.InstanceHost, error) {
	var out []migrate.InstanceHost
	for _, in := range c.insts {
		if _, done := c.set[in.ID]; !done && len(out) < limit {
			out = append(out, in)
		}
	}
	return out, nil
}

func (c *fakeAZCell) SetInstanceAZs(_ context.Context, azs map[int64]string, _ time.Time) (int, error) {
	for id, az := range azs {
		c.set[id] = az
	}
	return len(azs), nil
}

type fakeAggs []nova.Aggregate

func (f fakeAggs) ListAggregates(context.Context) ([]nova.Aggregate, error) { return f, nil }

func TestMissingAZ(t *testing.T) {
	aggs := fakeAggs{
		{ID: 1, Hosts: []string{"h2"}, Metadata: map[string]string{"color": "blue"}},
		{ID: 2, Hosts: []string{"h1"}, Metadata: map[string]string{"availability_zone": "az2"}},
		{ID: 3, Hosts: []string{"h1", "h3"}, Metadata: map[string]string{"availability_zone": "az3"}},
	}
	c1 := &fakeAZCell{name: "cell1", set: map[int64]string{}, insts: []migrate.InstanceHost{{ID: 1, Host: "h1"}, {ID: 2, Host: "h2"}, {ID: 3, Host: "h3"}}}
	c2 := &fakeAZCell{name: "cell2", set: map[int64]string{}, insts: []migrate.InstanceHost{{ID: 1, Host: "h3"}}}
	m := &migrate.MissingAZ{Cells: []migrate.AZCell{c1, c2}, API: aggs, Default: "nova"}
	// One budget over the cells.
	if found, done, err := m.Run(context.Background(), 2); err != nil || found != 2 || done != 2 || len(c2.set) != 0 {
		t.Fatalf("Run(2) = %d, %d, %v (cell2 %v); want 2, 2, cell2 untouched", found, done, err, c2.set)
	}
	if found, done, err := m.Run(context.Background(), 50); err != nil || found != 2 || done != 2 {
		t.Fatalf("Run(50) = %d, %d, %v; want 2, 2", found, done, err)
	}
	if want := map[int64]string{1: "az2", 2: "nova", 3: "az3"}; len(c1.set) != 3 || c1.set[1] != want[1] || c1.set[2] != want[2] || c1.set[3] != want[3] {
		t.Errorf("cell1 zones %v, want %v", c1.set, want)
	}
	if c2.set[1] != "az3" {
		t.Errorf("cell2 zones %v", c2.set)
	}
}

// TestHostAZSpellings: a host is found in its aggregates as Nova's
// AggregateList.get_by_host finds it on MySQL (case and trailing spaces
// ignored), as the aggregate sync compares hosts.
func TestHostAZSpellings(t *testing.T) {
	aggs := []nova.Aggregate{{ID: 1, Hosts: []string{"cmp1-00020"}, Metadata: map[string]string{"availability_zone": "az1"}}}
	for _, tc := range []struct{ host, want string }{
		{"cmp1-00020", "az1"}, {"CMP1-00020", "az1"}, {"cmp1-00020  ", "az1"}, {"cmp1-00021", "nova"},
	} {
		if got := migrate.HostAZ(aggs, tc.host, "nova"); got != tc.want {
			t.Errorf("HostAZ(%q) = %q, want %q", tc.host, got, tc.want)
		}
	}
}
