package claims

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

type viewCell struct {
	nodes []NodeRef
	insts []InstanceState
	migs  []MigrationState
}

func (c viewCell) Name() string                                            { return "cell1" }
func (c viewCell) ComputeNodes(context.Context) ([]NodeRef, error)         { return c.nodes, nil }
func (c viewCell) InstanceStates(context.Context) ([]InstanceState, error) { return c.insts, nil }
func (c viewCell) MigrationStates(context.Context) ([]MigrationState, error) {
	return c.migs, nil
}

type viewLedger struct {
	rows    []AllocationRow
	failOn  string // consumer whose removal fails
	removed []string
}

func (l *viewLedger) AllocationRows(context.Context) ([]AllocationRow, error) { return l.rows, nil }
func (l *viewLedger) ProviderExists(_ context.Context, uuid string) (bool, error) {
	for _, r := range l.rows {
		if r.ProviderUUID == uuid {
			return true, nil
		}
	}
	return false, nil
}
func (l *viewLedger) RemoveConsumerFromProvider(_ context.Context, consumer string, providerID int64) (bool, error) {
	if consumer == l.failOn {
		return false, errors.New("boom")
	}
	l.removed = append(l.removed, consumer)
	return true, nil
}

var auditNow = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

func auditRow(consumer string, prov int64, root, class string, age time.Duration) AllocationRow {
	return AllocationRow{Consumer: consumer, ProviderID: prov, ProviderUUID: root + "-p", RootUUID: root, Class: class, Used: 1,
		HasConsumer: true, CreatedAt: auditNow.Add(-age)}
}

func TestAuditRules(t *testing.T) {
	cell := viewCell{
		nodes: []NodeRef{{UUID: "cn1", Host: "h1", Node: "n1"}, {UUID: "cn2", Host: "h2", Node: "n2"}},
		insts: []InstanceState{{UUID: "i-live", Host: "h1", Node: "n1"}, {UUID: "i-gone", Host: "h1", Node: "n1", Deleted: true},
			{UUID: "i-moving", Host: "h2", Node: "n2"}},
		migs: []MigrationState{{UUID: "m-run", InstanceUUID: "i-moving", SourceCompute: "h1", SourceNode: "n1", DestCompute: "h2", DestNode: "n2", Status: "migrating"},
			{UUID: "m-done", InstanceUUID: "i-moving", SourceCompute: "h1", SourceNode: "n1", Status: "confirmed"},
			{UUID: "m-null", InstanceUUID: "i-moving", SourceCompute: "h1", SourceNode: "n1", Status: ""}},
	}
	hour := time.Hour
	cases := []struct {
		name   string
		row    AllocationRow
		orphan bool
	}{
		{"live instance on its node", auditRow("i-live", 1, "cn1", "VCPU", hour), false},
		{"live instance, another node", auditRow("i-live", 2, "cn2", "VCPU", hour), true},
		{"deleted instance", auditRow("i-gone", 1, "cn1", "MEMORY_MB", hour), true},
		{"in-progress migration, source", auditRow("m-run", 1, "cn1", "VCPU", hour), false},
		{"in-progress migration, dest", auditRow("m-run", 2, "cn2", "VCPU", hour), false},
		{"confirmed migration", auditRow("m-done", 1, "cn1", "VCPU", hour), true},
		{"migration with NULL status (Nova's NOT IN excludes it)", auditRow("m-null", 1, "cn1", "VCPU", hour), true},
		{"not Nova's classes", auditRow("x", 1, "cn1", "CUSTOM_FOO", hour), false},
		{"VGPU counts", auditRow("y", 1, "cn1", "VGPU", hour), true},
		{"no compute node", auditRow("i-live", 3, "gone", "VCPU", hour), true},
		{"younger than the expiry", auditRow("z", 1, "cn1", "VCPU", time.Minute), false},
		{"exactly the expiry", auditRow("z", 1, "cn1", "VCPU", 5*time.Minute), true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := &viewLedger{rows: []AllocationRow{tc.row}}
			res, err := Audit(context.Background(), l, []CellView{cell}, AuditOptions{Expiry: 5 * time.Minute, Now: auditNow})
			if err != nil {
				t.Fatal(err)
			}
			if got := len(res.Orphans) == 1; got != tc.orphan {
				t.Fatalf("orphan = %v, want %v", got, tc.orphan)
			}
			want := AuditNone
			if tc.orphan {
				want = AuditFound
			}
			if res.Code(false) != want {
				t.Errorf("code %d, want %d", res.Code(false), want)
			}
		})
	}
}

