package allocation_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/cmd/internal/cmdtest"
	"github.com/rpctl/rpctl/internal/placementtest"
	"github.com/rpctl/rpctl/internal/testdb"
)

// TestAllocationConsumerType (issue 21): allocation show prints
// consumer_type as osc does from microversion 1.38, the same rows from
// the placement-api and from the Placement database, whichever backend
// wrote the consumer; set takes --consumer-type, keeps the consumer's type
// without it, and refuses a type Placement would refuse.
func TestAllocationConsumerType(t *testing.T) {
	p := placementtest.New(t)
	api := []string{"--os-endpoint", p.Base, "--os-token", "admin"}
	db := []string{"--placement-db", p.URL}
	const (
		rp   = "11111111-1111-4111-8111-111111111111"
		c1   = "c1c1c1c1-cccc-4ccc-8ccc-cccccccccccc"
		c2   = "c2c2c2c2-cccc-4ccc-8ccc-cccccccccccc"
		c3   = "c3c3c3c3-cccc-4ccc-8ccc-cccccccccccc"
		proj = "dddddddd-dddd-4ddd-8ddd-dddddddddddd"
	)
	run := func(backend []string, args ...string) (string, string, int) {
		t.Helper()
		return cmdtest.Rpctl(t, append(append([]string{}, backend...), args...)...)
	}
	for _, line := range [][]string{
		{"provider", "create", "cmp", "--uuid", rp},
		{"inventory", "set", rp, "VCPU=64"},
	} {
		if _, errOut, code := run(api, line...); code != 0 {
			t.Fatalf("%v: exit %d: %s", line, code, errOut)
		}
	}
	// c3 is written without a type, as before microversion 1.38.
	if code, body := testdb.PlacementDo(t, "PUT", p.Base, "/allocations/"+c3, "1.28",
		fmt.Sprintf(`{"allocations": {%q: {"resources": {"VCPU": 1}}}, "project_id": %q, "user_id": %q, "consumer_generation": null}`, rp, proj, proj)); code != 204 {
		t.Fatalf("PUT /allocations/%s: %d %s", c3, code, body)
	}
	set := func(backend []string, consumer string, extra ...string) {
		t.Helper()
		args := append([]string{"allocation", "set", consumer, "--allocation", "rp=" + rp + ",VCPU=2", "--project-id", proj, "--user-id", proj}, extra...)
		if _, errOut, code := run(backend, args...); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
	}
	// show is the consumer's one row as both backends print it in json;
	// they must agree.
	show := func(consumer string) map[string]any {
		t.Helper()
		var rows [2][]map[string]any
		for i, backend := range [][]string{api, db} {
			out, errOut, code := run(backend, "-f", "json", "allocation", "show", consumer)
			if code != 0 {
				t.Fatalf("allocation show %s: exit %d: %s", consumer, code, errOut)
			}
			if err := json.Unmarshal([]byte(out), &rows[i]); err != nil || len(rows[i]) != 1 {
				t.Fatalf("allocation show %s: %v %s", consumer, err, out)
			}
		}
		a, _ := json.Marshal(rows[0])
		b, _ := json.Marshal(rows[1])
		if string(a) != string(b) {
			t.Errorf("allocation show %s: the API shows %s, the database %s", consumer, a, b)
		}
		return rows[0][0]
	}
	set(api, c1, "--consumer-type", "MIGRATION")
	set(db, c2, "--consumer-type", "MIGRATION")
	for _, tc := range []struct {
		consumer, want string
	}{{c1, "MIGRATION"}, {c2, "MIGRATION"}, {c3, "unknown"}} {
		if got := show(tc.consumer)["consumer_type"]; got != tc.want {
			t.Errorf("%s: consumer_type %v, want %s", tc.consumer, got, tc.want)
		}
	}
	// Without --consumer-type the consumer keeps its type, on both
	// backends; one without a type becomes INSTANCE (Placement 1.38
	// requires one).
	set(db, c1)
	set(api, c2)
	set(db, c3)
	for _, tc := range []struct {
		consumer, want string
	}{{c1, "MIGRATION"}, {c2, "MIGRATION"}, {c3, "INSTANCE"}} {
		if got := show(tc.consumer)["consumer_type"]; got != tc.want {
			t.Errorf("%s after a set without --consumer-type: consumer_type %v, want %s", tc.consumer, got, tc.want)
		}
	}
	// Below 1.38 the column goes, as in osc.
	out, errOut, code := run(api, "--os-placement-api-version", "1.37", "-f", "csv", "allocation", "show", c1)
	if code != 0 || !strings.HasPrefix(out, `"resource_provider","generation","resources","project_id","user_id"`+"\n") {
		t.Errorf("allocation show at 1.37: exit %d %s\n%s", code, errOut, out)
	}
	// A type Placement refuses is refused before anything is written.
	for _, backend := range [][]string{api, db} {
		_, errOut, code := run(backend, "allocation", "set", c1, "--allocation", "rp="+rp+",VCPU=9", "--consumer-type", "migration")
		if code != 2 || !strings.Contains(errOut, `--consumer-type "migration"`) {
			t.Errorf("--consumer-type migration: exit %d: %s", code, errOut)
		}
	}
	if got := show(c1)["resources"]; fmt.Sprint(got) != "map[VCPU:2]" {
		t.Errorf("a refused set wrote: %v", got)
	}
}

