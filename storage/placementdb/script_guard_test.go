package placementdb

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/rpctl/rpctl/claims"
	"github.com/rpctl/rpctl/inventory"
	"github.com/rpctl/rpctl/migrate"
)

// TestScriptGuards: on a Galera node every write statement of every kind
// of script runs only inside the script's transaction (@@in_transaction =
// 1), each item reads the GTID before its START TRANSACTION and checks it
// after its COMMIT, and nothing else writes; unguarded, the script has
// none of it. (TestGaleraScriptAborts is why: a brute-force abort lets
// MariaDB run the rest of a script in autocommit mode.)
func TestScriptGuards(t *testing.T) {
	inv := inventory.Inventory{Total: 8, Reserved: 0, MinUnit: 1, MaxUnit: 8, StepSize: 1, AllocationRatio: 16}
	ids := &migrate.PlacementIDs{
		Classes:    map[string]int64{"VCPU": 0, "MEMORY_MB": 1, "DISK_GB": 2},
		Traits:     map[string]int64{"HW_CPU_X86_AVX": 10, "CUSTOM_A": 11},
		Aggregates: map[string]int64{"agg-1": 20, "agg-2": 21},
	}
	create := migrate.NodeWrite{Providers: []migrate.ProviderWrite{
		{UUID: "11111111-1111-1111-1111-111111111111", Name: "n1", Create: true, Generation: 1,
			AddInventories: map[string]inventory.Inventory{"VCPU": inv, "MEMORY_MB": inv},
			AddTraits:      []string{"HW_CPU_X86_AVX", "CUSTOM_A"}, AddAggregates: []string{"agg-1", "agg-2"}},
		{UUID: "22222222-2222-2222-2222-222222222222", Name: "n1_pci", ParentUUID: "11111111-1111-1111-1111-111111111111", Create: true, Generation: 1,
			AddInventories: map[string]inventory.Inventory{"DISK_GB": inv}, AddTraits: []string{"CUSTOM_A"}},
	}}
	update := migrate.NodeWrite{
		Providers: []migrate.ProviderWrite{
			{UUID: "11111111-1111-1111-1111-111111111111", Name: "n1", ExpectGeneration: 3, Generation: 4,
				AddInventories:    map[string]inventory.Inventory{"DISK_GB": inv},
				UpdateInventories: map[string]inventory.Inventory{"VCPU": inv},
				DeleteInventories: []string{"MEMORY_MB"},
				AddTraits:         []string{"CUSTOM_A"}, RemoveTraits: []string{"HW_CPU_X86_AVX"},
				AddAggregates: []string{"agg-2"}, RemoveAggregates: []string{"agg-1"}},
			{UUID: "33333333-3333-3333-3333-333333333333", Name: "n1_new", ParentUUID: "11111111-1111-1111-1111-111111111111", Create: true, Generation: 1,
				AddInventories: map[string]inventory.Inventory{"VCPU": inv}, AddTraits: []string{"CUSTOM_A"}, AddAggregates: []string{"agg-1"}},
			{UUID: "44444444-4444-4444-4444-444444444444", Name: "root2", Create: true, Generation: 1},
			{UUID: "22222222-2222-2222-2222-222222222222", Name: "n1_pci", ExpectGeneration: 2, Generation: 3, Delete: true},
		},
		Moves: []migrate.AllocationMove{{Consumer: "c1", Class: "VCPU", From: "11111111-1111-1111-1111-111111111111", To: "55555555-5555-5555-5555-555555555555", Used: 2, Limit: 16}},
	}
	ts := []byte("'2026-01-01 00:00:00'")
	invW := inventory.InventoryReplace{UUID: "u", Generation: 5, Want: map[string]inventory.Inventory{"VCPU": inv, "MEMORY_MB": inv, "DISK_GB": inv}}
	invP := &batchProvider{id: 7, inv: inventory.ProviderInventories{Inventories: map[string]inventory.Inventory{"VCPU": inv}}}
	trW := inventory.TraitsSet{UUID: "u", Generation: 5, Traits: []string{"CUSTOM_A"}}
	trP := &traitsProvider{id: 7, traits: inventory.ProviderTraits{Traits: []string{"HW_CPU_X86_AVX"}}}
	traitIDs := map[string]int64{"HW_CPU_X86_AVX": 10, "CUSTOM_A": 11}
	scripts := map[string]func(g scriptGuard) ([]byte, bool){
		"nodeScript":   func(g scriptGuard) ([]byte, bool) { return nodeScript(&create, ids, "2026-01-01 00:00:00", 3, g) },
		"updateScript": func(g scriptGuard) ([]byte, bool) { return updateScript(&update, ids, "2026-01-01 00:00:00", 3, g) },
		"inventoryScript": func(g scriptGuard) ([]byte, bool) {
			return inventoryScript(&invW, invP, ids.Classes, ts, 3, g)
		},
		"traitsScript": func(g scriptGuard) ([]byte, bool) { return traitsScript(&trW, trP, traitIDs, ts, 3, g) },
		"aggregateScript": func(g scriptGuard) ([]byte, bool) {
			w := migrate.AggregateWrite{Provider: "11111111-1111-1111-1111-111111111111", Generation: 2,
				Add: []string{"aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa"}, Remove: []string{"bbbbbbbb-bbbb-bbbb-bbbb-bbbbbbbbbbbb"}}
			return aggregateScript(&w, ts, 3, g)
		},
		"removalScript": func(g scriptGuard) ([]byte, bool) {
			return removalScript(claims.Removal{Consumer: "cccccccc-cccc-cccc-cccc-cccccccccccc", ProviderID: 9}, 3, g)
		},
	}
	write := regexp.MustCompile(`^(INSERT|UPDATE|DELETE|REPLACE)\b`)
	for name, build := range scripts {
		for _, guard := range []bool{false, true} {
			g := scriptGuard(guard)
			b, ok := build(g)
			if !ok {
				t.Fatalf("%s: no script", name)
			}
			s := string(b)
			stmts := strings.Split(strings.TrimSuffix(s, ";\n"), ";\n")
			writes := 0
			for _, st := range stmts {
				if !write.MatchString(st) {
					continue
				}
				writes++
				if guarded := strings.Contains(st, "@@in_transaction = 1"); guarded != bool(g) {
					t.Errorf("%s guard=%v: write %q guarded %v", name, g, st, guarded)
				}
				if guard && strings.Contains(st, " VALUES ") {
					t.Errorf("%s: guarded write with VALUES (rows cannot be guarded there): %q", name, st)
				}
				// Every row of a guarded INSERT is one SELECT with the guard.
				if guard && strings.HasPrefix(st, "INSERT") {
					for _, row := range strings.Split(st, " UNION ALL ") {
						if !strings.Contains(row, "@@in_transaction = 1") {
							t.Errorf("%s: row %q of %q without the guard", name, row, st)
						}
					}
				}
			}
			if writes < 2 {
				t.Errorf("%s: %d writes, the test covers nothing", name, writes)
			}
			hasGTID := strings.HasPrefix(s, "SET @rpctl_gtid = WSREP_LAST_WRITTEN_GTID();\nSTART TRANSACTION;\n")
			hasCheck := strings.HasSuffix(s, "COMMIT;\n"+gtidCheck+"SELECT 3;\n") ||
				name == "removalScript" && strings.HasSuffix(s, "COMMIT;\nBEGIN NOT ATOMIC IF WSREP_LAST_WRITTEN_GTID() <=> @rpctl_gtid AND (@rpctl_held > 0) THEN "+gtidSignal+"SELECT 3;\n")
			if hasGTID != bool(g) || hasCheck != bool(g) {
				t.Errorf("%s guard=%v: GTID read %v, check after COMMIT %v:\n%s", name, g, hasGTID, hasCheck, s)
			}
			if !guard && !strings.HasPrefix(s, "START TRANSACTION;\n") || !guard && !strings.HasSuffix(s, "COMMIT;\nSELECT 3;\n") {
				t.Errorf("%s unguarded: not START TRANSACTION ... COMMIT; SELECT 3:\n%s", name, s)
			}
		}
	}
}

// TestGTIDCheckFailed: only the 1213 a guarded script's GTID check raises
// leads writeScripts to ask whether the node committed after all; a
// statement's deadlock or a certification failure (1213 with the server's
// own text) is retried as it was.
func TestGTIDCheckFailed(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{&mysql.MySQLError{Number: 1213, Message: gtidMessage}, true},
		{fmt.Errorf("write compute node providers x: %w", &mysql.MySQLError{Number: 1213, Message: gtidMessage}), true},
		{&mysql.MySQLError{Number: 1213, Message: "Deadlock found when trying to get lock; try restarting transaction"}, false},
		{&mysql.MySQLError{Number: 1062, Message: gtidMessage}, false},
		{errors.New(gtidMessage), false},
		{nil, false},
	} {
		if got := gtidCheckFailed(c.err); got != c.want {
			t.Errorf("gtidCheckFailed(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
