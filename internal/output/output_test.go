package output

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/internal/testdb"
)

func TestWriteFormats(t *testing.T) {
	rows := Rows{
		Headers: []string{"Migration", "Total Needed", "Completed"},
		Rows:    [][]string{{"migrate_empty_ratio", "2", "2"}, {"compute_node_inventory", "10", "7"}},
		Align:   AlignCenter,
	}
	tests := []struct{ format, want string }{
		{Table, `+------------------------+--------------+-----------+
|       migration        | total_needed | completed |
+------------------------+--------------+-----------+
|  migrate_empty_ratio   |      2       |     2     |
| compute_node_inventory |      10      |     7     |
+------------------------+--------------+-----------+
`},
		{Value, "migrate_empty_ratio 2 2\ncompute_node_inventory 10 7\n"},
		{JSON, `[
  {
    "migration": "migrate_empty_ratio",
    "total_needed": "2",
    "completed": "2"
  },
  {
    "migration": "compute_node_inventory",
    "total_needed": "10",
    "completed": "7"
  }
]
`},
		// cliff's yaml lister sorts each row's keys (yaml.safe_dump).
		{YAML, `- completed: "2"
  migration: migrate_empty_ratio
  total_needed: "2"
- completed: "7"
  migration: compute_node_inventory
  total_needed: "10"
`},
		{CSV, `"migration","total_needed","completed"
"migrate_empty_ratio","2","2"
"compute_node_inventory","10","7"
`},
	}
	for _, tc := range tests {
		t.Run(tc.format, func(t *testing.T) {
			var b bytes.Buffer
			if err := Write(&b, tc.format, rows, nil); err != nil {
				t.Fatal(err)
			}
			if b.String() != tc.want {
				t.Errorf("got\n%s\nwant\n%s", b.String(), tc.want)
			}
		})
	}
	if err := Write(&bytes.Buffer{}, "xml", rows, nil); err == nil {
		t.Error("xml accepted")
	}
}

func TestEmptyRowsJSON(t *testing.T) {
	var b bytes.Buffer
	if err := Write(&b, JSON, Rows{Headers: []string{"A"}}, nil); err != nil || b.String() != "[]\n" {
		t.Errorf("%q %v", b.String(), err)
	}
}

// TestRenderTableMatchesPrettytable compares RenderTable with Debian's
// prettytable, which nova-manage and openstackclient print through: the
// whole of nova-manage's online_data_migrations table, and the data lines
// of centred, left- and right-aligned tables with odd and even excess
// (headers: see Rows.Align).
func TestRenderTableMatchesPrettytable(t *testing.T) {
	testdb.RequirePython(t, "prettytable")
	prettytable := func(r Rows, align string) string {
		t.Helper()
		in, _ := json.Marshal(r)
		out, err := exec.Command(testdb.Python, "-c", `
import json, sys, prettytable
r = json.loads(sys.argv[1])
t = prettytable.PrettyTable(r["Headers"])
for row in r["Rows"]:
    t.add_row(row)
if sys.argv[2] != "c":
    for h in r["Headers"]:
        t.align[h] = sys.argv[2]
print(t)`, string(in), align).Output()
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	render := func(r Rows) string {
		var b bytes.Buffer
		if err := RenderTable(&b, r); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	// nova-manage's table, numbers of even and odd width in every column.
	summary := Rows{Headers: []string{"Migration", "Total Needed", "Completed"}, Align: AlignCenter, Rows: [][]string{
		{"migrate_compute_node_inventory", "100000", "10"}, {"migrate_empty_ratio", "120", "7"}, {"x", "0", "1234"}}}
	if got, want := render(summary), prettytable(summary, "c"); got != want {
		t.Errorf("nova-manage's table: rpctl\n%s\nprettytable\n%s", got, want)
	}
	data := func(table string) []string {
		lines := strings.Split(strings.TrimRight(table, "\n"), "\n")
		return lines[3 : len(lines)-1]
	}
	rows := Rows{Headers: []string{"Migration", "Total Needed", "Completed", "x"}, Rows: [][]string{
		{"migrate_empty_ratio", "2", "2", "odd"},
		{"compute_node_inventory", "10", "7", "even"},
		{"a", "123456789012345", "", "ünï"},
	}}
	for _, a := range []struct {
		align Align
		py    string
	}{{AlignCenter, "c"}, {AlignLeft, "l"}, {AlignRight, "r"}} {
		rows.Align = a.align
		got, want := render(rows), prettytable(rows, a.py)
		if g, w := data(got), data(want); !slices.Equal(g, w) {
			t.Errorf("align %s: rpctl\n%s\nprettytable\n%s", a.py, got, want)
		}
	}
}

func TestYAMLUsesJSONKeys(t *testing.T) {
	type summary struct {
		ComputeNodes int    `json:"compute_nodes"`
		Cell         string `json:"cell"`
	}
	var b bytes.Buffer
	if err := Write(&b, YAML, Rows{}, []summary{{ComputeNodes: 3, Cell: "cell1"}}); err != nil {
		t.Fatal(err)
	}
	if want := "- compute_nodes: 3\n  cell: cell1\n"; b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}

// TestColumnsByWrittenName (issue 39): a column whose printed name is
// ColumnName's (a flavor m1.small prints m1_small) is named by -c and
// --sort-column either way: -c m1.small no longer drops it silently.
func TestColumnsByWrittenName(t *testing.T) {
	var r Rows
	r.Headers = []string{"name", "m1.small", "m1.large"}
	r.Add("agg1", int64(3), int64(1))
	r.Add("agg2", int64(5), int64(0))
	for _, tc := range []struct {
		opts Options
		want string
	}{
		{Options{Format: CSV, Columns: []string{"m1.small"}}, "\"m1_small\"\n3\n5\n"},
		{Options{Format: CSV, Columns: []string{"m1_small"}}, "\"m1_small\"\n3\n5\n"},
		{Options{Format: Value, Columns: []string{"name", "m1.large"}, SortColumns: []string{"m1.small"}, SortDescending: true}, "agg2 0\nagg1 1\n"},
	} {
		var b bytes.Buffer
		if err := tc.opts.Write(&b, r, nil); err != nil {
			t.Fatal(err)
		}
		if b.String() != tc.want {
			t.Errorf("%+v: %q, want %q", tc.opts, b.String(), tc.want)
		}
	}
}
