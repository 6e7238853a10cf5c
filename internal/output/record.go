package output

import (
	"bytes"
	"fmt"
	"io"
)

// Record returns rows holding one record, as cliff's ShowOne commands
// produce: its fields are the columns, so that -c picks fields, -f value
// -c uuid prints the uuid alone, and json/yaml print one object. cells are
// typed as in Add.
func Record(fields []string, cells ...any) Rows {
	r := Rows{Headers: fields, single: true}
	r.Add(cells...)
	return r
}

// AddField appends a field to a record.
func (r *Rows) AddField(name string, cell any) {
	r.Headers = append(r.Headers, name)
	vals := []any{cell}
	text := Text(deref(cell))
	if cl, ok := cell.(Cell); ok {
		text, vals[0] = cl.Text, deref(cl.Value)
	} else {
		vals[0] = deref(cell)
	}
	r.Rows[0] = append(r.Rows[0], text)
	r.Values[0] = append(r.Values[0], vals[0])
}

// IsRecord reports whether r is one record (Record), for formats that
// print a record differently from a list.
func (r Rows) IsRecord() bool { return r.single }

// writeRecord prints a record as cliff's ShowOne formatters do: table as
// two columns (Field, Value, cliff's headers), value as one value per line, json as one
// object, yaml as one mapping. csv, which ShowOne has not, prints the
// header line and one row. --sort-column has nothing to sort.
func (o Options) writeRecord(w io.Writer, r Rows) error {
	o.SortColumns = nil
	r, err := o.apply(r)
	if err != nil {
		return err
	}
	var text []string
	var vals []any
	if len(r.Rows) == 1 {
		text, vals = r.Rows[0], r.Values[0]
	}
	switch o.Format {
	case Table, "":
		t := Rows{Headers: []string{"Field", "Value"}}
		for i, h := range r.Headers {
			t.Rows = append(t.Rows, []string{h, cell(text, i)})
		}
		return o.writeTable(w, t, 16)
	case Value:
		for i := range r.Headers {
			if _, err := fmt.Fprintln(w, cell(text, i)); err != nil {
				return err
			}
		}
		return nil
	case CSV:
		return writeCSV(w, r, o.Quote)
	}
	var buf bytes.Buffer
	writeObject(&buf, r.Headers, vals)
	if o.Format == YAML {
		return writeYAMLRecord(w, buf.Bytes())
	}
	return o.writeJSONDoc(w, buf.Bytes())
}
