package claims_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rpctl/rpctl/cmd/internal/cmdtest"
	"github.com/rpctl/rpctl/internal/nova"
	"github.com/rpctl/rpctl/internal/testdb"
	"github.com/rpctl/rpctl/storage/apidb"
)

func TestClaimsCreateRelease(t *testing.T) {
	c := newSQLiteCloud(t)
	if err := apidb.InsertAPIRows(context.Background(), c.db, nova.APIRows{Flavors: []nova.Flavor{
		{ID: 1, FlavorID: "42", Name: "m1.small", VCPUs: 2, MemoryMB: 1024, RootGB: 10, IsPublic: true},
		{ID: 2, FlavorID: "43", Name: "m1.custom", VCPUs: 1, MemoryMB: 512, IsPublic: true, ExtraSpecs: map[string]string{"resources:MEMORY_MB": "768"}},
	}}); err != nil {
		t.Fatal(err)
	}
	create := func(args ...string) (string, string, int) {
		return cmdtest.Rpctl(t, append(append(c.args, "claims", "create", "--project", "p9", "--user", "u9"), args...)...)
	}
	out, errOut, code := create("--consumer", cu(1), "--resources", "VCPU:3,MEMORY_MB:1024", "--host", "node2")
	if code != 0 || !strings.Contains(out, "node2") {
		t.Fatalf("create on node2: exit %d: %s%s", code, out, errOut)
	}
	var used int
	c.p.Get(&used, `SELECT SUM(used) FROM allocations WHERE consumer_id = ? AND resource_provider_id = 2`, cu(1))
	if used != 3+1024 {
		t.Fatalf("allocations of %s on node2 sum to %d", cu(1), used)
	}
	var gen int
	c.p.Get(&gen, `SELECT generation FROM consumers WHERE uuid = ?`, cu(1))
	if gen != 1 {
		t.Errorf("new consumer generation %d, want 1 (created at 0, incremented by the write, as Placement does)", gen)
	}
	if _, errOut, code := create("--consumer", cu(1), "--resources", "VCPU:1"); code != 2 || !strings.Contains(errOut, "already exists") {
		t.Errorf("second create of the same consumer: exit %d: %s", code, errOut)
	}
	if _, errOut, code := create("--consumer", cu(2), "--resources", "VCPU:2", "--host", "host2"); code != 2 || !strings.Contains(errOut, "no allocation candidate") || !strings.Contains(errOut, "node2") {
		t.Errorf("create beyond node2's room: exit %d: %s", code, errOut)
	}
	if out, errOut, code := create("--consumer", cu(3), "--flavor", "m1.small", "-f", "json"); code != 0 || !strings.Contains(out, `"DISK_GB"`) {
		t.Errorf("create --flavor m1.small: exit %d: %s%s", code, out, errOut)
	}
	if out, errOut, code := create("--consumer", cu(4), "--flavor", "43", "-f", "json"); code != 0 || !strings.Contains(out, `"amount": 768`) {
		t.Errorf("create --flavor 43 (resources:MEMORY_MB=768): exit %d: %s%s", code, out, errOut)
	}
	for _, bad := range [][]string{
		{"--consumer", cu(5)},
		{"--consumer", "nope", "--resources", "VCPU:1"},
		{"--consumer", cu(5), "--resources", "VCPU:x"},
		{"--consumer", cu(5), "--resources", "VCPU:1", "--flavor", "m1.small"},
		{"--consumer", cu(5), "--flavor", "m9.none"},
		{"--consumer", cu(5), "--resources", "VCPU:1", "--host", "host9"},
	} {
		if _, errOut, code := create(bad...); code != 127 {
			t.Errorf("create %v: exit %d, want 127: %s", bad, code, errOut)
		}
	}
	release := func(consumer string) (string, string, int) {
		return cmdtest.Rpctl(t, append(c.args, "claims", "release", consumer)...)
	}
	if out, errOut, code := release(cu(1)); code != 0 {
		t.Fatalf("release: exit %d: %s%s", code, out, errOut)
	}
	var n int
	c.p.Get(&n, `SELECT COUNT(*) FROM consumers WHERE uuid = ?`, cu(1))
	if n != 0 {
		t.Error("release left the consumer record")
	}
	if _, _, code := release(cu(1)); code != 4 {
		t.Errorf("second release: exit %d, want 4", code)
	}
	if _, _, code := release("x"); code != 127 {
		t.Errorf("release x: exit %d, want 127", code)
	}
	// A uuid is one consumer however it is spelt: stored and compared in
	// Placement's form (lowercase, dashed).
	undashed := strings.ToUpper(strings.ReplaceAll(cu(6), "-", ""))
	if _, errOut, code := create("--consumer", undashed, "--resources", "VCPU:1"); code != 0 {
		t.Fatalf("create %s: exit %d: %s", undashed, code, errOut)
	}
	if _, errOut, code := create("--consumer", cu(6), "--resources", "VCPU:1"); code != 2 || !strings.Contains(errOut, "already exists") {
		t.Errorf("create %s after %s: exit %d, want 2 (the same consumer): %s", cu(6), undashed, code, errOut)
	}
	var spellings []string
	c.p.Select(&spellings, `SELECT uuid FROM consumers WHERE lower(replace(uuid, '-', '')) = ?`, strings.ToLower(undashed))
	if len(spellings) != 1 || spellings[0] != cu(6) {
		t.Errorf("consumers stored for %s: %q, want [%s]", undashed, spellings, cu(6))
	}
	if _, errOut, code := release("{" + strings.ToUpper(cu(6)) + "}"); code != 0 {
		t.Errorf("release in braces and upper case: exit %d: %s", code, errOut)
	}
	// The room is back: the consumer can claim again.
	if _, errOut, code := create("--consumer", cu(1), "--resources", "VCPU:3", "--host", "node2"); code != 0 {
		t.Errorf("create after release: exit %d: %s", code, errOut)
	}
}

