package placementclient

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
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