// TestAuditStopsAfterFailingProvider: like Nova, a failed delete finishes
// that provider's consumers and stops before the next provider (exit 1).
func TestAuditStopsAfterFailingProvider(t *testing.T) {
	l := &viewLedger{rows: []AllocationRow{
		auditRow("a", 1, "gone1", "VCPU", time.Hour), auditRow("b", 1, "gone1", "VCPU", time.Hour), auditRow("c", 2, "gone2", "VCPU", time.Hour),
	}, failOn: "a"}
	res, err := Audit(context.Background(), l, nil, AuditOptions{Delete: true, Now: auditNow})
	if err != nil {
		t.Fatal(err)
	}
	if res.Stopped != "gone1-p" || res.Code(true) != AuditDeleteFailed {
		t.Fatalf("stopped %q code %d", res.Stopped, res.Code(true))
	}
	if len(l.removed) != 1 || l.removed[0] != "b" {
		t.Fatalf("removed %v, want [b] (the rest of provider 1, nothing of provider 2)", l.removed)
	}
}

func TestAuditUnknownProvider(t *testing.T) {
	_, err := Audit(context.Background(), &viewLedger{}, nil, AuditOptions{Provider: "nope", Now: auditNow})
	if !errors.Is(err, ErrBadInput) {
		t.Fatalf("got %v", err)
	}
}

// cancellingLedger cancels the run's context once it has removed after
// removals, as a signal arriving mid-way would.
type cancellingLedger struct {
	viewLedger
	after  int
	cancel context.CancelCauseFunc
}

func (l *cancellingLedger) RemoveConsumerFromProvider(ctx context.Context, consumer string, providerID int64) (bool, error) {
	if len(l.removed) == l.after {
		l.cancel(errors.New("terminated signal received"))
		return false, context.Cause(ctx)
	}
	return l.viewLedger.RemoveConsumerFromProvider(ctx, consumer, providerID)
}

// TestAuditStoppedMidway: a signal during --delete stops the audit with
// its cause, and the result still holds what was done before it (for the
// command to print), not a failed provider.
func TestAuditStoppedMidway(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	l := &cancellingLedger{viewLedger: viewLedger{rows: []AllocationRow{
		auditRow("a", 1, "gone1", "VCPU", time.Hour), auditRow("b", 1, "gone1", "VCPU", time.Hour), auditRow("c", 2, "gone2", "VCPU", time.Hour),
	}}, after: 1, cancel: cancel}
	res, err := Audit(ctx, l, nil, AuditOptions{Delete: true, Now: auditNow})
	if err == nil || !strings.Contains(err.Error(), "terminated") {
		t.Fatalf("err = %v, want the signal's cause", err)
	}
	if res == nil || len(res.Orphans) != 1 || !res.Orphans[0].Deleted || res.Stopped != "" {
		t.Fatalf("result %+v, want the one deletion done before the signal", res)
	}
}

// TestAuditCounts: the progress count (issue 35) starts at 0, goes up by
// one per consumer's holding on a provider looked at, and ends at the
// total, which --provider narrows to that provider's.
func TestAuditCounts(t *testing.T) {
	rows := []AllocationRow{
		auditRow("a", 1, "gone1", "VCPU", time.Hour), auditRow("a", 1, "gone1", "MEMORY_MB", time.Hour),
		auditRow("b", 1, "gone1", "VCPU", time.Hour), auditRow("c", 2, "gone2", "VCPU", time.Hour),
	}
	for _, tc := range []struct {
		provider string
		want     string
	}{
		{"", "0/3 1/3 2/3 3/3"},
		{"gone2-p", "0/1 1/1"},
	} {
		var got []string
		_, err := Audit(context.Background(), &viewLedger{rows: rows}, nil, AuditOptions{Provider: tc.provider, Delete: true, Now: auditNow,
			Counted: func(done, total int) { got = append(got, fmt.Sprintf("%d/%d", done, total)) }})
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("provider %q: counted %v, want %s", tc.provider, got, tc.want)
		}
	}
}
