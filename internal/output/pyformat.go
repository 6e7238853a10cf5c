package output

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/rpctl/rpctl/internal/pyjson"
)

// PythonJSON re-lays a JSON document out as Python's json.dump does (what
// cliff prints): with indent >= 0 one member per line indented by indent
// spaces and ", "/": " separators elsewhere; with indent < 0 (--noindent)
// on one line with ", " and ": ". Key order and number literals are kept;
// strings are escaped as json.dumps does (non-ASCII as \uXXXX).
func PythonJSON(doc []byte, indent int) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var b bytes.Buffer
	if err := pyValue(dec, &b, indent, 0); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func pyValue(dec *json.Decoder, b *bytes.Buffer, indent, depth int) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch t := tok.(type) {
	case json.Delim:
		closer := map[json.Delim]string{'[': "]", '{': "}"}[t]
		b.WriteString(string(t))
		n := 0
		for dec.More() {
			if n > 0 {
				b.WriteString(",")
				if indent < 0 {
					b.WriteString(" ")
				}
			}
			newline(b, indent, depth+1)
			if t == '{' {
				key, err := dec.Token()
				if err != nil {
					return err
				}
				b.Write(pyjson.AppendString(nil, fmt.Sprint(key)))
				b.WriteString(": ")
			}
			if err := pyValue(dec, b, indent, depth+1); err != nil {
				return err
			}
			n++
		}
		if _, err := dec.Token(); err != nil {
			return err
		}
		if n > 0 {
			newline(b, indent, depth)
		}
		b.WriteString(closer)
	case string:
		b.Write(pyjson.AppendString(nil, t))
	case json.Number:
		b.WriteString(t.String())
	case bool:
		fmt.Fprint(b, t)
	case nil:
		b.WriteString("null")
	}
	return nil
}

func newline(b *bytes.Buffer, indent, depth int) {
	if indent >= 0 {
		b.WriteString("\n" + strings.Repeat(" ", indent*depth))
	}
}
