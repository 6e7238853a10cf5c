package cmdtest

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"

	exportercmd "github.com/rpctl/rpctl/cmd/exporter"
	"github.com/rpctl/rpctl/internal/testdb"
	"github.com/rpctl/rpctl/metrics"
)

type StatusDoc struct {
	Name   string `json:"name"`
	Checks []struct {
		Check   string  `json:"check"`
		Result  int     `json:"result"`
		Details *string `json:"details"`
	} `json:"checks"`
}

// CheckResult is one upgrade check's name and result (0, 1, 2).
type CheckResult struct {
	Check  string
	Result int
}

// StatusResults runs `rpctl ARGS status --json STATUSARGS` (oslo.upgradecheck's
// document: -f json prints rows, result named) and returns
// each check's result in order, with the exit code.
func StatusResults(t *testing.T, args, statusArgs []string) ([]CheckResult, int) {
	t.Helper()
	out, errOut, code := Rpctl(t, append(append(slices.Clone(args), "status", "--json"), statusArgs...)...)
	var doc StatusDoc
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("rpctl status --json (exit %d): %v\n%s%s", code, err, out, errOut)
	}
	var res []CheckResult
	for _, c := range doc.Checks {
		res = append(res, CheckResult{c.Check, c.Result})
	}
	return res, code
}

// exporterMu keeps two tests from replacing exportercmd.ServeMetrics at
// once.
var exporterMu sync.Mutex

// ExporterResults runs `rpctl ARGS exporter EXPORTERARGS` in process, with
// its server replaced by one that runs the real collection once, and
// returns rpctl_status_check_result's samples in the order published.
func ExporterResults(t *testing.T, args, exporterArgs []string) []CheckResult {
	t.Helper()
	exporterMu.Lock()
	defer exporterMu.Unlock()
	var fams []*metrics.Family
	collected := false
	exportercmd.ServeMetrics = func(ctx context.Context, o metrics.ServeOptions) error {
		o.Listener.Close()
		fams, collected = o.Collect(ctx).Families, true
		return nil
	}
	defer func() { exportercmd.ServeMetrics = nil }()
	listen := fmt.Sprintf("127.0.0.1:%d", testdb.FreePort(t))
	if _, errOut, code := Rpctl(t, append(append(slices.Clone(args), "exporter", "--listen", listen), exporterArgs...)...); code != 0 || !collected {
		t.Fatalf("exporter: exit %d (collected: %v): %s", code, collected, errOut)
	}
	var res []CheckResult
	for _, f := range fams {
		if f.Name != "rpctl_status_check_result" {
			continue
		}
		for _, s := range f.Samples {
			res = append(res, CheckResult{s.Values[0], int(s.Value)})
		}
	}
	return res
}

// ExporterEqualsStatus checks that the exporter's rpctl_status_check_result
// is `rpctl status -f json`'s, check by check, on the same config and
// checks' flags (exporterArgs are the exporter's own: a --flavor where the
// API database has none); it returns status's results and exit code.
func ExporterEqualsStatus(t *testing.T, args, checkArgs []string, exporterArgs ...string) ([]CheckResult, int) {
	t.Helper()
	want, code := StatusResults(t, args, checkArgs)
	got := ExporterResults(t, args, append(slices.Clone(checkArgs), exporterArgs...))
	if !slices.Equal(got, want) {
		t.Errorf("rpctl %q: the exporter's rpctl_status_check_result differs from rpctl status -f json:\n exporter: %v\n status:   %v", append(slices.Clone(args), checkArgs...), got, want)
	}
	return want, code
}