// TestProviderListOSCFilters (issue 21): provider list takes osc's
// spellings on both backends: --resource CLASS=N, --forbidden T, and comma
// lists read as any of them (--member-of A,B, --required T,U), as
// osc-placement sends them.
func TestProviderListOSCFilters(t *testing.T) {
	p := placementtest.New(t)
	api := []string{"--os-endpoint", p.Base, "--os-token", "admin"}
	const (
		a, b, c = "11111111-1111-4111-8111-111111111111", "22222222-2222-4222-8222-222222222222", "33333333-3333-4333-8333-333333333333"
		agg1    = "aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa"
		agg2    = "bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb"
	)
	for _, line := range [][]string{
		{"provider", "create", "a", "--uuid", a},
		{"provider", "create", "b", "--uuid", b},
		{"provider", "create", "c", "--uuid", c},
		{"inventory", "set", a, "VCPU=4"},
		{"inventory", "set", b, "VCPU=16"},
		{"provider", "trait", "set", a, "HW_CPU_X86_AVX2"},
		{"provider", "trait", "set", b, "HW_CPU_X86_SSE"},
		{"provider", "trait", "set", c, "HW_CPU_X86_SSE", "HW_CPU_X86_AVX2"},
		{"provider", "aggregate", "set", a, agg1},
		{"provider", "aggregate", "set", b, agg2},
	} {
		if _, errOut, code := cmdtest.Rpctl(t, append(append([]string{}, api...), line...)...); code != 0 {
			t.Fatalf("%v: exit %d: %s", line, code, errOut)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--member-of", agg1 + "," + agg2}, "a\nb\n"},
		{[]string{"--member-of", "in:" + agg1 + "," + agg2}, "a\nb\n"},
		{[]string{"--member-of", agg1}, "a\n"},
		{[]string{"--required", "HW_CPU_X86_AVX2,HW_CPU_X86_SSE"}, "a\nb\nc\n"},
		{[]string{"--required", "HW_CPU_X86_AVX2", "--required", "HW_CPU_X86_SSE"}, "c\n"},
		{[]string{"--required", "HW_CPU_X86_AVX2,!HW_CPU_X86_SSE"}, "a\n"},
		{[]string{"--required", "HW_CPU_X86_SSE", "--forbidden", "HW_CPU_X86_AVX2"}, "b\n"},
		{[]string{"--resource", "VCPU=8"}, "b\n"},
		{[]string{"--resources", "VCPU:2", "--resource", "VCPU=8"}, "b\n"},
	} {
		for _, backend := range [][]string{api, {"--placement-db", p.URL}} {
			args := append(append(append([]string{}, backend...), "-f", "value", "-c", "name", "--sort-column", "name", "provider", "list"), tc.args...)
			out, errOut, code := cmdtest.Rpctl(t, args...)
			if code != 0 || out != tc.want {
				t.Errorf("provider list %v (%s): exit %d %s\n%q, want %q", tc.args, backend[0], code, errOut, out, tc.want)
			}
		}
	}
	// Below microversion 1.14 Placement shows no tree, and osc no tree
	// columns; from 1.14 both.
	for _, tc := range []struct{ version, want string }{
		{"1.13", `"uuid","name","generation"` + "\n"},
		{"1.14", `"uuid","name","generation","root_provider_uuid","parent_provider_uuid"` + "\n"},
	} {
		for _, cmd := range [][]string{{"provider", "list", "--name", "a"}, {"provider", "show", a}} {
			out, errOut, code := cmdtest.Rpctl(t, append(append(append([]string{}, api...), "--os-placement-api-version", tc.version, "-f", "csv"), cmd...)...)
			if code != 0 || !strings.HasPrefix(out, tc.want) {
				t.Errorf("%v at %s: exit %d %s\n%s", cmd, tc.version, code, errOut, out)
			}
		}
	}
}

// TestAllocationSetOneConsumerPerUUID (issue 37 row 1): allocation set
// with a consumer uuid in upper case, then in lower case, is one consumer
// (lower case) holding the second allocation, through the placement-api and
// on the Placement database alike.
func TestAllocationSetOneConsumerPerUUID(t *testing.T) {
	p := placementtest.New(t)
	const (
		rp   = "11111111-1111-4111-8111-111111111111"
		proj = "dddddddd-dddd-4ddd-8ddd-dddddddddddd"
	)
	for _, line := range [][]string{{"provider", "create", "cmp", "--uuid", rp}, {"inventory", "set", rp, "VCPU=64"}} {
		if _, errOut, code := cmdtest.Rpctl(t, append([]string{"--placement-db", p.URL}, line...)...); code != 0 {
			t.Fatalf("%v: exit %d: %s", line, code, errOut)
		}
	}
	for i, backend := range [][]string{{"--os-endpoint", p.Base, "--os-token", "admin"}, {"--placement-db", p.URL}} {
		consumer := fmt.Sprintf("eeeeeeee-1111-4000-8000-00000000000%d", i)
		for n, spelling := range []string{strings.ToUpper(consumer), consumer} {
			args := append(append([]string{}, backend...), "allocation", "set", spelling, "--allocation",
				fmt.Sprintf("rp=%s,VCPU=%d", strings.ToUpper(rp), n+1), "--project-id", proj, "--user-id", proj)
			if _, errOut, code := cmdtest.Rpctl(t, args...); code != 0 {
				t.Fatalf("%s: %v: exit %d: %s", backend[0], args, code, errOut)
			}
		}
		code, body := testdb.PlacementGet(t, p.Base, "/resource_providers/"+rp+"/allocations", "1.28")
		var got struct {
			Allocations map[string]struct{ Resources map[string]int64 }
		}
		if err := json.Unmarshal(body, &got); code != 200 || err != nil {
			t.Fatalf("GET allocations: %d %v %s", code, err, body)
		}
		if a, ok := got.Allocations[consumer]; !ok || a.Resources["VCPU"] != 2 || got.Allocations[strings.ToUpper(consumer)].Resources != nil {
			t.Errorf("%s: the provider's allocations %s, want %s alone holding VCPU 2", backend[0], body, consumer)
		}
	}
}

// TestAllocationDelete (issue 39): osc's resource provider allocation
// delete CONSUMER on both backends (one placement-api and its database):
// every allocation of the consumer goes, and its consumer record (GET
// /allocations/{consumer} answers {} afterwards), the provider generation
// stays, nothing is printed; a consumer holding nothing is Placement's 404
// message, exit 2 (osc exits 1).
func TestAllocationDelete(t *testing.T) {
	p := placementtest.New(t)
	const (
		rp1  = "11111111-1111-4111-8111-111111111111"
		rp2  = "22222222-2222-4222-8222-222222222222"
		proj = "dddddddd-dddd-4ddd-8ddd-dddddddddddd"
	)
	db := []string{"--placement-db", p.URL}
	for _, line := range [][]string{{"provider", "create", "cmp1", "--uuid", rp1}, {"provider", "create", "cmp2", "--uuid", rp2},
		{"inventory", "set", rp1, "VCPU=64", "MEMORY_MB=4096"}, {"inventory", "set", rp2, "DISK_GB=100"}} {
		if _, errOut, code := cmdtest.Rpctl(t, append(db, line...)...); code != 0 {
			t.Fatalf("%v: exit %d: %s", line, code, errOut)
		}
	}
	generations := func() string {
		var gens []string
		for _, rp := range []string{rp1, rp2} {
			out, errOut, code := cmdtest.Rpctl(t, append(db, "provider", "show", rp, "-f", "value", "-c", "generation")...)
			if code != 0 {
				t.Fatalf("provider show: exit %d: %s", code, errOut)
			}
			gens = append(gens, strings.TrimSpace(out))
		}
		return strings.Join(gens, " ")
	}
	backends := []struct {
		name  string
		flags []string
	}{{"api", []string{"--os-endpoint", p.Base, "--os-token", "admin"}}, {"database", db}}
	for i, be := range backends {
		t.Run(be.name, func(t *testing.T) {
			consumer := fmt.Sprintf("eeeeeeee-2222-4000-8000-00000000000%d", i)
			other := fmt.Sprintf("eeeeeeee-3333-4000-8000-00000000000%d", i)
			for _, c := range []string{consumer, other} {
				args := append(append([]string{}, db...), "allocation", "set", c, "--allocation", "rp="+rp1+",VCPU=2,MEMORY_MB=512",
					"--allocation", "rp="+rp2+",DISK_GB=10", "--project-id", proj, "--user-id", proj)
				if _, errOut, code := cmdtest.Rpctl(t, args...); code != 0 {
					t.Fatalf("%v: exit %d: %s", args, code, errOut)
				}
			}
			gens := generations()
			for _, st := range []struct {
				name, consumer string
				code           int
				errOut         string
			}{
				{"delete", consumer, 0, ""},
				{"again: nothing held", consumer, 2, "No allocations for consumer '" + consumer + "'"},
				{"upper-case spelling of another consumer", strings.ToUpper(other), 0, ""},
				{"not a uuid", "nope", 2, `consumer "nope" is not a uuid`},
			} {
				out, errOut, code := cmdtest.Rpctl(t, append(append([]string{}, be.flags...), "allocation", "delete", st.consumer)...)
				if code != st.code || out != "" || !strings.Contains(errOut, st.errOut) {
					t.Errorf("%s: allocation delete %s: exit %d, want %d; stdout %q (want none); stderr %q, want it to hold %q", st.name, st.consumer, code, st.code, out, errOut, st.errOut)
				}
			}
			for _, c := range []string{consumer, other} {
				if code, body := testdb.PlacementGet(t, p.Base, "/allocations/"+c, "1.28"); code != 200 || string(body) != `{"allocations": {}}` {
					t.Errorf("GET /allocations/%s afterwards: %d %s, want no allocation", c, code, body)
				}
			}
			if got := generations(); got != gens {
				t.Errorf("provider generations %s after the deletes, want %s (DELETE changes none)", got, gens)
			}
		})
	}
}
