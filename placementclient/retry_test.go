package placementclient

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestRetries: a read cut off in transit is sent again; a write cut off
// after it was sent is not (it may have been applied), and says so; a
// write whose connection could not even be made is sent again.
func TestRetries(t *testing.T) {
	var calls atomic.Int32
	var dropNext atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if r.URL.Path == "/" {
			w.Write([]byte(`{"versions":[{"id":"v1.0","min_version":"1.0","max_version":"1.39"}]}`))
			return
		}
		if dropNext.Add(-1) >= 0 {
			// Hang up without an answer, as a crashed proxy would.
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
			return
		}
		w.Write([]byte(`{"resource_providers": []}`))
	}))
	defer srv.Close()
	ctx := context.Background()
	c, err := New(ctx, Config{Endpoint: srv.URL, Retries: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		method    string
		drop      int32
		wantCalls int32
		wantErr   bool
		unknown   bool
	}{
		{"read retried", http.MethodGet, 1, 2, false, false},
		{"read gives up after retries", http.MethodGet, 5, 3, true, false},
		{"write never repeated", http.MethodPut, 1, 1, true, true},
		{"post never repeated", http.MethodPost, 1, 1, true, true},
		{"write that got through", http.MethodPut, 0, 1, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls.Store(0)
			dropNext.Store(tc.drop)
			var in any
			if tc.method != http.MethodGet {
				in = map[string]int{"x": 1}
			}
			err := c.do(ctx, tc.method, "/resource_providers", nil, in, nil)
			// net/http itself resends a read once when a kept-alive
			// connection turns out dead, so reads may be seen more often;
			// writes exactly as often as wanted.
			if got := calls.Load(); got != tc.wantCalls && (tc.method != http.MethodGet || got < tc.wantCalls) {
				t.Errorf("server saw %d requests, want %d", got, tc.wantCalls)
			}
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v", err)
			}
			var ou *OutcomeUnknownError
			if errors.As(err, &ou) != tc.unknown {
				t.Errorf("OutcomeUnknownError: %v", err)
			}
		})
	}
	// A refused connection never carried the request: writes are retried
	// too, and the error names the connection failure.
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	dead := "http://" + l.Addr().String()
	l.Close()
	c.base.Host = dead[len("http://"):]
	err = c.do(ctx, http.MethodPut, "/x", nil, map[string]int{}, nil)
	var ou *OutcomeUnknownError
	if err == nil || errors.As(err, &ou) || !neverSent(err) {
		t.Fatalf("refused write: %v", err)
	}
}

// TestAnswersAfterAWrite: an answer that can follow an applied write is
// never reported as a refusal. A 5xx to a write says it may or may not have
// been applied (and is not repeated); a success with an unreadable body
// says the write was applied; a 5xx to a read, or a 4xx to a write, is
// what it says.
func TestAnswersAfterAWrite(t *testing.T) {
	var calls atomic.Int32
	var status atomic.Int32
	var body atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/" {
			w.Write([]byte(`{"versions":[{"id":"v1.0","min_version":"1.0","max_version":"1.39"}]}`))
			return
		}
		calls.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(int(status.Load()))
		w.Write([]byte(body.Load().(string)))
	}))
	defer srv.Close()
	ctx := context.Background()
	c, err := New(ctx, Config{Endpoint: srv.URL, Retries: 2})
	if err != nil {
		t.Fatal(err)
	}
	const apiErr = `{"errors": [{"status": 500, "title": "Internal Server Error", "detail": "boom"}]}`
	for _, tc := range []struct {
		name, method string
		status       int
		body, want   string
		unknown      bool
		applied      bool
	}{
		{"5xx after a write", http.MethodPut, 500, apiErr, "may or may not have been applied", true, false},
		{"502 after a post", http.MethodPost, 502, "<html>bad gateway</html>", "may or may not have been applied", true, false},
		{"200 unreadable after a write", http.MethodPut, 200, `{"resource_provider_generation": `, "so the write was applied, but the answer is unreadable", false, true},
		{"5xx to a read", http.MethodGet, 500, apiErr, "boom", false, false},
		{"409 to a write", http.MethodPut, 409, `{"errors": [{"status": 409, "title": "Conflict", "detail": "conflict"}]}`, "conflict", false, false},
		{"200 unreadable to a read", http.MethodGet, 200, `{"x": `, "unreadable answer", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls.Store(0)
			status.Store(int32(tc.status))
			body.Store(tc.body)
			var in, out any
			if tc.method != http.MethodGet {
				in = map[string]int{"x": 1}
			}
			out = &map[string]any{}
			err := c.do(ctx, tc.method, "/resource_providers/x/inventories", nil, in, out)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
			var ou *OutcomeUnknownError
			var au *AppliedUnreadableError
			if errors.As(err, &ou) != tc.unknown || errors.As(err, &au) != tc.applied {
				t.Errorf("err %T %v: unknown %v, applied %v", err, err, tc.unknown, tc.applied)
			}
			if tc.method != http.MethodGet && calls.Load() != 1 {
				t.Errorf("the write was sent %d times", calls.Load())
			}
		})
	}
}

