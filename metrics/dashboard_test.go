package metrics_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/candidates"
	"github.com/rpctl/rpctl/capacity"
	"github.com/rpctl/rpctl/claims"
	"github.com/rpctl/rpctl/internal/testdb"
	"github.com/rpctl/rpctl/metrics"
)

// ownMetrics are the exporter's metrics about itself.
var ownMetrics = []string{"rpctl_exporter_last_success_timestamp_seconds", "rpctl_exporter_collect_duration_seconds",
	"rpctl_exporter_collect_errors", "rpctl_exporter_collections_total"}

// published is every metric name rpctl publishes.
func published(t *testing.T) map[string]bool {
	m, err := candidates.NewModel(candidates.CapacityInput(2))
	if err != nil {
		t.Fatal(err)
	}
	res := &capacity.Result{Mode: capacity.Independent}
	var fams []*metrics.Family
	fams = append(fams, metrics.Capacity([]*capacity.Result{res}, metrics.Nova{})...)
	fams = append(fams, metrics.Usage(m)...)
	fams = append(fams, metrics.Projects(nil)...)
	fams = append(fams, metrics.Status(nil)...)
	fams = append(fams, metrics.Drift(nil)...)
	fams = append(fams, metrics.Missing(nil)...)
	fams = append(fams, metrics.Audit(&claims.AuditResult{})...)
	names := map[string]bool{}
	for _, f := range fams {
		names[f.Name] = true
	}
	for _, n := range ownMetrics {
		names[n] = true
	}
	return names
}

// TestGrafanaDashboard: docs/grafana-rpctl.json is a dashboard whose every
// query is valid PromQL (promtool parses it as a rule) and names only
// metrics rpctl publishes.
func TestGrafanaDashboard(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(testdb.RepoRoot(), "docs", "grafana-rpctl.json"))
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Requires []struct{ Type, ID string } `json:"__requires"`
		Panels   []struct {
			Title   string
			Type    string
			Targets []struct{ Expr string }
		}
		Templating struct {
			List []struct{ Name, Type, Query any }
		}
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatal(err)
	}
	// issue 39: loadable by file provisioning as well as by the UI's
	// import: __requires names Grafana, the Prometheus datasource and every
	// panel type used, and the datasource is a variable of the dashboard
	// (${datasource}), not an import input (${DS_...}), which only the UI's
	// import fills in.
	requires := map[string]bool{}
	for _, r := range dash.Requires {
		requires[r.Type+"/"+r.ID] = true
	}
	for _, need := range []string{"grafana/grafana", "datasource/prometheus"} {
		if !requires[need] {
			t.Errorf("__requires lacks %s", need)
		}
	}
	for _, p := range dash.Panels {
		if !requires["panel/"+p.Type] {
			t.Errorf("panel %q: __requires lacks its type %s", p.Title, p.Type)
		}
	}
	hasVar := false
	for _, v := range dash.Templating.List {
		hasVar = hasVar || v.Name == "datasource" && v.Type == "datasource" && v.Query == "prometheus"
	}
	if !hasVar {
		t.Error("no datasource variable (name datasource, type datasource, query prometheus)")
	}
	if strings.Contains(string(raw), "${DS_") || strings.Contains(string(raw), "__inputs") {
		t.Error("the dashboard refers to an import input (${DS_...}), which file provisioning does not fill in")
	}
	if got := strings.Count(string(raw), `"uid": "${datasource}"`); got < len(dash.Panels) {
		t.Errorf("%d datasource references to ${datasource}, want one per panel (%d) at least", got, len(dash.Panels))
	}
	names := published(t)
	var rules strings.Builder
	rules.WriteString("groups:\n  - name: dashboard\n    rules:\n")
	n := 0
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			n++
			// Grafana's variables are not PromQL: a value stands in.
			expr := strings.NewReplacer("$mode", "independent", "$flavor", ".*").Replace(tg.Expr)
			fmt.Fprintf(&rules, "      - record: dashboard:q%d\n        expr: %q\n", n, expr)
			for _, word := range strings.FieldsFunc(expr, func(r rune) bool {
				return !(r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
			}) {
				if (strings.HasPrefix(word, "rpctl_") || strings.HasPrefix(word, "openstack_")) && !names[word] {
					t.Errorf("panel %q queries %s, which rpctl does not publish", p.Title, word)
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("no query in the dashboard")
	}
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		if testdb.Required() {
			t.Fatal("promtool not found: apt-get install prometheus")
		}
		t.Skip("promtool not found")
	}
	f := filepath.Join(t.TempDir(), "rules.yml")
	if err := os.WriteFile(f, []byte(rules.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(promtool, "check", "rules", f).CombinedOutput(); err != nil {
		t.Errorf("promtool check rules: %v\n%s", err, out)
	}
}
