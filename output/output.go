// Package output renders command results in the formats OpenStack operators
// know from python-openstackclient: table, json, yaml and value.
package output

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
	"gopkg.in/yaml.v3"
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
	// Align applies to the data cells; headers are centred like prettytable.
	Align Align
}

// RenderTable writes an ASCII table in the prettytable style that nova-manage
// and openstackclient print, so operators' scripts that scrape it keep
// working.
func RenderTable(w io.Writer, r Rows) error {
	align := map[Align]tw.Align{AlignLeft: tw.AlignLeft, AlignCenter: tw.AlignCenter, AlignRight: tw.AlignRight}[r.Align]
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
	for _, row := range r.Rows {
		cells := make([]any, len(row))
		for i, c := range row {
			cells[i] = c
		}
		if err := t.Append(cells...); err != nil {
			return err
		}
	}
	return t.Render()
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
		var b []byte
		var err error
		if data == nil {
			b, err = rowsJSON(r)
		} else {
			b, err = json.MarshalIndent(data, "", "  ")
		}
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	case YAML:
		if data == nil {
			b, err := rowsJSON(r)
			if err != nil {
				return err
			}
			// Decoding into a yaml.Node (YAML is a superset of JSON) keeps
			// the header order that a map would lose.
			node := &yaml.Node{}
			if err := yaml.Unmarshal(b, node); err != nil {
				return err
			}
			blockStyle(node)
			enc := yaml.NewEncoder(w)
			enc.SetIndent(2)
			defer enc.Close()
			return enc.Encode(node)
		}
		enc := yaml.NewEncoder(w)
		enc.SetIndent(2)
		defer enc.Close()
		return enc.Encode(data)
	}
	return ValidateFormat(format)
}

// rowsJSON encodes rows as [{"Header": "cell", ...}] keeping column order.
func rowsJSON(r Rows) ([]byte, error) {
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
	return buf.Bytes(), nil
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
