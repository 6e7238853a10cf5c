// Package exporter serves rpctl's metrics over HTTP: /metrics and /healthz.
// Collections run in the background every interval, never inside a
// scrape. The page is rendered and gzipped when a collection is published,
// so a scrape only copies bytes: at 10,000 hosts the page is tens of
// megabytes, which encoding per scrape would take seconds over. The
// exporter's own metrics are client_golang's (a registry, gauges, a
// counter, its text encoder).
//
// Only the rpctl-exporter binary imports this package: client_golang
// registers its default collectors at package init, which every rpctl
// command would otherwise pay (rpctl exporter execs rpctl-exporter).
package exporter

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"

	"github.com/rpctl/rpctl/internal/promtext"
)

// page is /metrics as published: the text format, and gzipped.
type page struct {
	text, gz []byte
}

// Server is a running exporter.
type Server struct {
	o    promtext.ServeOptions
	last atomic.Pointer[page]
	// families is the last collection's, for the pages published until
	// the next one (the loop's goroutine only).
	families []*promtext.Family

	self         *prometheus.Registry
	lastSuccess  prometheus.Gauge
	duration     prometheus.Gauge
	errorsByPart *prometheus.GaugeVec
	partSeconds  *prometheus.GaugeVec
	runs         prometheus.Counter
	// ready is closed after the first collection, for /healthz.
	ready chan struct{}
}

// Serve collects now and every o.Interval, serves o.Listener until ctx is
// done, then shuts the HTTP server down (in-flight scrapes finish) and
// waits for the running collection to stop.
func Serve(ctx context.Context, o promtext.ServeOptions) error {
	if o.Interval <= 0 {
		return fmt.Errorf("the interval must be positive, got %s", o.Interval)
	}
	s := newServer(o)
	mux := http.NewServeMux()
	mux.HandleFunc("/metrics", s.metrics)
	mux.HandleFunc("/healthz", s.healthz)
	srv := newHTTPServer(o, mux)

	loopDone := make(chan struct{})
	go func() {
		defer close(loopDone)
		s.loop(ctx)
	}()
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(o.Listener) }()
	var err error
	select {
	case <-ctx.Done():
	case err = <-serveErr:
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if serr := srv.Shutdown(shutdown); serr != nil && err == nil {
		err = serr
	}
	<-loopDone
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// newHTTPServer is the exporter's HTTP server: a request's header within
// 10 s, and a keep-alive connection closed after o.IdleTimeout
// (promtext.DefaultIdleTimeout) without a request.
func newHTTPServer(o promtext.ServeOptions, h http.Handler) *http.Server {
	idle := o.IdleTimeout
	if idle <= 0 {
		idle = promtext.DefaultIdleTimeout
	}
	return &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: idle}
}

func newServer(o promtext.ServeOptions) *Server {
	s := &Server{o: o, self: prometheus.NewRegistry(), ready: make(chan struct{})}
	s.lastSuccess = prometheus.NewGauge(prometheus.GaugeOpts{Name: "rpctl_exporter_last_success_timestamp_seconds",
		Help: "When the last collection without an error ended (Unix time); 0 before the first."})
	s.duration = prometheus.NewGauge(prometheus.GaugeOpts{Name: "rpctl_exporter_collect_duration_seconds",
		Help: "How long the last collection took."})
	s.errorsByPart = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "rpctl_exporter_collect_errors",
		Help: "Errors of the last collection per part (capacity, status, audit); that part's metrics are missing from it."}, []string{"part"})
	s.partSeconds = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "rpctl_exporter_collect_part_duration_seconds",
		Help: "How long each part of the last collection took."}, []string{"part"})
	s.runs = prometheus.NewCounter(prometheus.CounterOpts{Name: "rpctl_exporter_collections_total", Help: "Collections run."})
	s.self.MustRegister(s.lastSuccess, s.duration, s.errorsByPart, s.partSeconds, s.runs)
	if err := s.publish(); err != nil {
		s.logf("render /metrics: %v", err)
	}
	return s
}

