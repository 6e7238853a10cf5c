// Package output renders command results in the formats OpenStack operators
// know from python-openstackclient: table, json, yaml and value.
package output

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/pkg/twwidth"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
	"gopkg.in/yaml.v3"

	"github.com/rpctl/rpctl/internal/sanitize"
)

// Formats accepted by -f/--format.
const (
	Table = "table"
	JSON  = "json"
	YAML  = "yaml"
	Value = "value"
)

// ValidateFormat rejects formats rpctl does not print.
func ValidateFormat(f string) error {
	switch f {
	case Table, JSON, YAML, Value:
		return nil
	}
	return fmt.Errorf("invalid --format %q: choose table, json, yaml or value", f)
}

// Align is a column alignment.
type Align int

// Alignments.
const (
	AlignLeft Align = iota
	AlignCenter
	AlignRight
)

// Rows are tabular data with named columns.
type Rows struct {
	Headers []string
	Rows    [][]string
	// Align applies to the data cells. Headers are always centred, with
	// tablewriter's rule for an odd excess (the extra space on the right);
	// prettytable aligns them like the data and centres even-width text
	// with the extra space on the left.
	Align Align
}

// RenderTable writes an ASCII table in the prettytable style that nova-manage
// and openstackclient print, so operators' scripts that scrape it keep
// working: data cells are laid out as prettytable does
// (TestRenderTableMatchesPrettytable), headers see Rows.Align.
func RenderTable(w io.Writer, r Rows) error {
	r.Rows = sanitizeRows(r.Rows)
	align := map[Align]tw.Align{AlignLeft: tw.AlignLeft, AlignCenter: tw.AlignCenter, AlignRight: tw.AlignRight}[r.Align]
	cells := r.Rows
	if r.Align == AlignCenter {
		// Pre-padded to the column width, the cells print as they are.
		cells, align = centre(r), tw.AlignLeft
	}
	t := tablewriter.NewTable(w,
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{Symbols: tw.NewSymbols(tw.StyleASCII)})),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAlignment(tw.AlignCenter),
		tablewriter.WithRowAlignment(align),
		tablewriter.WithHeaderAutoWrap(tw.WrapNone),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithTrimSpace(tw.Off),
	)
	headers := make([]any, len(r.Headers))
	for i, h := range r.Headers {
		headers[i] = h
	}
	t.Header(headers...)
	for _, row := range cells {
		vals := make([]any, len(row))
		for i, c := range row {
			vals[i] = c
		}
		if err := t.Append(vals...); err != nil {
			return err
		}
	}
	return t.Render()
}

// centre pads every data cell to its column's width the way prettytable
// (str.center) does: an odd excess puts the extra space on the left of
// even-width text and on the right of odd-width text. tablewriter always
// puts it on the right.
func centre(r Rows) [][]string {
	width := make([]int, len(r.Headers))
	for i, h := range r.Headers {
		width[i] = twwidth.Width(h)
	}
	for _, row := range r.Rows {
		for i, c := range row {
			if i < len(width) {
				width[i] = max(width[i], twwidth.Width(c))
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
			cw := twwidth.Width(c)
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

// Write prints data in the chosen format. For table and value formats the
// rows are printed; for json and yaml, data is marshalled (nil data means the
// rows as a list of objects keyed by header, in header order).
func Write(w io.Writer, format string, r Rows, data any) error {
	switch format {
	case Table, "":
		return RenderTable(w, r)
	case Value:
		for _, row := range r.Rows {
			if _, err := fmt.Fprintln(w, strings.Join(row, " ")); err != nil {
				return err
			}
		}
		return nil
	case JSON:
		if data == nil {
			_, err := fmt.Fprintf(w, "%s\n", rowsJSON(r))
			return err
		}
		b, err := json.MarshalIndent(data, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	case YAML:
		// Everything goes through JSON first, so YAML shows the same keys
		// as -f json (the json tags; yaml.v3 would ignore them) and, decoded
		// into a yaml.Node rather than a map, in the same order.
		js := rowsJSON(r)
		if data != nil {
			var err error
			if js, err = json.Marshal(data); err != nil {
				return err
			}
		}
		node := &yaml.Node{}
		if err := yaml.Unmarshal(js, node); err != nil {
			return err
		}
		blockStyle(node)
		enc := yaml.NewEncoder(w)
		enc.SetIndent(2)
		defer enc.Close()
		return enc.Encode(node)
	}
	return ValidateFormat(format)
}

// rowsJSON encodes rows as [{"Header": "cell", ...}] keeping column order.
func rowsJSON(r Rows) []byte {
	var buf bytes.Buffer
	buf.WriteString("[")
	for i, row := range r.Rows {
		if i > 0 {
			buf.WriteString(",")
		}
		buf.WriteString("\n  {")
		for j, h := range r.Headers {
			if j > 0 {
				buf.WriteString(",")
			}
			k, _ := json.Marshal(h)
			v, _ := json.Marshal(cell(row, j))
			fmt.Fprintf(&buf, "\n    %s: %s", k, v)
		}
		buf.WriteString("\n  }")
	}
	if len(r.Rows) > 0 {
		buf.WriteString("\n")
	}
	buf.WriteString("]")
	return buf.Bytes()
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
			if s := sanitize.String(c); s != c {
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
