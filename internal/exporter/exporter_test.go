package exporter

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rpctl/rpctl/internal/promtext"
)

func fam(v float64) *promtext.Family {
	f := &promtext.Family{Name: "rpctl_test_value", Help: "h", Type: promtext.Gauge, Labels: []string{"k"}}
	f.Add(v, "x")
	return f
}

func get(t testing.TB, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// TestScrapeDuringCollection: the second collection blocks until the test
// has scraped; the scrape answers with the first collection's value, so it
// never waits for (or runs) a collection.
func TestScrapeDuringCollection(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan int, 10)
	release := make(chan struct{})
	n := 0
	collect := func(ctx context.Context) promtext.Run {
		n++
		started <- n
		if n == 2 {
			select {
			case <-release:
			case <-ctx.Done():
			}
			return promtext.Run{Families: []*promtext.Family{fam(2)}, Errors: []promtext.PartError{{Part: "status", Err: errors.New("cell1 unreachable")}}}
		}
		if n >= 3 {
			// Held until the stop, so that the scrapes see the second.
			<-ctx.Done()
		}
		return promtext.Run{Families: []*promtext.Family{fam(float64(n))}}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, promtext.ServeOptions{Listener: ln, Interval: time.Millisecond, Collect: collect})
	}()
	base := "http://" + ln.Addr().String()
	<-started // the first collection runs
	<-started // the second has started: the first is published
	code, body := get(t, base+"/metrics")
	if code != 200 || !strings.Contains(body, `rpctl_test_value{k="x"} 1`) {
		t.Fatalf("scrape during the second collection: %d\n%s", code, body)
	}
	if !strings.Contains(body, "rpctl_exporter_last_success_timestamp_seconds") || !strings.Contains(body, "rpctl_exporter_collections_total 1") {
		t.Errorf("own metrics missing:\n%s", body)
	}
	if code, _ := get(t, base+"/healthz"); code != 200 {
		t.Errorf("/healthz %d after a collection", code)
	}
	close(release)
	<-started // the third has started: the second is published
	_, body = get(t, base+"/metrics")
	for _, want := range []string{`rpctl_test_value{k="x"} 2`, `rpctl_exporter_collect_errors{part="status"} 1`, `rpctl_exporter_collect_errors{part="capacity"} 0`} {
		if !strings.Contains(body, want) {
			t.Errorf("after the failed part: no %q in\n%s", want, body)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Serve after cancel: %v", err)
	}
	if _, err := http.Get(base + "/healthz"); err == nil {
		t.Error("still serving after the stop")
	}
}

func TestHealthzBeforeFirstCollection(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, promtext.ServeOptions{Listener: ln, Interval: time.Hour, Collect: func(ctx context.Context) promtext.Run {
			<-release
			return promtext.Run{}
		}})
	}()
	if code, _ := get(t, "http://"+ln.Addr().String()+"/healthz"); code != http.StatusServiceUnavailable {
		t.Errorf("/healthz before any collection: %d, want 503", code)
	}
	close(release)
	cancel()
	if err := <-done; err != nil {
		t.Error(err)
	}
}

func TestCheckRejects(t *testing.T) {
	short := &promtext.Family{Name: "b", Help: "h", Type: promtext.Gauge, Labels: []string{"k", "l"}}
	short.Add(1, "x")
	for _, tc := range []struct {
		name string
		fams []*promtext.Family
		want string
	}{
		{"label count", []*promtext.Family{short}, "1 label values for 2 labels"},
		{"family twice", []*promtext.Family{fam(1), fam(2)}, "family rpctl_test_value twice"},
	} {
		if err := check(tc.fams); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	if err := check([]*promtext.Family{fam(1), {Name: "c", Help: "h", Type: promtext.Gauge}}); err != nil {
		t.Errorf("valid families: %v", err)
	}
}

// TestIdleConnectionsClosed (issue 37 row 8): a keep-alive connection that
// sends no request after its scrape is closed by the server after the idle
// timeout (the default, promtext.DefaultIdleTimeout, is documented in
// docs/exporter.md), while a connection that keeps asking is served.
func TestIdleConnectionsClosed(t *testing.T) {
	if got := newHTTPServer(promtext.ServeOptions{}, nil).IdleTimeout; got != promtext.DefaultIdleTimeout {
		t.Errorf("default idle timeout %s, want %s", got, promtext.DefaultIdleTimeout)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, promtext.ServeOptions{Listener: ln, Interval: time.Hour, IdleTimeout: 50 * time.Millisecond,
			Collect: func(context.Context) promtext.Run { return promtext.Run{Families: []*promtext.Family{fam(1)}} }})
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	conns := make([]net.Conn, 20)
	for i := range conns {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		conns[i] = c
	}
	// Each connection gets its answer, then nothing more is asked: the
	// server closes it (the read ends in EOF, not in the test's deadline).
	for i, c := range conns {
		c.SetReadDeadline(time.Now().Add(time.Minute))
		b, err := io.ReadAll(c)
		if err != nil {
			t.Fatalf("connection %d: %v after %q (not closed by the server)", i, err, b)
		}
		if !strings.HasPrefix(string(b), "HTTP/1.1 ") {
			t.Errorf("connection %d: %q", i, b)
		}
	}
}
