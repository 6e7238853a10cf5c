package migrate_test

import (
	"context"
	"testing"
	"time"

	"github.com/rpctl/rpctl/migrate"
)

type fakeQuotaCell struct {
	project, user []migrate.QuotaLimit
	classes       []migrate.QuotaClass
}

func (*fakeQuotaCell) Name() string { return "cell1" }

func (c *fakeQuotaCell) QuotaLimits(_ context.Context, perUser bool, limit int) ([]migrate.QuotaLimit, error) {
	rows := c.project
	if perUser {
		rows = c.user
	}
	return rows[:min(limit, len(rows))], nil
}

func (c *fakeQuotaCell) SoftDeleteQuotaLimits(_ context.Context, perUser bool, limits []migrate.QuotaLimit, _ time.Time) error {
	if perUser {
		c.user = c.user[len(limits):]
	} else {
		c.project = c.project[len(limits):]
	}
	return nil
}

func (c *fakeQuotaCell) QuotaClasses(_ context.Context, limit int) ([]migrate.QuotaClass, error) {
	return c.classes[:min(limit, len(c.classes))], nil
}

func (c *fakeQuotaCell) SoftDeleteQuotaClasses(_ context.Context, ids []int64, _ time.Time) error {
	c.classes = c.classes[len(ids):]
	return nil
}

type fakeQuotaAPI struct {
	limits  []migrate.APIQuotaLimit
	classes []migrate.QuotaClass
}

func (a *fakeQuotaAPI) CreateQuotaLimits(_ context.Context, l []migrate.APIQuotaLimit, _ time.Time) error {
	a.limits = append(a.limits, l...)
	return nil
}

func (a *fakeQuotaAPI) CreateQuotaClasses(_ context.Context, c []migrate.QuotaClass, _ time.Time) error {
	a.classes = append(a.classes, c...)
	return nil
}

func TestQuotaLimitsBudgetAndTables(t *testing.T) {
	p := "p1"
	cell := &fakeQuotaCell{
		project: []migrate.QuotaLimit{{ProjectID: &p, Resource: "cores"}, {ProjectID: &p, Resource: "ram"}},
		user: []migrate.QuotaLimit{{ProjectID: &p, UserID: "u1", Resource: "cores"}, {ProjectID: &p, UserID: "u1", Resource: "fixed_ips"},
			{ProjectID: &p, UserID: "", Resource: "ram"}},
	}
	api := &fakeQuotaAPI{}
	m := &migrate.QuotaLimits{API: api, Cells: []migrate.QuotaCell{cell}}
	// count 2: the project limits fill it, the user ones wait (Nova
	// returns when done == count).
	if f, d, err := m.Run(context.Background(), 2); f != 2 || d != 2 || err != nil {
		t.Fatalf("first batch %d %d %v, want 2 2", f, d, err)
	}
	if len(cell.user) != 3 {
		t.Fatalf("per-user limits moved before the project ones filled the count")
	}
	if f, d, err := m.Run(context.Background(), 50); f != 3 || d != 3 || err != nil {
		t.Fatalf("second batch %d %d %v, want 3 3", f, d, err)
	}
	for i, want := range []struct {
		perUser bool
		user    string
	}{{false, ""}, {false, ""}, {true, "u1"}, {false, ""}, {false, ""}} {
		got := api.limits[i]
		if got.PerUser != want.perUser || got.UserID != want.user {
			t.Errorf("limit %d (%s): per user %v user %q, want %v %q (PER_PROJECT_QUOTAS and empty users become project limits)", i, got.Resource, got.PerUser, got.UserID, want.perUser, want.user)
		}
	}
	classes := &migrate.QuotaClasses{API: api, Cells: []migrate.QuotaCell{&fakeQuotaCell{classes: []migrate.QuotaClass{{ID: 1}, {ID: 2}, {ID: 3}}}}}
	if f, d, err := classes.Run(context.Background(), 2); f != 2 || d != 2 || err != nil {
		t.Fatalf("classes %d %d %v, want 2 2", f, d, err)
	}
}
