package claims_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/rpctl/rpctl/cmd/internal/cmdtest"
)

// TestClaimsHealReportsWhatItDid: through the real placement-api, behind a
// proxy that lets the second PUT through and then hangs up before its
// answer (the write is applied), claims heal stops, says the write may or
// may not have been applied, and prints what it completed before it: the
// summary table and one line with the count.
func TestClaimsHealReportsWhatItDid(t *testing.T) {
	side := buildHealCloud(t, newHealCloud())
	conf := filepath.Join(t.TempDir(), "nova.conf")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf("[database]\nconnection = %s\n[api_database]\nconnection = %s\n",
		side.Cell.URL, side.API.URL)), 0o600); err != nil {
		t.Fatal(err)
	}
	target, err := url.Parse(side.URL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	var puts atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut && puts.Add(1) == 2 {
			proxy.ServeHTTP(httptest.NewRecorder(), r) // applied by Placement
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	defer srv.Close()
	out, errOut, code := cmdtest.Rpctl(t, "--config-file", conf, "--os-endpoint", srv.URL, "--os-token", "admin", "claims", "heal", "-f", "json")
	if puts.Load() < 2 {
		t.Fatalf("heal sent %d PUTs; the scenario needs two (exit %d)\n%s%s", puts.Load(), code, out, errOut)
	}
	if code != 255 || !strings.Contains(errOut, "may or may not have been applied") {
		t.Errorf("exit %d, want 255 and an outcome-unknown error:\n%s", code, errOut)
	}
	if !strings.Contains(errOut, "claims heal stopped: 1 instances healed before the error") {
		t.Errorf("no line saying what was healed before the fault:\n%s", errOut)
	}
	if !strings.Contains(out, `"created": 1`) && !strings.Contains(out, `"updated": 1`) && !strings.Contains(out, `"Created": 1`) {
		t.Errorf("the summary does not count the healed instance:\n%s", out)
	}
}
