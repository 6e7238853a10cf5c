// Package placementclient is rpctl's one client of the Placement REST API:
// microversion negotiation, typed errors carrying Placement's own message,
// timeouts, and retries that never send a write twice. Authentication is
// pluggable: a fixed token (noauth2) or a Keystone session (see auth.go).
package placementclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// MaxMicroversion is the newest Placement microversion this client knows
// (Placement 8.0.0's, and osc-placement 4.0.0's newest).
var MaxMicroversion = Version{1, 39}

// DefaultTimeout bounds each HTTP request, like keystoneauth's timeout.
const DefaultTimeout = 60 * time.Second

// Auth supplies the token for each request and refreshes it once when the
// service answers 401.
type Auth interface {
	Token() string
	// Reauthenticate gets a new token after a 401 on the given one; a fixed
	// token returns an error.
	Reauthenticate(ctx context.Context, previous string) error
}

// StaticToken is a fixed token, for noauth2 services (--os-token).
type StaticToken string

// Token returns the token.
func (t StaticToken) Token() string { return string(t) }

// Reauthenticate cannot renew a fixed token.
func (t StaticToken) Reauthenticate(context.Context, string) error {
	return errors.New("the token given with --os-token was refused")
}

// Config describes how to reach a Placement service.
type Config struct {
	// Endpoint is the base URL of the Placement API (from the service
	// catalog or --os-endpoint).
	Endpoint string
	Auth     Auth
	// Microversion pins the version sent with every request; empty
	// negotiates the highest both sides know.
	Microversion string
	// HTTPClient carries TLS settings; nil uses a default transport.
	HTTPClient *http.Client
	Timeout    time.Duration
	// Retries is how often a request that could not be sent (or an
	// idempotent one that failed in transit) is tried again; default 2.
	Retries int
	// Logger receives one debug record per HTTP exchange; nil logs nothing.
	Logger *slog.Logger
}

// Client talks to one Placement service at one microversion.
type Client struct {
	base    *url.URL
	auth    Auth
	http    *http.Client
	retries int
	log     *slog.Logger
	mv      Version
	server  [2]Version
}

