package placementclient

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
)

// TestKeepAlivePool: requests in flight at once share one pool of
// keep-alive connections; a connection is opened for each request that
// finds none idle, never one per request. With Go's default of 2 idle
// connections per host, answers beyond two closed theirs and this test saw
// a connection per request, near enough.
func TestKeepAlivePool(t *testing.T) {
	const workers, requests = 8, 400
	var opened atomic.Int32
	var gate sync.WaitGroup // holds answers until all workers are in flight
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/" {
			w.Write([]byte(`{"versions":[{"id":"v1.0","min_version":"1.0","max_version":"1.39"}]}`))
			return
		}
		w.Write([]byte(`{"resource_providers": []}`))
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			opened.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		hc   *http.Client
	}{
		{"default transport", nil},
		// gophercloud hands over a Transport with Go's default pool size.
		{"caller's transport", &http.Client{Transport: &http.Transport{}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := New(ctx, Config{Endpoint: srv.URL, HTTPClient: tc.hc})
			if err != nil {
				t.Fatal(err)
			}
			opened.Store(0)
			next := make(chan int)
			var wg sync.WaitGroup
			gate.Add(workers)
			for range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					first := true
					for range next {
						if err := c.do(ctx, http.MethodGet, "/resource_providers", nil, nil, nil); err != nil {
							t.Error(err)
						}
						if first {
							gate.Done()
							gate.Wait()
							first = false
						}
					}
				}()
			}
			for i := range requests {
				next <- i
			}
			close(next)
			wg.Wait()
			// At most one connection per worker, plus dials that raced an
			// answer freeing one (those join the idle pool and are used).
			if n := opened.Load(); n > 2*workers {
				t.Errorf("%d connections opened for %d requests from %d workers, want at most %d", n, requests, workers, 2*workers)
			}
		})
	}
}