// loop collects at once, then every interval; a collection slower than the
// interval is followed by the next one straight away.
func (s *Server) loop(ctx context.Context) {
	t := time.NewTicker(s.o.Interval)
	defer t.Stop()
	for {
		s.collect(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Parts reports errors under; a part without an error this run reads 0.
var parts = []string{"capacity", "status", "audit"}

func (s *Server) collect(ctx context.Context) {
	start := time.Now()
	run := s.o.Collect(ctx)
	if ctx.Err() != nil {
		return // stopping: a cut-short run is not published
	}
	fams := run.Families
	if err := check(fams); err != nil {
		run.Errors = append(run.Errors, promtext.PartError{Part: "check", Err: err})
		fams = nil
	}
	s.families = fams
	for part, d := range run.Durations {
		s.partSeconds.WithLabelValues(part).Set(d.Seconds())
	}
	took := time.Since(start)
	s.runs.Inc()
	s.duration.Set(took.Seconds())
	for _, p := range parts {
		s.errorsByPart.WithLabelValues(p).Set(0)
	}
	for _, e := range run.Errors {
		s.errorsByPart.WithLabelValues(e.Part).Add(1)
		s.logf("collection: %s: %v", e.Part, e.Err)
	}
	if len(run.Errors) == 0 {
		s.lastSuccess.Set(float64(time.Now().UnixNano()) / 1e9)
	}
	if err := s.publish(); err != nil {
		s.logf("render /metrics: %v", err)
	}
	s.logf("collection: %d families in %s, %d errors", len(fams), took.Round(time.Millisecond), len(run.Errors))
	select {
	case <-s.ready:
	default:
		close(s.ready)
	}
}

func (s *Server) logf(format string, args ...any) {
	if s.o.Log != nil {
		fmt.Fprintf(s.o.Log, format+"\n", args...)
	}
}

// publish renders the page in the text format 0.0.4, and its gzip: the
// exporter's own metrics from client_golang's registry, then the last
// collection. The buffers start at the last page's sizes: growing a
// buffer of tens of megabytes by doubling allocates and clears twice the
// page, work that competes with the scrapes.
func (s *Server) publish() error {
	own, err := s.self.Gather()
	if err != nil {
		return err
	}
	var textCap, gzCap int
	if last := s.last.Load(); last != nil {
		textCap, gzCap = len(last.text)+len(last.text)/8, len(last.gz)+len(last.gz)/8
	}
	text := bytes.NewBuffer(make([]byte, 0, textCap))
	enc := expfmt.NewEncoder(text, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, f := range own {
		if err := enc.Encode(f); err != nil {
			return err
		}
	}
	// The collection is written by rpctl's own text writer: converting
	// hundreds of thousands of series to client_golang's protobuf
	// families first took a third of a 10,000-host collection.
	p := &page{text: promtext.AppendText(text.Bytes(), s.families)}
	gz := bytes.NewBuffer(make([]byte, 0, gzCap))
	zw, err := gzip.NewWriterLevel(gz, gzip.BestSpeed)
	if err != nil {
		return err
	}
	if _, err := zw.Write(p.text); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	p.gz = gz.Bytes()
	s.last.Store(p)
	return nil
}

// metrics serves the last published page as it is.
func (s *Server) metrics(w http.ResponseWriter, r *http.Request) {
	p := s.last.Load()
	w.Header().Set("Content-Type", string(expfmt.NewFormat(expfmt.TypeTextPlain)))
	body := p.text
	if acceptsGzip(r.Header.Get("Accept-Encoding")) {
		w.Header().Set("Content-Encoding", "gzip")
		body = p.gz
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.Write(body)
}

func acceptsGzip(h string) bool {
	for _, part := range strings.Split(h, ",") {
		enc, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(enc), "gzip") && strings.ReplaceAll(params, " ", "") != "q=0" {
			return true
		}
	}
	return false
}

// healthz answers 200 once a collection has been published, 503 before.
func (s *Server) healthz(w http.ResponseWriter, _ *http.Request) {
	select {
	case <-s.ready:
		fmt.Fprintln(w, "ok")
	default:
		http.Error(w, "no collection yet", http.StatusServiceUnavailable)
	}
}

// check rejects what would make the page invalid: a family named twice,
// a sample without a value for each label. (Providers' and aggregates'
// names and UUIDs are unique in Placement, so no series repeats.)
func check(fams []*promtext.Family) error {
	var errs []error
	seen := map[string]bool{}
	for _, f := range fams {
		if seen[f.Name] {
			errs = append(errs, fmt.Errorf("family %s twice", f.Name))
		}
		seen[f.Name] = true
		for _, smp := range f.Samples {
			if len(smp.Values) != len(f.Labels) {
				errs = append(errs, fmt.Errorf("%s: %d label values for %d labels", f.Name, len(smp.Values), len(f.Labels)))
				break
			}
		}
	}
	return errors.Join(errs...)
}
