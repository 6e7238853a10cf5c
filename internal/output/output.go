// Package output renders command results in the formats OpenStack operators
// know from python-openstackclient (cliff): table, json, yaml, csv and value,
// with cliff's options (-c, --sort-column, --quote, --noindent, --max-width,
// --fit-width, --print-empty) handled here once for every command.
package output

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/rpctl/rpctl/internal/sanitize"
)

// Formats accepted by -f/--format.
const (
	Table = "table"
	JSON  = "json"
	YAML  = "yaml"
	Value = "value"
	CSV   = "csv"
	// Prometheus is the text exposition format 0.0.4; only the commands
	// that measure something (capacity, status, claims audit) print it.
	Prometheus = "prometheus"
)

// Formats lists the formats -f accepts, for help and completion.
var Formats = []string{CSV, JSON, Prometheus, Table, Value, YAML}

// ValidateFormat rejects formats rpctl does not print.
func ValidateFormat(f string) error {
	if slices.Contains(Formats, f) {
		return nil
	}
	return fmt.Errorf("invalid --format %q: choose %s", f, strings.Join(Formats, ", "))
}

// Align is a column alignment.
type Align int

// Alignments.
const (
	AlignLeft Align = iota
	AlignCenter
	AlignRight
)

// Rows are tabular data with named columns. Column names are lower-case
// snake_case, the same in table headers and json/yaml/csv keys (Write
// normalises others with ColumnName).
type Rows struct {
	Headers []string
	// Rows are the cells as text (table and value output).
	Rows [][]string
	// Values, when set (by Add), are the same cells as typed values (string,
	// integers, float64, bool or nil) for json, yaml, csv and sorting, as
	// cliff sees a command's Python values; without them every cell is a
	// string.
	Values [][]any
	// Align applies to the data cells. Headers are always centred, with
	// the extra space of an odd excess on the right;
	// prettytable aligns them like the data and centres even-width text
	// with the extra space on the left.
	Align Align
	// Verbatim keeps the headers as written instead of ColumnName's
	// snake_case: for an osc command whose own columns are not snake_case
	// (allocation candidate list's "#", "resource provider"), so that its
	// output and its -c and --sort-column names stay osc's.
	Verbatim bool
	// single marks one record (Record): cliff's ShowOne.
	single bool
	// columnAlign, when set, aligns each column (data and header) on its
	// own, as cliff's TableFormatter does by the first row's types.
	columnAlign []Align
}

// RenderTable writes an ASCII table in the prettytable style that nova-manage
// and openstackclient print, so operators' scripts that scrape it keep
// working: data cells are laid out as prettytable does
// (TestRenderTableMatchesPrettytable), headers see Rows.Align.
func RenderTable(w io.Writer, r Rows) error {
	r.Rows = sanitizeRows(r.Rows)
	cells := r.Rows
	n := len(r.Headers)
	for _, row := range cells {
		n = max(n, len(row))
	}
	align := make([]Align, n)
	headerAlign := make([]Align, n)
	for i := range align {
		// prettytable aligns headers like their column.
		align[i], headerAlign[i] = r.Align, r.Align
		if i < len(r.columnAlign) {
			align[i], headerAlign[i] = r.columnAlign[i], r.columnAlign[i]
		}
	}
	if r.Align == AlignCenter {
		// prettytable centres an odd excess unlike an even split:
		// pre-padded to the column width, the cells print as they are.
		cells = centre(r)
		for i := range align {
			align[i] = AlignLeft
		}
	}
	return drawBox(w, r.Headers, cells, headerAlign, align)
}

// drawBox draws every table: tablewriter (writeASCII); the comparison with
// rpctl's own renderer swaps in ownASCII.
var drawBox = writeASCII

// centre pads every data cell to its column's width the way prettytable
// (str.center) does: an odd excess puts the extra space on the left of
// even-width text and on the right of odd-width text. writeASCII's even
// split (headers) always puts it on the right.
func centre(r Rows) [][]string {
	width := make([]int, len(r.Headers))
	for i, h := range r.Headers {
		width[i] = displayWidth(h)
	}
	for _, row := range r.Rows {
		for i, c := range row {
			if i < len(width) {
				width[i] = max(width[i], displayWidth(c))
			}
		}
	}
	out := make([][]string, len(r.Rows))
	for k, row := range r.Rows {
		out[k] = slices.Clone(row)
		for i, c := range row {
			if i >= len(width) {
				break
			}
			cw := displayWidth(c)
			excess := width[i] - cw
			left := excess / 2
			if excess%2 == 1 && cw%2 == 0 {
				left++
			}
			out[k][i] = strings.Repeat(" ", left) + c + strings.Repeat(" ", excess-left)
		}
	}
	return out
}

func cell(row []string, i int) string {
	if i < len(row) {
		return row[i]
	}
	return ""
}

// blockStyle clears the flow style ("{...}", "[...]") a node decoded from
// JSON carries, so it prints as ordinary block YAML.
func blockStyle(n *yaml.Node) {
	n.Style &^= yaml.FlowStyle
	if n.Kind == yaml.ScalarNode && n.Tag == "!!str" {
		n.Style &^= yaml.DoubleQuotedStyle
		if n.Value == "" {
			// yaml.safe_dump writes the empty string ''; yaml.v3 writes "".
			n.Style = yaml.SingleQuotedStyle
		}
	}
	for _, c := range n.Content {
		blockStyle(c)
	}
}

// sanitizeRows escapes control characters in cells (hostnames and names
// come from databases anyone with a compute node can write to), so a
// table cannot carry terminal escapes.
func sanitizeRows(rows [][]string) [][]string {
	var out [][]string
	for k, row := range rows {
		for i, c := range row {
			// A newline is a table's own line break (wrapped cells): kept.
			parts := strings.Split(c, "\n")
			for i, p := range parts {
				parts[i] = sanitize.String(p)
			}
			if s := strings.Join(parts, "\n"); s != c {
				if out == nil {
					out = slices.Clone(rows)
				}
				if &out[k][0] == &rows[k][0] {
					out[k] = slices.Clone(row)
				}
				out[k][i] = s
			}
		}
	}
	if out == nil {
		return rows
	}
	return out
}