// TestDeadlockRetries: a write that placement-api answers with a 500 naming
// a deadlock (1213) was rolled back, and is sent again when it carries a
// generation (a repeat of an applied write would be a 409), up to 6 tries
// in all; a write without a generation, and any other 500, are not.
func TestDeadlockRetries(t *testing.T) {
	saved := deadlockBackoff
	deadlockBackoff = func(int) time.Duration { return 0 }
	t.Cleanup(func() { deadlockBackoff = saved })
	const deadlock = `{"errors": [{"status": 500, "title": "Internal Server Error", "detail": "The server has either erred or is incapable of performing the requested operation.\n\n (pymysql.err.OperationalError) (1213, 'Deadlock found when trying to get lock; try restarting transaction')"}]}`
	const wsrep = `{"errors": [{"status": 500, "title": "Internal Server Error", "detail": "(pymysql.err.OperationalError) (1213, 'WSREP detected deadlock/conflict and aborted the transaction. Try restarting the transaction')"}]}`
	const other = `{"errors": [{"status": 500, "title": "Internal Server Error", "detail": "(pymysql.err.OperationalError) (2013, 'Lost connection to MySQL server during query')"}]}`
	const conflict = `{"errors": [{"status": 409, "title": "Conflict", "detail": "consumer generation conflict", "code": "placement.concurrent_update"}]}`
	withGen := map[string]any{"allocations": map[string]any{}, "consumer_generation": nil}
	withRPGen := map[string]any{"inventories": map[string]any{}, "resource_provider_generation": 3}
	noGen := map[string]any{"name": "cn1"}
	type answer struct {
		status int
		body   string
	}
	for _, tc := range []struct {
		name    string
		in      any
		answers []answer // then 204
		calls   int32
		want    string // "" : success
	}{
		{"consumer generation, two deadlocks", withGen, []answer{{500, deadlock}, {500, wsrep}}, 3, ""},
		{"provider generation, one deadlock", withRPGen, []answer{{500, deadlock}}, 2, ""},
		{"deadlock on every try", withGen, []answer{{500, deadlock}, {500, deadlock}, {500, deadlock}, {500, deadlock}, {500, deadlock}, {500, deadlock}, {500, deadlock}}, 6, "may or may not have been applied"},
		{"deadlock, then a conflict", withGen, []answer{{500, deadlock}, {409, conflict}}, 2, "consumer generation conflict"},
		{"no generation", noGen, []answer{{500, deadlock}}, 1, "may or may not have been applied"},
		{"another server error", withGen, []answer{{500, other}}, 1, "may or may not have been applied"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var calls atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/" {
					w.Write([]byte(`{"versions":[{"id":"v1.0","min_version":"1.0","max_version":"1.39"}]}`))
					return
				}
				n := int(calls.Add(1))
				if n > len(tc.answers) {
					w.WriteHeader(http.StatusNoContent)
					return
				}
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(tc.answers[n-1].status)
				w.Write([]byte(tc.answers[n-1].body))
			}))
			defer srv.Close()
			ctx := context.Background()
			c, err := New(ctx, Config{Endpoint: srv.URL, Retries: 2})
			if err != nil {
				t.Fatal(err)
			}
			err = c.do(ctx, http.MethodPut, "/allocations/x", nil, tc.in, nil)
			if tc.want == "" && err != nil {
				t.Errorf("err = %v, want success", err)
			}
			if tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
			if calls.Load() != tc.calls {
				t.Errorf("the write was sent %d times, want %d", calls.Load(), tc.calls)
			}
		})
	}
}