// TestClaimsCreateRaceLastUnit: two claims race for the last VCPU of a
// host, again and again; exactly one wins each round, the other is told why.
func TestClaimsCreateRaceLastUnit(t *testing.T) {
	// Waits on MariaDB, placement-api and Python: overlap with the other slow tests.
	t.Parallel()
	bin := testdb.BuildRpctl(t)
	c := newMySQLCloud(t)
	for round := 0; round < 4; round++ {
		// node1 has 4 VCPU: leave exactly one free.
		c.exec(t, `DELETE FROM allocations`)
		c.exec(t, `DELETE FROM consumers`)
		c.alloc(t, cu(1000+round), time.Hour, map[int64]map[string]int{1: {"VCPU": 3}})
		type result struct {
			code int
			out  string
		}
		results := make([]result, 2)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range results {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				args := append(append([]string{}, c.args...), "claims", "create", "--consumer", cu(round*10+i), "--project", "p1", "--user", "u1",
					"--resources", "VCPU:1", "--host", "node1")
				<-start
				out, err := execCommand(bin, args...)
				results[i] = result{exitCode(err), out}
			}(i)
		}
		close(start)
		wg.Wait()
		wins, refused := 0, 0
		for _, r := range results {
			switch r.code {
			case 0:
				wins++
			case 2:
				refused++
				if !strings.Contains(r.out, "refused") || !strings.Contains(r.out, "VCPU") {
					t.Errorf("round %d: the loser was not told why: %s", round, r.out)
				}
			default:
				t.Errorf("round %d: exit %d: %s", round, r.code, r.out)
			}
		}
		if wins != 1 || refused != 1 {
			t.Fatalf("round %d: %d won, %d refused, want 1 and 1: %+v", round, wins, refused, results)
		}
		var used int
		c.p.Get(&used, `SELECT SUM(used) FROM allocations WHERE resource_provider_id = 1`)
		if used != 4 {
			t.Fatalf("round %d: node1 has %d VCPU allocated of 4", round, used)
		}
	}
}

// TestClaimsCreateNoOvercommit: 8 racers make 200 claims each on a small
// cloud whose room runs out; no provider is ever over-committed, every claim
// either holds its allocation or was refused with a reason.
func TestClaimsCreateNoOvercommit(t *testing.T) {
	// Waits on MariaDB, placement-api and Python: overlap with the other slow tests.
	t.Parallel()
	c := newMySQLCloud(t)
	// Two nodes of 64 VCPU, 64 GiB: room for 128 claims of VCPU:1 and
	// 256 of MEMORY_MB:512 (capacity with ratio 1.0, nothing reserved).
	c.exec(t, `UPDATE inventories SET total = 64, max_unit = 64 WHERE resource_class_id = (SELECT id FROM resource_classes WHERE name = 'VCPU')`)
	c.exec(t, `UPDATE inventories SET total = 65536, max_unit = 65536 WHERE resource_class_id = (SELECT id FROM resource_classes WHERE name = 'MEMORY_MB')`)
	const racers, each = 8, 200
	var mu sync.Mutex
	codes := map[int]int{}
	var wg sync.WaitGroup
	for r := 0; r < racers; r++ {
		wg.Add(1)
		go func(r int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				res := "VCPU:1,MEMORY_MB:256"
				if i%2 == 1 {
					res = "MEMORY_MB:512"
				}
				_, errOut, code := cmdtest.Rpctl(t, append(append([]string{}, c.args...), "claims", "create", "--consumer", cu(100000+r*1000+i),
					"--project", "p1", "--user", "u1", "--resources", res)...)
				mu.Lock()
				codes[code]++
				mu.Unlock()
				if code != 0 && (code != 2 || !strings.Contains(errOut, "refused")) {
					t.Errorf("racer %d claim %d: exit %d: %s", r, i, code, errOut)
				}
			}
		}(r)
	}
	wg.Wait()
	var over []string
	if err := c.p.Select(&over, `SELECT CONCAT(rp.name, ' ', rc.name, ' ', SUM(a.used), ' > ', MAX(i.total - i.reserved) * MAX(i.allocation_ratio))
		FROM allocations a JOIN inventories i ON i.resource_provider_id = a.resource_provider_id AND i.resource_class_id = a.resource_class_id
		JOIN resource_providers rp ON rp.id = a.resource_provider_id JOIN resource_classes rc ON rc.id = a.resource_class_id
		GROUP BY rp.name, rc.name HAVING SUM(a.used) > MAX(i.total - i.reserved) * MAX(i.allocation_ratio)`); err != nil {
		t.Fatal(err)
	}
	if len(over) > 0 {
		t.Fatalf("over-committed: %v", over)
	}
	var consumers, vcpu int
	c.p.Get(&consumers, `SELECT COUNT(*) FROM consumers`)
	c.p.Get(&vcpu, `SELECT COALESCE(SUM(used), 0) FROM allocations WHERE resource_class_id = (SELECT id FROM resource_classes WHERE name = 'VCPU')`)
	if consumers != codes[0] {
		t.Errorf("%d claims succeeded but %d consumers hold allocations", codes[0], consumers)
	}
	if codes[0]+codes[2] != racers*each {
		t.Errorf("exit codes %v", codes)
	}
	if vcpu != 128 {
		t.Errorf("%d of 128 VCPU claimed with %d VCPU claims asked: room left unclaimed", vcpu, racers*each/2)
	}
	t.Logf("%d claims succeeded, %d refused; VCPU allocated %d of 128", codes[0], codes[2], vcpu)
}

