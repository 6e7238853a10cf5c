package cmd_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"

	"github.com/rpctl/rpctl/cmd"
	"github.com/rpctl/rpctl/cmd/internal/cmdtest"
	"github.com/rpctl/rpctl/cmd/internal/cmdutil"
)

// formatRun is how one command runs on the sample cloud: its arguments
// after the command path ({db}, {dir}, {fmt}, {cfg}, and two providers'
// names {rp}, {rp2} and uuids {rpu}, {rp2u} are filled in), the exit code its help documents for that outcome, and
// whether it prints no rows (osc's delete commands don't): nothing on
// stdout in json, yaml, csv and value, where a table may have a sentence.
type formatRun struct {
	args   []string
	code   int
	silent bool
	// document: -f json and yaml print a document of their own, not the
	// rows (its columns are not csv's).
	document bool
}

// Fixture names.
const (
	fmtConsumer  = "f0000000-0000-4000-8000-000000000001"
	fmtConsumer2 = "f0000000-0000-4000-8000-000000000002"
	fmtAggregate = "a9000000-0000-4000-8000-000000000001"
	fmtProject   = "8c2e5d1f4b7a4f0e9d3c6b2a1e0f9d8c"
)

// everyFormatRuns runs every runnable command, in this order, on one copy of
// a migrated sample cloud (init and sample-cloud on empty files of their
// own): what a command creates, a later one shows, edits and deletes. A
// command added to the tree without a line here (or in
// formatExceptions) fails TestEveryCommandEveryFormat.
var everyFormatRuns = []struct {
	path string
	run  formatRun
}{
	{"init", formatRun{args: []string{"--db", "{dir}/init-{fmt}.db"}}},
	{"sample-cloud", formatRun{args: []string{"--db", "{dir}/sample-{fmt}.db", "--nodes", "3"}}},
	{"compute-node list", formatRun{}},
	// No nova.conf: nova-status' Placement API and Service User Token
	// Configuration fail, as nova-status' would.
	{"status", formatRun{code: 2}},
	{"upgrade check", formatRun{code: 2}},
	{"migrate placement", formatRun{}},
	{"migrate inventory", formatRun{}},
	{"migrate quotas", formatRun{}},
	{"migrate uuids", formatRun{}},
	{"migrate availability-zones", formatRun{}},
	{"migrate queued-for-delete", formatRun{}},
	{"migrate ratios", formatRun{}},
	{"migrate vif-list", formatRun{}},
	{"migrate user-id", formatRun{}},
	{"migrate dev-uuids", formatRun{}},
	// The fixture is a Zed cloud: no instances.compute_id, so the 2025.1
	// migration fails (exit 2) and prints its row.
	{"migrate compute-ids", formatRun{args: []string{"--release", "2025.1"}, code: 2}},
	{"migrate aggregates", formatRun{}},
	{"migrate allocations", formatRun{}},
	{"migrate all", formatRun{}},
	{"candidates", formatRun{args: []string{"--resources", "VCPU:1,MEMORY_MB:512", "--limit", "3"}}},
	{"capacity", formatRun{args: []string{"--flavor", "m1.tiny", "--flavor", "m1.small"}}},
	{"provider list", formatRun{}},
	{"provider show", formatRun{args: []string{"{rp}"}}},
	{"provider tree", formatRun{args: []string{"{rp}"}}},
	{"provider create", formatRun{args: []string{"fmt-new"}}},
	{"provider set", formatRun{args: []string{"fmt-new", "--name", "fmt-renamed"}}},
	{"provider delete", formatRun{args: []string{"fmt-renamed"}, silent: true}},
	{"trait create", formatRun{args: []string{"CUSTOM_FMT"}, silent: true}},
	{"trait list", formatRun{}},
	{"trait show", formatRun{args: []string{"CUSTOM_FMT"}}},
	{"provider trait list", formatRun{args: []string{"{rp}"}}},
	{"provider trait add", formatRun{args: []string{"{rp2}", "CUSTOM_FMT"}}},
	{"provider trait set", formatRun{args: []string{"{rp2}", "CUSTOM_FMT"}}},
	{"provider trait remove", formatRun{args: []string{"{rp2}", "CUSTOM_FMT"}}},
	{"provider trait delete", formatRun{args: []string{"{rp2}"}, silent: true}},
	{"provider aggregate list", formatRun{args: []string{"{rp}"}}},
	{"provider aggregate add", formatRun{args: []string{"{rp}", fmtAggregate}}},
	{"provider aggregate set", formatRun{args: []string{"{rp2}", fmtAggregate}}},
	{"provider aggregate remove", formatRun{args: []string{"{rp2}", fmtAggregate}}},
	{"resource-class create", formatRun{args: []string{"CUSTOM_FMT_RC"}, silent: true}},
	{"resource-class list", formatRun{}},
	{"resource-class show", formatRun{args: []string{"CUSTOM_FMT_RC"}}},
	{"resource-class set", formatRun{args: []string{"CUSTOM_FMT_RC"}, silent: true}},
	{"inventory list", formatRun{args: []string{"{rp}"}}},
	{"inventory show", formatRun{args: []string{"{rp}", "VCPU"}}},
	{"inventory set", formatRun{args: []string{"{rp}", "CUSTOM_FMT_RC:total=4", "--amend"}}},
	{"inventory class set", formatRun{args: []string{"{rp}", "CUSTOM_FMT_RC", "--total", "8", "--reserved", "1"}}},
	{"inventory delete", formatRun{args: []string{"{rp}", "CUSTOM_FMT_RC"}, silent: true}},
	{"resource-class delete", formatRun{args: []string{"CUSTOM_FMT_RC"}, silent: true}},
	{"provider apply", formatRun{args: []string{"--file", "{cfg}"}, document: true}},
	{"usage show", formatRun{args: []string{"{rp}"}}},
	{"usage project", formatRun{args: []string{fmtProject}}},
	{"claims list", formatRun{}},
	{"claims audit", formatRun{}},
	{"claims heal", formatRun{code: 4}}, // nothing to heal: migrate allocations did
	{"claims create", formatRun{args: []string{"--consumer", fmtConsumer, "--project", "p1", "--user", "u1", "--resources", "VCPU:1,MEMORY_MB:256"}}},
	{"allocation show", formatRun{args: []string{fmtConsumer}}},
	{"allocation set", formatRun{args: []string{fmtConsumer2, "--allocation", "rp={rpu},DISK_GB=1", "--allocation", "rp={rp2u},DISK_GB=1", "--project-id", "p1", "--user-id", "u1"}}},
	{"allocation unset", formatRun{args: []string{fmtConsumer2, "--provider", "{rp2u}"}}},
	{"allocation delete", formatRun{args: []string{fmtConsumer2}, silent: true}},
	{"claims release", formatRun{args: []string{fmtConsumer}, silent: true}},
	{"claims snapshot", formatRun{args: []string{"--out", "{dir}/snap-{fmt}.db"}, silent: true}},
	{"claims diff", formatRun{args: []string{"{dir}/snap-{fmt}.db"}}},
	{"trait delete", formatRun{args: []string{"CUSTOM_FMT"}, silent: true}},
}

