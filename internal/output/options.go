package output

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/rpctl/rpctl/internal/pyjson"
)

// Options are cliff's output options, shared by every command.
type Options struct {
	Format string
	// Columns (-c, repeatable) keeps these columns, in the command's order;
	// unknown names are ignored unless none is known, as cliff does.
	Columns []string
	// SortColumns (--sort-column, repeatable): the first has priority;
	// unknown names are ignored.
	SortColumns    []string
	SortDescending bool
	// Quote is csv's --quote: all, minimal, none or nonnumeric (default).
	Quote string
	// NoIndent prints json on one line.
	NoIndent bool
	// MaxWidth (> 0) wraps table cells so that lines fit; FitWidth does so
	// to TermWidth (0: not a terminal, nothing is wrapped).
	MaxWidth   int
	FitWidth   bool
	TermWidth  int
	PrintEmpty bool
}

// Quote modes of -f csv.
var QuoteModes = []string{"all", "minimal", "none", "nonnumeric"}

// Validate rejects options that cannot apply.
func (o Options) Validate() error {
	if err := ValidateFormat(o.Format); err != nil {
		return err
	}
	if o.Quote != "" && !slices.Contains(QuoteModes, o.Quote) {
		return fmt.Errorf("invalid --quote %q: choose %s", o.Quote, strings.Join(QuoteModes, ", "))
	}
	return nil
}

// Write prints rows in the chosen format with the options applied (column
// names normalised to snake_case, -c, --sort-column). For json and yaml a
// non-nil data is printed instead of the rows (for documents that are not
// a list of rows, such as Placement's bodies); the row options do not
// apply to it.
func (o Options) Write(w io.Writer, r Rows, data any) error {
	if err := o.Validate(); err != nil {
		return err
	}
	if o.Format == Prometheus {
		return fmt.Errorf("-f %s: this command prints no metrics (capacity, status and claims audit do)", Prometheus)
	}
	if data != nil && (o.Format == JSON || o.Format == YAML) {
		js, err := json.Marshal(data)
		if err != nil {
			return err
		}
		return o.writeJSONDoc(w, js)
	}
	if r.single {
		return o.writeRecord(w, r)
	}
	r, err := o.apply(r)
	if err != nil {
		return err
	}
	switch o.Format {
	case Table, "":
		if r.Align == AlignLeft && len(r.Rows) > 0 {
			r.columnAlign = firstRowAlign(r)
		}
		return o.writeTable(w, r, 8)
	case Value:
		for _, row := range r.Rows {
			if _, err := fmt.Fprintln(w, strings.Join(row, " ")); err != nil {
				return err
			}
		}
		return nil
	case CSV:
		return writeCSV(w, r, o.Quote)
	case YAML:
		// cliff's yaml lister is yaml.safe_dump of dicts: keys sorted, in
		// the cells' own objects too.
		return writeYAML(w, rowsJSON(sortedColumns(r)), true)
	}
	return o.writeJSONDoc(w, rowsJSON(r))
}

// Write prints rows (or data) in format with no other option.
func Write(w io.Writer, format string, r Rows, data any) error {
	return Options{Format: format}.Write(w, r, data)
}

// WriteDocument prints a JSON document (json or yaml, as chosen) for
// commands whose output is not a list of rows, such as Placement's bodies.
func (o Options) WriteDocument(w io.Writer, js []byte) error {
	return o.writeJSONDoc(w, js)
}

// writeJSONDoc prints a JSON document as json (Python's json.dump layout,
// as cliff prints) or as block YAML with the same keys in the same order.
func (o Options) writeJSONDoc(w io.Writer, js []byte) error {
	if o.Format == YAML {
		return writeYAML(w, js, false)
	}
	indent := 2
	if o.NoIndent {
		indent = -1
	}
	out, err := PythonJSON(js, indent)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", out)
	return err
}

// apply normalises the column names, sorts and selects columns.
func (o Options) apply(r Rows) (Rows, error) {
	out := Rows{Align: r.Align, Headers: make([]string, len(r.Headers))}
	for i, h := range r.Headers {
		out.Headers[i] = h
		if !r.Verbatim {
			out.Headers[i] = ColumnName(h)
		}
	}
	order := make([]int, len(r.Rows))
	for i := range order {
		order[i] = i
	}
	// cliff sorts by the last --sort-column first, each sort stable.
	// A column is named by its header as printed or as the command wrote
	// it: a flavor column prints m1_small, and -c m1.small names it too.
	index := func(name string) int {
		if i := slices.Index(out.Headers, name); i >= 0 {
			return i
		}
		return slices.Index(r.Headers, name)
	}
	for k := len(o.SortColumns) - 1; k >= 0; k-- {
		col := index(o.SortColumns[k])
		if col < 0 || !sortable(r, col) {
			continue
		}
		sort.SliceStable(order, func(a, b int) bool {
			x, y := r.values(order[a]), r.values(order[b])
			if o.SortDescending {
				x, y = y, x
			}
			return less(cellAt(x, col), cellAt(y, col))
		})
	}
	keep := make([]int, 0, len(out.Headers))
	for i, h := range out.Headers {
		if len(o.Columns) == 0 || slices.Contains(o.Columns, h) || slices.Contains(o.Columns, r.Headers[i]) {
			keep = append(keep, i)
		}
	}
	if len(keep) == 0 {
		return Rows{}, fmt.Errorf("no recognized column names in %s; recognized columns are %s", pyList(o.Columns), pyList(out.Headers))
	}
	headers := make([]string, len(keep))
	for k, i := range keep {
		headers[k] = out.Headers[i]
	}
	out.Headers = headers
	for _, i := range order {
		text, vals := make([]string, len(keep)), make([]any, len(keep))
		all := r.values(i)
		for k, c := range keep {
			text[k] = cell(r.Rows[i], c)
			vals[k] = cellAt(all, c)
		}
		out.Rows = append(out.Rows, text)
		out.Values = append(out.Values, vals)
	}
	return out, nil
}

