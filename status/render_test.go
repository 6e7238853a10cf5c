package status

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/rpctl/rpctl/internal/iostreams"
	"github.com/rpctl/rpctl/internal/testdb"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// goldenResults exercise every wrapping rule oslo.upgradecheck's details go
// through: long sentences, hyphenated words, a URL longer than a line, a
// leading newline (nova's service-token quirk), tabs, em-dashes, no details,
// and non-ASCII text.
var goldenResults = []Result{
	{Check: "Compute Node UUIDs", Code: Warning, Details: `3 compute nodes have a NULL uuid, so no resource provider can be created for them (cell1: cmp-0001, cmp-0002; cell2: cmp-0101). Run "rpctl migrate inventory".`},
	{Check: "Resource Providers", Code: Success},
	{Check: "Service User Token Configuration", Code: Failure, Details: "\nService user token configuration is required for all Nova services. For more details see the following: https://docs.openstack.org/latest/nova/admin/configuration/service-user-token.html"},
	{Check: "Missing Root Provider IDs", Code: Failure, Details: `There is at least one resource provider table record which misses its root provider id. Run the "placement-manage db online_data_migrations" command.`},
	{Check: "Incomplete Consumers", Code: Warning, Details: `There are 2 incomplete consumers table records for existing allocations. Run the "placement-manage db online_data_migrations" command.`},
	{Check: "Hyphens", Code: Success, Details: "well-known self-contained hyper-converged compute-node providers -- and an em--dash, a-b-c x--y 1-2-3 co-op\tTabbed\ttext and --double dashes-- at the end-"},
	{Check: "Ünïcode", Code: Warning, Details: "Zähler für Knoten überschritten: café-au-lait ☕ naïve-façade résumé — 日本語のテキストも含む長い行がここにあります"},
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./status -run Golden -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file:\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

func TestGoldenTable(t *testing.T) {
	var b bytes.Buffer
	if err := RenderTable(&b, goldenResults, iostreams.Palette{}); err != nil {
		t.Fatal(err)
	}
	golden(t, "table.golden", b.Bytes())
}

func TestGoldenJSON(t *testing.T) {
	var b bytes.Buffer
	if err := RenderJSON(&b, goldenResults); err != nil {
		t.Fatal(err)
	}
	golden(t, "json.golden", b.Bytes())
	var doc struct {
		Name   string `json:"name"`
		Checks []struct {
			Check   string  `json:"check"`
			Result  int     `json:"result"`
			Details *string `json:"details"`
		} `json:"checks"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	if doc.Name != Title || len(doc.Checks) != len(goldenResults) || doc.Checks[1].Details != nil || doc.Checks[0].Result != 1 {
		t.Errorf("unexpected document %+v", doc)
	}
	if *doc.Checks[6].Details != goldenResults[6].Details || doc.Checks[6].Check != "Ünïcode" {
		t.Errorf("non-ASCII did not round-trip: %q", *doc.Checks[6].Details)
	}
}

// TestColourOnlyTheResultWord checks that colour leaves the borders where the
// plain table has them.
func TestColourOnlyTheResultWord(t *testing.T) {
	// Buffers are no terminal, so lipgloss would pick no colour at all.
	prev := lipgloss.ColorProfile()
	lipgloss.SetColorProfile(termenv.ANSI)
	defer lipgloss.SetColorProfile(prev)
	io, _, _, _ := iostreams.Test()
	io.SetColorEnabled(true)
	var plain, coloured bytes.Buffer
	RenderTable(&plain, goldenResults[:3], iostreams.Palette{})
	RenderTable(&coloured, goldenResults[:3], io.Palette())
	if plain.String() == coloured.String() {
		t.Fatal("no colour with colour enabled")
	}
	stripped := ansi(coloured.String())
	if stripped != plain.String() {
		t.Errorf("colour changed more than the result words:\n%s", coloured.String())
	}
	for _, l := range strings.Split(coloured.String(), "\n") {
		if strings.Contains(l, "\x1b[") && !strings.HasPrefix(l, "| Result: ") {
			t.Errorf("colour outside a Result line: %q", l)
		}
	}
}

func ansi(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == 0x1b {
			for i < len(s) && s[i] != 'm' {
				i++
			}
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// pyOslo runs the real oslo.upgradecheck 2.1.1 (with Debian's prettytable)
// over the golden results, with --json set or not, and returns what it
// prints.
const pyOslo = `
import json, sys
from oslo_upgradecheck import upgradecheck
results = json.load(sys.stdin)
class Args: json = sys.argv[1] == "json"
class Conf: command = Args
upgradecheck.CONF = Conf
def mk(code, details):
    return lambda self: upgradecheck.Result(upgradecheck.Code(code), details)
class C(upgradecheck.UpgradeCommands):
    _upgrade_checks = tuple((r["check"], mk(r["result"], r["details"])) for r in results)
sys.exit(C().check())
`

func runOslo(t *testing.T, mode string) ([]byte, int) {
	t.Helper()
	testdb.RequirePython(t, "oslo_upgradecheck", "prettytable")
	var in []map[string]any
	for _, r := range goldenResults {
		var d any
		if r.Details != "" {
			d = r.Details
		}
		in = append(in, map[string]any{"check": r.Check, "result": int(r.Code), "details": d})
	}
	js, _ := json.Marshal(in)
	cmd := exec.Command(testdb.Python, "-c", pyOslo, mode)
	cmd.Stdin = bytes.NewReader(js)
	cmd.Env = append(os.Environ(), "PYTHONIOENCODING=utf-8")
	out, err := cmd.Output()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out, code
}

// TestGoldenMatchesOslo proves the golden files are what the real
// oslo.upgradecheck prints, table and JSON, and that the exit code agrees.
func TestGoldenMatchesOslo(t *testing.T) {
	for _, mode := range []string{"table", "json"} {
		got, code := runOslo(t, mode)
		want, err := os.ReadFile(filepath.Join("testdata", mode+".golden"))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("oslo.upgradecheck %s output differs from testdata/%s.golden:\n--- oslo\n%s\n--- golden\n%s", mode, mode, got, want)
		}
		if rep := (Report{Results: goldenResults}); code != rep.Exit() {
			t.Errorf("oslo exit %d, rpctl %d", code, rep.Exit())
		}
	}
}
