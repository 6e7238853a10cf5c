package claims

import (
	"context"
	"reflect"
	"testing"
	"time"
)

// batchLedger is a viewLedger that takes batches: it makes the removals in
// order through RemoveConsumerFromProvider and stops at the first failure.
type batchLedger struct {
	viewLedger
	batches int
}

func (l *batchLedger) RemoveConsumersFromProviders(ctx context.Context, rs []Removal) (int, error) {
	l.batches++
	for i, r := range rs {
		if _, err := l.RemoveConsumerFromProvider(ctx, r.Consumer, r.ProviderID); err != nil {
			return i, err
		}
	}
	return len(rs), nil
}

// TestAuditBatchesAsOneByOne (issue 35): with a ledger that takes batches,
// --delete removes the same consumers, reports the same orphans and stops
// after the same provider as removing them one by one: every removal
// succeeding, one failing (the rest of its provider goes on, the next
// provider is not touched), a young consumer and a live instance left.
func TestAuditBatchesAsOneByOne(t *testing.T) {
	rows := []AllocationRow{
		auditRow("a", 1, "gone1", "VCPU", time.Hour), auditRow("b", 1, "gone1", "VCPU", time.Hour),
		auditRow("young", 1, "gone1", "VCPU", time.Second), auditRow("c", 2, "gone2", "VCPU", time.Hour),
		auditRow("d", 3, "gone3", "VCPU", time.Hour), auditRow("e", 3, "gone3", "VCPU", time.Hour),
	}
	for _, failOn := range []string{"", "a", "b", "d", "e"} {
		var got [2]*AuditResult
		var removed [2][]string
		for k, batched := range []bool{true, false} {
			v := viewLedger{rows: rows, failOn: failOn}
			var l Ledger = &v
			bl := &batchLedger{viewLedger: v}
			if batched {
				l = bl
			}
			res, err := Audit(context.Background(), l, nil, AuditOptions{Delete: true, Now: auditNow, Expiry: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			for i := range res.Orphans {
				res.Orphans[i].Failed = nil // errors are compared by their presence below
			}
			got[k] = res
			removed[k] = v.removed
			if batched {
				removed[k] = bl.removed
				if bl.batches == 0 {
					t.Errorf("fail on %q: no batch", failOn)
				}
			}
		}
		if !reflect.DeepEqual(removed[0], removed[1]) || !reflect.DeepEqual(got[0], got[1]) {
			t.Errorf("fail on %q: batched removed %v, %+v; one by one %v, %+v", failOn, removed[0], got[0], removed[1], got[1])
		}
	}
}