// sortable: Python cannot order dicts, and cliff, whose sorting is best
// effort, then leaves the rows as they are.
func sortable(r Rows, col int) bool {
	if len(r.Rows) < 2 {
		return true
	}
	for i := range r.Rows {
		if _, ok := cellAt(r.values(i), col).(Dict); ok {
			return false
		}
	}
	return true
}

func cellAt(row []any, i int) any {
	if i < len(row) {
		return row[i]
	}
	return ""
}

// less orders values as Python's sorted with cliff's key (v is None, v):
// None last, numbers by value, strings by code point; numbers before
// strings where Python would refuse to compare them.
func less(a, b any) bool {
	if a == nil || b == nil {
		return a != nil && b == nil
	}
	fa, aNum := number(a)
	fb, bNum := number(b)
	switch {
	case aNum && bNum:
		return fa < fb
	case aNum != bNum:
		return aNum
	}
	return Text(a) < Text(b)
}

func number(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case float64:
		return x, true
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	}
	return 0, false
}

// pyList renders names as Python's str() of a list: ['a', 'b'].
func pyList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = "'" + n + "'"
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// rowsJSON encodes rows as [{"column": value, ...}] keeping column order.
func rowsJSON(r Rows) []byte {
	var buf bytes.Buffer
	buf.WriteString("[")
	for i := range r.Rows {
		if i > 0 {
			buf.WriteString(",")
		}
		writeObject(&buf, r.Headers, r.values(i))
	}
	buf.WriteString("]")
	return buf.Bytes()
}

// writeObject writes one row as a JSON object, keys in column order.
func writeObject(buf *bytes.Buffer, headers []string, vals []any) {
	buf.WriteString("{")
	for j, h := range headers {
		if j > 0 {
			buf.WriteString(",")
		}
		k, _ := json.Marshal(h)
		buf.Write(k)
		buf.WriteString(":")
		buf.Write(jsonValue(cellAt(vals, j)))
	}
	buf.WriteString("}")
}

func jsonValue(v any) []byte {
	switch x := v.(type) {
	case nil:
		return []byte("null")
	case float64:
		// Python's json.dumps writes floats with repr (16.0, not 16).
		// NaN and infinities, which JSON has no number for, become their
		// text.
		s := PyFloat(x)
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return pyjson.AppendString(nil, s)
		}
		return []byte(s)
	}
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(Text(v))
	}
	return b
}

// firstRowAlign is cliff's TableFormatter.add_rows rule: a column whose
// first value is a number (Python int or float, not bool) is right-aligned,
// every other one left.
func firstRowAlign(r Rows) []Align {
	first := r.values(0)
	out := make([]Align, len(r.Headers))
	for i := range out {
		switch cellAt(first, i).(type) {
		case int64, float64:
			out[i] = AlignRight
		}
	}
	return out
}

// sortedColumns is r with its columns in name order.
func sortedColumns(r Rows) Rows {
	idx := make([]int, len(r.Headers))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return r.Headers[idx[a]] < r.Headers[idx[b]] })
	out := Rows{Headers: make([]string, len(idx))}
	for k, i := range idx {
		out.Headers[k] = r.Headers[i]
	}
	for row := range r.Rows {
		vals := r.values(row)
		text, typed := make([]string, len(idx)), make([]any, len(idx))
		for k, i := range idx {
			text[k], typed[k] = cell(r.Rows[row], i), cellAt(vals, i)
		}
		out.Rows = append(out.Rows, text)
		out.Values = append(out.Values, typed)
	}
	return out
}

// writeYAML prints a JSON document as block YAML, its objects' keys in
// their order or (sorted) by name.
func writeYAML(w io.Writer, js []byte, sorted bool) error {
	return writeYAMLNode(w, js, func(n *yaml.Node) {
		if sorted {
			sortMappings(n)
		}
	})
}

// writeYAMLRecord prints a record as cliff's ShowOne yaml does, one
// yaml.safe_dump per field: the fields in their order, the mappings in
// their values sorted.
func writeYAMLRecord(w io.Writer, js []byte) error {
	return writeYAMLNode(w, js, func(n *yaml.Node) {
		if len(n.Content) == 1 && n.Content[0].Kind == yaml.MappingNode {
			m := n.Content[0]
			for i := 1; i < len(m.Content); i += 2 {
				sortMappings(m.Content[i])
			}
		}
	})
}

func writeYAMLNode(w io.Writer, js []byte, arrange func(*yaml.Node)) error {
	node := &yaml.Node{}
	if err := yaml.Unmarshal(js, node); err != nil {
		return err
	}
	blockStyle(node)
	arrange(node)
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	defer enc.Close()
	return enc.Encode(node)
}

// sortMappings sorts every mapping's keys, as yaml.safe_dump does.
func sortMappings(n *yaml.Node) {
	for _, c := range n.Content {
		sortMappings(c)
	}
	if n.Kind != yaml.MappingNode {
		return
	}
	pairs := make([][2]*yaml.Node, 0, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		pairs = append(pairs, [2]*yaml.Node{n.Content[i], n.Content[i+1]})
	}
	slices.SortStableFunc(pairs, func(a, b [2]*yaml.Node) int { return strings.Compare(a[0].Value, b[0].Value) })
	n.Content = n.Content[:0]
	for _, p := range pairs {
		n.Content = append(n.Content, p[0], p[1])
	}
}