// formatExceptions are the commands that take no -f: each one's help says
// why, and any -f given is refused with that reason (exit 255, a usage
// error) before anything runs.
var formatExceptions = map[string]string{
	"exporter": "the exporter takes no -f",
}

// TestEveryCommandEveryFormat (issue 21): every command of the tree runs in
// every format it takes (cmd.FormatsOf: table, json, yaml, csv, value, and
// prometheus where offered) on a sample cloud, with well-formed output per
// format; every other format is refused before anything is written.
func TestEveryCommandEveryFormat(t *testing.T) {
	t.Parallel()
	root := cmd.NewCmdRoot(commandTree(), "test")
	byPath := map[string]*cobra.Command{}
	for _, c := range cmdutil.RunnableCommands(root) {
		byPath[strings.TrimPrefix(c.CommandPath(), "rpctl ")] = c
	}
	covered := map[string]bool{}
	for _, r := range everyFormatRuns {
		if byPath[r.path] == nil {
			t.Errorf("everyFormatRuns names %q, which is not a runnable command", r.path)
		}
		covered[r.path] = true
	}
	for path, why := range formatExceptions {
		c := byPath[path]
		if c == nil {
			t.Errorf("formatExceptions names %q, which is not a runnable command", path)
			continue
		}
		covered[path] = true
		formats, refused := cmdutil.FormatsOf(c)
		if !strings.Contains(refused, why) || !strings.Contains(c.Long, refused) || !slices.Equal(formats, []string{"table"}) {
			t.Errorf("%s: refused %q (formats %v), help %q: want the refusal %q, said in its help", path, refused, formats, c.Long, why)
		}
	}
	for path := range byPath {
		if !covered[path] {
			t.Errorf("%s is neither run in every format (everyFormatRuns) nor a documented exception (formatExceptions)", path)
		}
	}

	dir := t.TempDir()
	base := filepath.Join(dir, "base.db")
	for _, args := range [][]string{{"sample-cloud", "--nodes", "4", "--seed", "5"}, {"migrate", "all"}} {
		if out, errOut, code := cmdtest.Rpctl(t, append([]string{"--db", base}, args...)...); code != 0 {
			t.Fatalf("%v: exit %d: %s%s", args, code, out, errOut)
		}
	}
	rps := strings.Fields(mustRpctl(t, "--db", base, "provider", "list", "-f", "value", "-c", "uuid", "-c", "name", "--sort-column", "name"))
	if len(rps) < 4 {
		t.Fatalf("providers %v", rps)
	}
	cfg := filepath.Join(dir, "provider.yaml")
	if err := os.WriteFile(cfg, []byte("meta:\n  schema_version: '1.0'\nproviders:\n  - identification:\n      name: '"+rps[1]+"'\n    traits:\n      additional: [CUSTOM_RACK_FMT]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	baseBytes, err := os.ReadFile(base)
	if err != nil {
		t.Fatal(err)
	}

	// outputs[path][format] is what each run printed, for the cross-format
	// checks (csv's columns are json's keys).
	outputs := map[string]map[string]string{}
	for _, format := range []string{"table", "json", "yaml", "csv", "value", "prometheus"} {
		db := filepath.Join(dir, format+".db")
		if err := os.WriteFile(db, baseBytes, 0o600); err != nil {
			t.Fatal(err)
		}
		fill := strings.NewReplacer("{db}", db, "{dir}", dir, "{fmt}", format, "{rpu}", rps[0], "{rp2u}", rps[2], "{rp}", rps[1], "{rp2}", rps[3], "{cfg}", cfg)
		for _, r := range everyFormatRuns {
			c := byPath[r.path]
			if c == nil {
				continue
			}
			args := append(strings.Fields(r.path), r.run.args...)
			for i := range args {
				args[i] = fill.Replace(args[i])
			}
			if !slices.Contains(args, "--db") {
				args = append([]string{"--db", db}, args...)
			}
			formats, _ := cmdutil.FormatsOf(c)
			full := append(slices.Clone(args), "-f", format)
			out, errOut, code := cmdtest.Rpctl(t, full...)
			if !slices.Contains(formats, format) {
				// Refused before anything runs: the run that follows in
				// table on this copy would fail had it written.
				if code != 255 || !strings.Contains(errOut, "-f "+format+": rpctl "+r.path+" prints no metrics; its formats are table, json, yaml, csv, value") || out != "" {
					t.Errorf("%v: exit %d, stdout %q, stderr %q; want the documented refusal (255)", full, code, out, errOut)
				}
				_, errOut, code = cmdtest.Rpctl(t, args...)
				if code != r.run.code {
					t.Errorf("%v after the refusal: exit %d (want %d): %s", args, code, r.run.code, errOut)
				}
				continue
			}
			if code != r.run.code {
				t.Errorf("%v: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", full, code, r.run.code, out, errOut)
				continue
			}
			if outputs[r.path] == nil {
				outputs[r.path] = map[string]string{}
			}
			outputs[r.path][format] = out
			if r.run.silent {
				if out != "" && format != "table" {
					t.Errorf("%v printed %q; it prints no rows", full, out)
				}
				continue
			}
			if msg := malformed(format, out); msg != "" {
				t.Errorf("%v: %s\n%s", full, msg, out)
			}
		}
	}
	for _, r := range everyFormatRuns {
		outs := outputs[r.path]
		if keys := jsonKeys(outs["json"]); r.run.document || keys == nil || outs["csv"] == "" {
			continue
		} else if header, _ := csv.NewReader(strings.NewReader(outs["csv"])).Read(); len(header) != len(keys) {
			t.Errorf("%s: csv columns %v, json keys %v", r.path, header, keys)
		}
	}
	for _, format := range []string{"json", "yaml", "csv", "value", "prometheus"} {
		// Each exception refuses every -f, the default spelled out too.
		for path, why := range formatExceptions {
			_, errOut, code := cmdtest.Rpctl(t, append(strings.Fields(path), "-f", format)...)
			if code != 255 || !strings.Contains(errOut, "-f "+format+": "+why) {
				t.Errorf("%s -f %s: exit %d, stderr %q; want 255 and %q", path, format, code, errOut, why)
			}
		}
	}
}

func mustRpctl(t *testing.T, args ...string) string {
	t.Helper()
	out, errOut, code := cmdtest.Rpctl(t, args...)
	if code != 0 {
		t.Fatalf("%v: exit %d: %s", args, code, errOut)
	}
	return out
}

// malformed says what is wrong with out as format, or "".
func malformed(format, out string) string {
	switch format {
	case "json":
		var v any
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			return "not json: " + err.Error()
		}
	case "yaml":
		var v any
		if err := yaml.Unmarshal([]byte(out), &v); err != nil {
			return "not yaml: " + err.Error()
		}
		if v == nil {
			return "empty yaml"
		}
		if strings.HasPrefix(strings.TrimSpace(out), "{") || strings.HasPrefix(strings.TrimSpace(out), "[{") {
			return "json, not block yaml"
		}
	case "csv":
		recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
		if err != nil {
			return "not csv (or a row with another column count than the header): " + err.Error()
		}
		if len(recs) == 0 || len(recs[0]) == 0 {
			return "no csv header"
		}
		if boxDrawing(out) {
			return "box drawing in csv"
		}
	case "value":
		if boxDrawing(out) {
			return "box drawing in value"
		}
	case "prometheus":
		p := expfmt.NewTextParser(model.LegacyValidation)
		fams, err := p.TextToMetricFamilies(bytes.NewReader([]byte(out)))
		if err != nil {
			return "not Prometheus text: " + err.Error()
		}
		if len(fams) == 0 {
			return "no metric family"
		}
	}
	return ""
}

// boxDrawing: a table's borders (cliff's +---+ and |, or tree's ├──).
func boxDrawing(s string) bool {
	for _, line := range strings.Split(s, "\n") {
		if strings.HasPrefix(line, "+-") || strings.HasPrefix(line, "| ") {
			return true
		}
	}
	return strings.ContainsFunc(s, func(r rune) bool { return r >= 0x2500 && r <= 0x257f })
}

// jsonKeys is the keys of a json object, or of the first object of a json
// list of flat objects (rows); nil for any other document.
func jsonKeys(s string) []string {
	dec := json.NewDecoder(strings.NewReader(s))
	var v, rest any
	if err := dec.Decode(&v); err != nil || dec.Decode(&rest) != io.EOF {
		return nil
	}
	if list, ok := v.([]any); ok && len(list) > 0 {
		v = list[0]
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	keys := make([]string, 0, len(obj))
	for k, val := range obj {
		switch val.(type) {
		case map[string]any, []any:
			return nil // a document, not a row
		}
		keys = append(keys, k)
	}
	return keys
}