// TestClaimsCreateAPIBackend runs the same claims through the real
// Placement-api (--os-endpoint) on one copy and on the database on another:
// same answers, same exit codes, same rows (allocations and generations).
func TestClaimsCreateAPIBackend(t *testing.T) {
	t.Parallel()
	viaAPI, viaDB := newMySQLCloud(t), newMySQLCloud(t)
	url := testdb.PlacementAPI(t, viaAPI.args[3]) // args: --cell-db URL --placement-db URL
	apiArgs := []string{"--os-endpoint", url, "--os-token", "admin", "--cell-db", viaAPI.args[1]}
	steps := []struct {
		args []string
		code int
	}{
		{[]string{"claims", "create", "--consumer", cu(1), "--project", "p1", "--user", "u1", "--resources", "VCPU:1,MEMORY_MB:512", "--host", "node1"}, 0},
		{[]string{"claims", "create", "--consumer", cu(1), "--project", "p1", "--user", "u1", "--resources", "VCPU:1", "--host", "node1"}, 2},
		{[]string{"claims", "create", "--consumer", cu(2), "--project", "p2", "--user", "u2", "--resources", "VCPU:4", "--host", "node1"}, 2},
		{[]string{"claims", "create", "--consumer", cu(3), "--project", "p2", "--user", "u2", "--resources", "VCPU:3,DISK_GB:100", "--host", "node1"}, 0},
		{[]string{"claims", "release", cu(1)}, 0},
		{[]string{"claims", "release", cu(1)}, 4},
		// One consumer however its uuid is spelt, on both backends.
		{[]string{"claims", "create", "--consumer", strings.ToUpper(strings.ReplaceAll(cu(4), "-", "")), "--project", "p4", "--user", "u4", "--resources", "VCPU:1", "--host", "node1"}, 0},
		{[]string{"claims", "create", "--consumer", cu(4), "--project", "p4", "--user", "u4", "--resources", "VCPU:1", "--host", "node1"}, 2},
		{[]string{"claims", "release", strings.ToUpper(cu(4))}, 0},
		// Placement's limits, checked before any request (the API answered
		// 400 to each of ten attempts; the database said MySQL 1406).
		{[]string{"claims", "create", "--consumer", cu(5), "--project", strings.Repeat("p", 300), "--user", "u5", "--resources", "VCPU:1"}, 127},
		{[]string{"claims", "create", "--consumer", cu(5), "--project", "p5", "--user", strings.Repeat("u", 256), "--resources", "VCPU:1"}, 127},
	}
	for _, st := range steps {
		aOut, aErr, aCode := cmdtest.Rpctl(t, append(append([]string{}, apiArgs...), st.args...)...)
		dOut, dErr, dCode := cmdtest.Rpctl(t, append(append([]string{}, viaDB.args...), st.args...)...)
		if aCode != st.code || dCode != st.code {
			t.Fatalf("%v: exit API %d, database %d, want %d\nAPI: %s%s\ndatabase: %s%s", st.args, aCode, dCode, st.code, aOut, aErr, dOut, dErr)
		}
		if a, d := viaAPI.dump(t), viaDB.dump(t); a != d {
			t.Fatalf("%v: the rows differ:\n%s", st.args, lineDiff(d, a))
		}
	}
}
