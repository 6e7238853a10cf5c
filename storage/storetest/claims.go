package storetest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/claims"
	"github.com/rpctl/rpctl/internal/placementtest"
	"github.com/rpctl/rpctl/internal/testdb"
)

// ClaimsLedger is claims.Ledger's conformance suite: a Placement holding
// a tree (root and child), a second root and three consumers, all written
// through the real placement-api, read and edited through the ledger
// newLedger makes over it; what the ledger changes is read back through
// the API.
func ClaimsLedger(t *testing.T, newLedger func(placementtest.Placement) claims.Ledger) {
	testdb.RequirePython(t, "placement")
	p := placementtest.New(t)
	ctx := context.Background()
	do := func(method, path, body string) string {
		t.Helper()
		code, b := testdb.PlacementDo(t, method, p.Base, path, mv, body)
		if code >= 300 {
			t.Fatalf("%s %s: %d %s", method, path, code, b)
		}
		return string(b)
	}
	const (
		root1, numa, root2 = cn1, "44444444-4444-4444-8444-444444444444", cn2
		consA, consB       = cons1, "eeeeeeee-eeee-4eee-8eee-eeeeeeeeeeee"
		consC              = "ffffffff-ffff-4fff-8fff-ffffffffffff"
		user               = "12121212-1212-4121-8121-121212121212"
	)
	do("POST", "/resource_providers", `{"uuid": "`+root1+`", "name": "cmp1"}`)
	do("POST", "/resource_providers", `{"uuid": "`+numa+`", "name": "cmp1_NUMA0", "parent_provider_uuid": "`+root1+`"}`)
	do("POST", "/resource_providers", `{"uuid": "`+root2+`", "name": "cmp2"}`)
	do("PUT", "/resource_providers/"+root1+"/inventories", `{"resource_provider_generation": 0, "inventories": {"MEMORY_MB": {"total": 4096}, "DISK_GB": {"total": 100}}}`)
	do("PUT", "/resource_providers/"+numa+"/inventories", `{"resource_provider_generation": 0, "inventories": {"VCPU": {"total": 8}}}`)
	do("PUT", "/resource_providers/"+root2+"/inventories", `{"resource_provider_generation": 0, "inventories": {"VCPU": {"total": 4}, "MEMORY_MB": {"total": 2048}}}`)
	alloc := func(consumer, allocs string) {
		do("PUT", "/allocations/"+consumer, `{"allocations": {`+allocs+`}, "project_id": "`+proj+`", "user_id": "`+user+`", "consumer_generation": null, "consumer_type": "INSTANCE"}`)
	}
	alloc(consA, `"`+root1+`": {"resources": {"MEMORY_MB": 512, "DISK_GB": 10}}, "`+numa+`": {"resources": {"VCPU": 2}}`)
	alloc(consB, `"`+root2+`": {"resources": {"VCPU": 1, "MEMORY_MB": 256}}`)
	alloc(consC, `"`+numa+`": {"resources": {"VCPU": 1}}`)

	l := newLedger(p)
	rows, err := l.AllocationRows(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Provider ids are the backend's own (the API numbers providers in
	// listing order); everything else must be what Placement holds, in
	// consumer order.
	row := func(r claims.AllocationRow) string {
		return fmt.Sprintf("%s %s %s root=%s %s=%d consumer=%v %s %s", r.Consumer, r.ProviderUUID, r.ProviderName, r.RootUUID, r.Class, r.Used, r.HasConsumer, r.Project, r.User)
	}
	var got []string
	ids := map[string]int64{}
	for i, r := range rows {
		got = append(got, row(r))
		ids[r.ProviderUUID] = r.ProviderID
		if i > 0 && rows[i-1].Consumer > r.Consumer {
			t.Errorf("rows not in consumer order: %s before %s", rows[i-1].Consumer, r.Consumer)
		}
	}
	var want []string
	for _, w := range []claims.AllocationRow{
		{Consumer: consA, ProviderUUID: root1, ProviderName: "cmp1", RootUUID: root1, Class: "MEMORY_MB", Used: 512},
		{Consumer: consA, ProviderUUID: root1, ProviderName: "cmp1", RootUUID: root1, Class: "DISK_GB", Used: 10},
		{Consumer: consA, ProviderUUID: numa, ProviderName: "cmp1_NUMA0", RootUUID: root1, Class: "VCPU", Used: 2},
		{Consumer: consB, ProviderUUID: root2, ProviderName: "cmp2", RootUUID: root2, Class: "VCPU", Used: 1},
		{Consumer: consB, ProviderUUID: root2, ProviderName: "cmp2", RootUUID: root2, Class: "MEMORY_MB", Used: 256},
		{Consumer: consC, ProviderUUID: numa, ProviderName: "cmp1_NUMA0", RootUUID: root1, Class: "VCPU", Used: 1},
	} {
		w.HasConsumer, w.Project, w.User = true, proj, user
		want = append(want, row(w))
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("AllocationRows:\n%s", lineDiff(strings.Join(want, "\n"), strings.Join(got, "\n")))
	}

	for _, tc := range []struct {
		uuid string
		want bool
	}{{root1, true}, {numa, true}, {"99999999-9999-4999-8999-999999999999", false}} {
		if ok, err := l.ProviderExists(ctx, tc.uuid); err != nil || ok != tc.want {
			t.Errorf("ProviderExists(%s) = %v, %v; want %v", tc.uuid, ok, err, tc.want)
		}
	}

	// Taking consumer A off the NUMA child leaves its root allocations and
	// every other consumer alone; a second removal finds nothing.
	if ok, err := l.RemoveConsumerFromProvider(ctx, consA, ids[numa]); err != nil || !ok {
		t.Fatalf("RemoveConsumerFromProvider(A, numa) = %v, %v; want true", ok, err)
	}
	if ok, err := l.RemoveConsumerFromProvider(ctx, consA, ids[numa]); err != nil || ok {
		t.Errorf("second RemoveConsumerFromProvider(A, numa) = %v, %v; want false", ok, err)
	}
	for consumer, holds := range map[string][]string{consA: {root1}, consB: {root2}, consC: {numa}} {
		body := do("GET", "/allocations/"+consumer, "")
		for _, u := range []string{root1, numa, root2} {
			if has := strings.Contains(body, `"`+u+`"`); has != slices.Contains(holds, u) {
				t.Errorf("after the removal, consumer %s on %s: %v, want %v\n%s", consumer, u, has, !has, body)
			}
		}
	}
}
