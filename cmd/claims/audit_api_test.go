package claims_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/cmd/internal/cmdtest"
)

// TestClaimsAuditAPIBackend runs `rpctl claims audit`, list and snapshot on
// the databases on one copy of the audit scenario and through the real
// Placement-api (--os-endpoint: Nova's audit calls) on an identical copy:
// the orphans found and deleted, the exit codes, the list, and afterwards
// everything the API says about every consumer and provider must be equal.
func TestClaimsAuditAPIBackend(t *testing.T) {
	t.Parallel()
	dbSide, consumers := seedAuditCopy(t, false, nil)
	apiSide, _ := seedAuditCopy(t, false, nil)
	if a, b := dbSide.placementState(t, consumers), apiSide.placementState(t, consumers); a != b {
		t.Fatalf("the two copies differ before the test:\n%s\n%s", a, b)
	}
	// The API side names no Placement database: only the API can serve it.
	apiArgs := func(args ...string) []string {
		return append([]string{"--cell-db", apiSide.Cell.URL, "--os-endpoint", apiSide.URL, "--os-token", "admin"}, args...)
	}
	young := claimsConsumer{cu(950), map[string]map[string]int{cn2UUID: {"VCPU": 1, "MEMORY_MB": 128}}}
	steps := []struct {
		name      string
		args      []string
		wantCode  int
		wantPairs int
		before    func()
	}{
		{"report", []string{"claims", "audit"}, 3, 7, nil},
		{"one provider", []string{"claims", "audit", "--provider", ghostUUID}, 3, 1, nil},
		{"unknown provider", []string{"claims", "audit", "--provider", "c0000000-0000-4000-8000-0000000000ff"}, 127, 0, nil},
		{"delete", []string{"claims", "audit", "--delete"}, 4, 7, nil},
		{"after delete", []string{"claims", "audit"}, 0, 0, nil},
		// A new orphan is younger than --expiry on either side (the
		// consumer's created_at; its allocations' Last-Modified).
		{"young orphan kept", []string{"claims", "audit", "--delete", "--expiry", "300s"}, 0, 0, func() {
			dbSide.put(t, young)
			apiSide.put(t, young)
		}},
		{"young orphan, no expiry (Nova's default)", []string{"claims", "audit"}, 3, 1, nil},
		{"young orphan deleted", []string{"claims", "audit", "--delete"}, 4, 1, nil},
	}
	consumers = append(consumers, young.uuid)
	for _, st := range steps {
		if st.before != nil {
			st.before()
		}
		dOut, dErr, dCode := cmdtest.Rpctl(t, dbSide.rpctlArgs(append(st.args, "-f", "json")...)...)
		aOut, aErr, aCode := cmdtest.Rpctl(t, apiArgs(append(st.args, "-f", "json")...)...)
		if dCode != st.wantCode || aCode != st.wantCode {
			t.Fatalf("%s: exit codes database %d, API %d, want %d\ndatabase:\n%s%s\nAPI:\n%s%s", st.name, dCode, aCode, st.wantCode, dOut, dErr, aOut, aErr)
		}
		if dCode != 127 {
			dPairs, aPairs := rpctlAuditPairs(t, dOut), rpctlAuditPairs(t, aOut)
			if strings.Join(dPairs, "\n") != strings.Join(aPairs, "\n") || len(dPairs) != st.wantPairs {
				t.Errorf("%s: orphans differ (want %d)\ndatabase:\n%s\nAPI:\n%s", st.name, st.wantPairs, strings.Join(dPairs, "\n"), strings.Join(aPairs, "\n"))
			}
		}
		if a, b := dbSide.placementState(t, consumers), apiSide.placementState(t, consumers); a != b {
			t.Errorf("%s: Placement differs afterwards\ndatabase copy:\n%s\nAPI copy:\n%s", st.name, a, b)
		}
		if st.name == "report" {
			compareClaimsList(t, dbSide.rpctlArgs("claims", "list", "-f", "json"), apiArgs("claims", "list", "-f", "json"))
			// A snapshot taken on the database, compared through the API:
			// the same claims.
			snap := filepath.Join(t.TempDir(), "claims.db")
			if out, errOut, code := cmdtest.Rpctl(t, dbSide.rpctlArgs("claims", "snapshot", "--out", snap)...); code != 0 {
				t.Fatalf("snapshot on the database: exit %d: %s%s", code, out, errOut)
			}
			if out, errOut, code := cmdtest.Rpctl(t, apiArgs("claims", "diff", snap)...); code != 0 {
				t.Errorf("diff through the API of the database's snapshot: exit %d: %s%s", code, out, errOut)
			}
		}
	}
}

// compareClaimsList requires the same `claims list -f json` rows from both
// argument lists, ages aside (the API's is the allocations' Last-Modified).
func compareClaimsList(t *testing.T, dbArgs, apiArgs []string) {
	t.Helper()
	read := func(args []string) []map[string]any {
		out, errOut, code := cmdtest.Rpctl(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s%s", args, code, out, errOut)
		}
		var rows []map[string]any
		if err := json.Unmarshal([]byte(out), &rows); err != nil {
			t.Fatalf("%v: %v: %s", args, err, out)
		}
		for _, r := range rows {
			delete(r, "age")
		}
		return rows
	}
	d, a := read(dbArgs), read(apiArgs)
	db, _ := json.Marshal(d)
	ab, _ := json.Marshal(a)
	if string(db) != string(ab) || len(d) == 0 {
		t.Errorf("claims list differs\ndatabase: %s\nAPI:      %s", db, ab)
	}
}