// New checks the endpoint, reads the server's version range from GET / and
// settles the microversion.
func New(ctx context.Context, cfg Config) (*Client, error) {
	if cfg.Endpoint == "" {
		return nil, errors.New("no Placement endpoint")
	}
	u, err := url.Parse(strings.TrimRight(cfg.Endpoint, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("invalid Placement endpoint %q: want http(s)://host[:port][/path]", cfg.Endpoint)
	}
	c := &Client{base: u, auth: cfg.Auth, retries: cfg.Retries, log: cfg.Logger}
	if c.auth == nil {
		c.auth = StaticToken("")
	}
	if cfg.Retries == 0 {
		c.retries = 2
	}
	if cfg.Retries < 0 {
		c.retries = 0
	}
	hc := http.Client{}
	if cfg.HTTPClient != nil {
		hc = *cfg.HTTPClient
	}
	hc.Transport = pooled(hc.Transport)
	hc.Timeout = cfg.Timeout
	if hc.Timeout == 0 {
		hc.Timeout = DefaultTimeout
	}
	c.http = &hc
	if err := c.negotiate(ctx, cfg.Microversion); err != nil {
		return nil, err
	}
	return c, nil
}

// idleConnsPerHost is how many keep-alive connections to Placement stay
// open between requests: more than any --parallel an operator uses. Go's
// default is 2, so with more requests in flight every answer beyond two
// closed its connection and the next request paid a new TCP (or TLS)
// handshake.
const idleConnsPerHost = 64

// pooled returns rt with room for idleConnsPerHost keep-alive connections
// (a copy when it had less; a RoundTripper that is not an *http.Transport
// is left as it is).
func pooled(rt http.RoundTripper) http.RoundTripper {
	var t *http.Transport
	switch v := rt.(type) {
	case nil:
		t = http.DefaultTransport.(*http.Transport).Clone()
	case *http.Transport:
		if v.MaxIdleConnsPerHost >= idleConnsPerHost {
			return v
		}
		t = v.Clone()
	default:
		return rt
	}
	t.MaxIdleConnsPerHost = idleConnsPerHost
	if t.MaxIdleConns != 0 {
		t.MaxIdleConns = max(t.MaxIdleConns, idleConnsPerHost)
	}
	return t
}

// Endpoint is the base URL requests go to.
func (c *Client) Endpoint() string { return c.base.String() }

// Microversion is the version every request carries.
func (c *Client) Microversion() Version { return c.mv }

// ServerRange is the server's [min, max] microversion from GET /.
func (c *Client) ServerRange() (min, max Version) { return c.server[0], c.server[1] }

func (c *Client) negotiate(ctx context.Context, want string) error {
	var root struct {
		Versions []struct {
			ID         string `json:"id"`
			MinVersion string `json:"min_version"`
			MaxVersion string `json:"max_version"`
		} `json:"versions"`
	}
	if err := c.do(ctx, http.MethodGet, "/", nil, nil, &root, noVersion); err != nil {
		return err
	}
	if len(root.Versions) == 0 {
		return fmt.Errorf("GET %s/: no versions in the answer; is this a Placement endpoint?", c.base)
	}
	lo, err1 := ParseVersion(root.Versions[0].MinVersion)
	hi, err2 := ParseVersion(root.Versions[0].MaxVersion)
	if err1 != nil || err2 != nil {
		return fmt.Errorf("GET %s/: unreadable version range %q–%q", c.base, root.Versions[0].MinVersion, root.Versions[0].MaxVersion)
	}
	c.server = [2]Version{lo, hi}
	switch want {
	case "", "1", "latest":
		c.mv = MaxMicroversion
		if hi.Less(c.mv) {
			c.mv = hi
		}
		return nil
	}
	v, err := ParseVersion(want)
	if err != nil {
		return fmt.Errorf("invalid --os-placement-api-version %q: want 1.N", want)
	}
	if MaxMicroversion.Less(v) {
		return fmt.Errorf("--os-placement-api-version %s: rpctl knows Placement microversions up to %s", v, MaxMicroversion)
	}
	if v.Less(lo) || hi.Less(v) {
		return fmt.Errorf("--os-placement-api-version %s: the Placement service at %s supports %s to %s", v, c.base, lo, hi)
	}
	c.mv = v
	return nil
}

// Version is a Placement microversion.
type Version struct{ Major, Minor int }

// ParseVersion reads "1.39".
func ParseVersion(s string) (Version, error) {
	var v Version
	maj, min, ok := strings.Cut(strings.TrimSpace(s), ".")
	if !ok {
		return v, fmt.Errorf("microversion %q: want MAJOR.MINOR", s)
	}
	if _, err := fmt.Sscanf(maj+" "+min, "%d %d", &v.Major, &v.Minor); err != nil || v.Major < 0 || v.Minor < 0 ||
		fmt.Sprintf("%d.%d", v.Major, v.Minor) != maj+"."+min {
		return Version{}, fmt.Errorf("microversion %q: want MAJOR.MINOR", s)
	}
	return v, nil
}

func (v Version) String() string { return fmt.Sprintf("%d.%d", v.Major, v.Minor) }

// Less orders versions.
func (v Version) Less(o Version) bool {
	return v.Major < o.Major || v.Major == o.Major && v.Minor < o.Minor
}

// AtLeast reports whether v >= 1.minor.
func (v Version) AtLeast(minor int) bool { return !v.Less(Version{1, minor}) }

// supports fails a request at microversion mv the server does not serve.
func (c *Client) supports(mv Version) error {
	if mv.Less(c.server[0]) || c.server[1].Less(mv) {
		return fmt.Errorf("microversion %s: the Placement service at %s supports %s to %s", mv, c.base, c.server[0], c.server[1])
	}
	return nil
}

// need fails a call the negotiated microversion cannot make.
func (c *Client) need(minor int, what string) error {
	if c.mv.AtLeast(minor) {
		return nil
	}
	return fmt.Errorf("%s needs Placement microversion 1.%d or later; using %s", what, minor, c.mv)
}

// noVersion marks the one request (GET /) sent without a microversion.
var noVersion = &Version{}

// do sends one request and decodes a JSON answer into out (if not nil).
// in, if not nil, is sent as JSON; mv overrides the client's microversion.
func (c *Client) do(ctx context.Context, method, path string, query url.Values, in, out any, mv ...*Version) error {
	_, _, err := c.doRaw(ctx, method, path, query.Encode(), in, out, mv...)
	return err
}

// doRaw is do that also returns the status and the raw answer body.
func (c *Client) doRaw(ctx context.Context, method, path, rawQuery string, in, out any, mv ...*Version) (int, []byte, error) {
	status, body, _, err := c.exchange(ctx, method, path, rawQuery, in, out, mv...)
	return status, body, err
}

// exchange is doRaw that also returns the answer's headers.
func (c *Client) exchange(ctx context.Context, method, path, rawQuery string, in, out any, mv ...*Version) (int, []byte, http.Header, error) {
	var body []byte
	if in != nil {
		var err error
		if body, err = json.Marshal(in); err != nil {
			return 0, nil, nil, err
		}
	}
	u := *c.base
	u.Path = strings.TrimRight(c.base.Path, "/") + path
	u.RawPath = ""
	u.RawQuery = rawQuery
	version := c.mv
	if len(mv) > 0 && mv[0] != nil {
		version = *mv[0]
	}
	reauthed := false
	deadlocks := 0
	for attempt := 0; ; attempt++ {
		status, respBody, header, err := c.send(ctx, method, &u, body, version)
		if err != nil {
			if attempt < c.retries && retryable(method, err) && ctx.Err() == nil {
				c.debug("retrying after a connection error", "method", method, "url", u.String(), "attempt", attempt+1, "error", err)
				select {
				case <-time.After(time.Duration(attempt+1) * 200 * time.Millisecond):
					continue
				case <-ctx.Done():
					return 0, nil, nil, ctx.Err()
				}
			}
			if !idempotent(method) && !neverSent(err) {
				return 0, nil, nil, &OutcomeUnknownError{Method: method, URL: u.String(), Err: err}
			}
			return 0, nil, nil, fmt.Errorf("%s %s: %w", method, u.String(), err)
		}
		if status == http.StatusUnauthorized && !reauthed {
			reauthed = true
			if rerr := c.auth.Reauthenticate(ctx, c.auth.Token()); rerr == nil {
				continue
			}
		}
		if deadlockAnswer(status, respBody) && generationChecked(body) && deadlocks < deadlockTries-1 && ctx.Err() == nil {
			// placement-api rolled the request's transaction back, and
			// the generation it carries makes a repeat safe: were the
			// write applied after all, the repeat would be refused (409).
			deadlocks++
			c.debug("retrying after a deadlock", "method", method, "url", u.String(), "try", deadlocks+1)
			t := time.NewTimer(deadlockBackoff(deadlocks))
			select {
			case <-t.C:
				attempt--
				continue
			case <-ctx.Done():
				t.Stop()
			}
		}
		if status >= 400 {
			apiErr := newAPIError(method, u.Path, status, requestID(header), respBody)
			if status >= 500 && !idempotent(method) {
				// A server error can follow a write that was applied (a
				// proxy's 502 after placement-api committed, a 500 raised
				// after the commit): it is no refusal.
				return status, respBody, header, &OutcomeUnknownError{Method: method, URL: u.String(), Err: apiErr, Status: status}
			}
			return status, respBody, header, apiErr
		}
		if out != nil && len(respBody) > 0 {
			if err := json.Unmarshal(respBody, out); err != nil {
				if !idempotent(method) {
					return status, respBody, header, &AppliedUnreadableError{Method: method, URL: u.String(), Status: status, Err: err}
				}
				return status, respBody, header, fmt.Errorf("%s %s: unreadable answer: %v", method, u.Path, err)
			}
		}
		return status, respBody, header, nil
	}
}

func (c *Client) send(ctx context.Context, method string, u *url.URL, body []byte, mv Version) (int, []byte, http.Header, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), rd)
	if err != nil {
		return 0, nil, nil, err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "rpctl placementclient")
	if tok := c.auth.Token(); tok != "" {
		req.Header.Set("X-Auth-Token", tok)
	}
	if mv != *noVersion {
		req.Header.Set("OpenStack-API-Version", "placement "+mv.String())
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	start := time.Now()
	resp, err := c.http.Do(req)
	if err != nil {
		c.debug("HTTP request failed", "method", method, "url", u.String(), "microversion", mv.String(), "error", err, "elapsed", time.Since(start))
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	respBody, err := io.ReadAll(resp.Body)
	reqID := requestID(resp.Header)
	if c.log != nil {
		attrs := []any{"method", method, "url", u.String(), "status", resp.StatusCode, "microversion", mv.String(),
			"request_id", reqID, "elapsed", time.Since(start).Round(time.Microsecond)}
		if body != nil {
			attrs = append(attrs, "request_body", string(body))
		}
		if resp.StatusCode >= 400 {
			attrs = append(attrs, "response_body", string(respBody))
		}
		c.debug("HTTP request", attrs...)
	}
	if err != nil {
		// The answer was cut off: the request did reach the server.
		return 0, nil, resp.Header, fmt.Errorf("reading the answer: %w", err)
	}
	return resp.StatusCode, respBody, resp.Header, nil
}

// requestID is the request id Placement answered with.
func requestID(h http.Header) string {
	if id := h.Get("OpenStack-Request-Id"); id != "" {
		return id
	}
	return h.Get("X-Openstack-Request-Id")
}

func (c *Client) debug(msg string, args ...any) {
	if c.log != nil {
		c.log.Debug(msg, args...)
	}
}

// idempotent requests may be sent again after any connection error: a GET
// changes nothing, and Placement's PUT/DELETE on a generation-checked
// resource would still not be sent twice blindly because a repeat after a
// lost answer could be misread as a conflict. So only reads qualify.
func idempotent(method string) bool {
	return method == http.MethodGet || method == http.MethodHead
}

// A write placement-api answers with a 500 naming a database deadlock
// (1213; on Galera also a certification failure) was rolled back: the
// error ends the transaction, and Placement answers only after it, having
// already retried its allocation writer 5 times (oslo.db's wrap_db_retry).
// rpctl sends such a write again when it carries a generation (a
// consumer's or a provider's: every PUT and POST rpctl makes to change
// allocations, inventories, traits and aggregates), the same
// deadlockTries in all as its own database transactions: a repeat of a
// write that was applied after all would be answered 409, a conflict, and
// never applied twice. Writes without a generation (creating or deleting a
// provider, deleting allocations) are not repeated.
const deadlockTries = 6

// deadlockBackoff is the wait before the k-th repeat (1-based): oslo.db's,
// 1 s and then uniform in [0, 2^k s), at most 10 s.
var deadlockBackoff = func(k int) time.Duration {
	if k <= 1 {
		return time.Second
	}
	return min(time.Duration(rand.Int64N(int64(time.Second)<<k)), 10*time.Second)
}

// deadlockAnswer reports a 500 whose body names MySQL error 1213, as
// pymysql words it: "(1213, 'Deadlock found when trying to get lock; ...')".
func deadlockAnswer(status int, body []byte) bool {
	return status == http.StatusInternalServerError && bytes.Contains(body, []byte("(1213, "))
}

// generationChecked reports a request body that carries a consumer or
// provider generation (null, on a consumer: "must not exist yet").
func generationChecked(body []byte) bool {
	return bytes.Contains(body, []byte(`"consumer_generation":`)) || bytes.Contains(body, []byte(`"resource_provider_generation":`))
}

// neverSent reports whether a transport error happened before the request
// could reach the server (no connection was made), so sending it again
// cannot apply a write twice.
func neverSent(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	var dns *net.DNSError
	return errors.As(err, &dns)
}

func retryable(method string, err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() && !idempotent(method) {
		return false
	}
	return idempotent(method) || neverSent(err)
}

// OutcomeUnknownError is a write whose connection failed after the request
// was sent, or that was answered with a server error (Status 5xx, Err the
// *Error): it may or may not have been applied, so it is not repeated.
type OutcomeUnknownError struct {
	Method, URL string
	Err         error
	Status      int // 0: no answer came
}

func (e *OutcomeUnknownError) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("%s %s: %v; a server error can follow a write that was applied, so it may or may not have been applied (not retried: read the resource again before repeating it)", e.Method, e.URL, e.Err)
	}
	return fmt.Sprintf("%s %s: %v; the request was sent but no answer came, so it may or may not have been applied (not retried: read the resource again before repeating it)", e.Method, e.URL, e.Err)
}

// AppliedUnreadableError is a write Placement answered with success whose
// answer could not be read: the write was applied, what it returned is
// unknown.
type AppliedUnreadableError struct {
	Method, URL string
	Status      int
	Err         error
}

func (e *AppliedUnreadableError) Error() string {
	return fmt.Sprintf("%s %s: answered %d, so the write was applied, but the answer is unreadable (%v): read the resource again before going on", e.Method, e.URL, e.Status, e.Err)
}

func (e *AppliedUnreadableError) Unwrap() error { return e.Err }

func (e *OutcomeUnknownError) Unwrap() error { return e.Err }

func escape(s string) string { return url.PathEscape(s) }
