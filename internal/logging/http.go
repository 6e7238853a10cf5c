package logging

import (
	"net/http"
	"time"
)

// Transport wraps an http.RoundTripper (nil: http.DefaultTransport) so that
// every request is logged at debug level: method, URL, status, timing and
// OpenStack's request id; never headers or bodies, which carry tokens.
// placementclient and Keystone auth use it, so --debug shows every HTTP
// request the way it shows every SQL statement.
func Transport(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return loggingTransport{base}
}

type loggingTransport struct{ base http.RoundTripper }

func (t loggingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if !Debug() {
		return t.base.RoundTrip(req)
	}
	start := time.Now()
	resp, err := t.base.RoundTrip(req)
	attrs := []any{"method", req.Method, "url", req.URL.Redacted(), "elapsed", time.Since(start)}
	if v := req.Header.Get("OpenStack-API-Version"); v != "" {
		attrs = append(attrs, "microversion", v)
	}
	if err != nil {
		attrs = append(attrs, "err", err.Error())
	} else {
		attrs = append(attrs, "status", resp.StatusCode)
		if id := resp.Header.Get("X-Openstack-Request-Id"); id != "" {
			attrs = append(attrs, "request_id", id)
		}
	}
	Logger().Debug("http", attrs...)
	return resp, err
}
