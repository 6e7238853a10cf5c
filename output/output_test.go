package output

import (
	"bytes"
	"testing"
)

func TestWriteFormats(t *testing.T) {
	rows := Rows{
		Headers: []string{"Migration", "Total Needed", "Completed"},
		Rows:    [][]string{{"migrate_empty_ratio", "2", "2"}, {"compute_node_inventory", "10", "7"}},
		Align:   AlignCenter,
	}
	tests := []struct{ format, want string }{
		{Table, `+------------------------+--------------+-----------+
|       Migration        | Total Needed | Completed |
+------------------------+--------------+-----------+
|  migrate_empty_ratio   |      2       |     2     |
| compute_node_inventory |      10      |     7     |
+------------------------+--------------+-----------+
`},
		{Value, "migrate_empty_ratio 2 2\ncompute_node_inventory 10 7\n"},
		{JSON, `[
  {
    "Migration": "migrate_empty_ratio",
    "Total Needed": "2",
    "Completed": "2"
  },
  {
    "Migration": "compute_node_inventory",
    "Total Needed": "10",
    "Completed": "7"
  }
]
`},
		{YAML, `- Migration: migrate_empty_ratio
  Total Needed: "2"
  Completed: "2"
- Migration: compute_node_inventory
  Total Needed: "10"
  Completed: "7"
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
