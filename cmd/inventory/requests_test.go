package inventory_test

import (
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/rpctl/rpctl/internal/placementtest"
	"github.com/rpctl/rpctl/internal/testdb"
)

// requestCounter is a reverse proxy in front of placement-api that counts
// the requests passing through it, by method and path shape (uuids as
// {uuid}, query keys sorted), and the client connections opened to it.
type requestCounter struct {
	srv   *httptest.Server
	mu    sync.Mutex
	reqs  map[string]int
	conns int
}

func newRequestCounter(t *testing.T, base string) *requestCounter {
	t.Helper()
	target, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	uuidRE := regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	rc := &requestCounter{reqs: map[string]int{}}
	proxy := httputil.NewSingleHostReverseProxy(target)
	rc.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		shape := r.Method + " " + uuidRE.ReplaceAllString(r.URL.Path, "{uuid}")
		if q := r.URL.Query(); len(q) > 0 {
			var keys []string
			for _, k := range slices.Sorted(maps.Keys(q)) {
				keys = append(keys, k+"="+uuidRE.ReplaceAllString(strings.Join(q[k], ","), "{uuid}"))
			}
			shape += "?" + strings.Join(keys, "&")
		}
		rc.mu.Lock()
		rc.reqs[shape]++
		rc.mu.Unlock()
		proxy.ServeHTTP(w, r)
	}))
	rc.srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			rc.mu.Lock()
			rc.conns++
			rc.mu.Unlock()
		}
	}
	rc.srv.Start()
	t.Cleanup(rc.srv.Close)
	return rc
}

// take returns what was counted since the last take, and starts again.
func (rc *requestCounter) take() (map[string]int, int) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	reqs, conns := rc.reqs, rc.conns
	rc.reqs, rc.conns = map[string]int{}, 0
	return reqs, conns
}

// TestInventorySetAggregateRequests checks, against the real placement-api,
// the requests `inventory set --aggregate` documents (docs/adhoc-edits.md,
// its --help): one GET / and one member_of listing per run, per changed
// provider a GET and a PUT of its inventories (osc's inventory set --amend
// makes the same two), an unchanged one the GET alone, usages only where
// a change removes a class or leaves a provider without room, one
// listing per class lowered, and no more connections than --parallel.
func TestInventorySetAggregateRequests(t *testing.T) {
	testdb.RequirePython(t, "placement")
	p := placementtest.New(t)
	const n = 6
	// Providers 0..n-1 in the aggregate, with VCPU 8 and MEMORY_MB 4096;
	// provider 0 has 6 VCPU allocated.
	var uuids []string
	for i := range n {
		u := fmt.Sprintf("%08d-0000-4000-8000-000000000000", i+1)
		uuids = append(uuids, u)
		for _, req := range []struct{ method, path, body string }{
			{"POST", "/resource_providers", fmt.Sprintf(`{"name": "agg-host-%d", "uuid": %q}`, i, u)},
			{"PUT", "/resource_providers/" + u + "/inventories", `{"resource_provider_generation": 0, "inventories": {"VCPU": {"total": 8}, "MEMORY_MB": {"total": 4096}}}`},
			{"PUT", "/resource_providers/" + u + "/aggregates", fmt.Sprintf(`{"resource_provider_generation": 1, "aggregates": [%q]}`, tAgg)},
		} {
			if code, body := testdb.PlacementDo(t, req.method, p.Base, req.path, "1.39", req.body); code >= 300 {
				t.Fatalf("%s %s: %d %s", req.method, req.path, code, body)
			}
		}
	}
	if code, body := testdb.PlacementDo(t, "PUT", p.Base, "/allocations/"+tC1, "1.39",
		fmt.Sprintf(`{"allocations": {%q: {"resources": {"VCPU": 6}}}, "project_id": %q, "user_id": %q, "consumer_generation": null, "consumer_type": "INSTANCE"}`, uuids[0], tC1, tC1)); code != 204 {
		t.Fatalf("allocate: %d %s", code, body)
	}
	rc := newRequestCounter(t, p.Base)
	flags := []string{"--os-endpoint", rc.srv.URL, "--os-token", "admin"}
	const (
		version  = "GET /"
		members  = "GET /resource_providers?member_of={uuid}"
		getInv   = "GET /resource_providers/{uuid}/inventories"
		putInv   = "PUT /resource_providers/{uuid}/inventories"
		usages   = "GET /resource_providers/{uuid}/usages"
		vcpuRoom = "GET /resource_providers?member_of={uuid}&resources=VCPU:1"
	)
	for _, c := range []struct {
		name string
		edit []string
		want map[string]int
	}{
		// Raising capacity: no usage, no listing after.
		{"raise", []string{"VCPU:allocation_ratio=2.0"}, map[string]int{version: 1, members: 1, getInv: n, putInv: n}},
		// The same again: every provider read, none written.
		{"unchanged", []string{"VCPU:allocation_ratio=2.0"}, map[string]int{version: 1, members: 1, getInv: n}},
		// Lowering capacity on every provider (16 -> 12 VCPU): one
		// listing of those with room after the writes; provider 0 (6 used)
		// keeps room, so no usages are read.
		{"lower", []string{"VCPU:reserved=2"}, map[string]int{version: 1, members: 1, getInv: n, putInv: n, vcpuRoom: 1}},
		// Lowering so far that provider 0 is left without room (8 - 2 = 6
		// VCPU, 6 used): its usages are read, for the warning, and only its.
		{"full", []string{"VCPU:allocation_ratio=1.0"}, map[string]int{version: 1, members: 1, getInv: n, putInv: n, vcpuRoom: 1, usages: 1}},
		// Removing a class reads every provider's usage before any write.
		{"remove", []string{"VCPU=8", "VCPU:reserved=2"}, map[string]int{version: 1, members: 1, getInv: n, putInv: n, usages: n}},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := append(append(slices.Clone(flags), "inventory", "set", tAgg, "--aggregate", "--yes"), c.edit...)
			if c.name != "remove" {
				args = append(args, "--amend")
			}
			out, errOut, code := run(t, "", false, args...)
			if code != 0 {
				t.Fatalf("exit %d\n%s%s", code, out, errOut)
			}
			got, conns := rc.take()
			if !maps.Equal(got, c.want) {
				t.Errorf("requests:\n got %v\nwant %v\n%s%s", got, c.want, out, errOut)
			}
			if conns > 2 {
				t.Errorf("%d connections opened, want at most --parallel's default of 2", conns)
			}
		})
	}
}
