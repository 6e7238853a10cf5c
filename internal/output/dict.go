package output

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/rpctl/rpctl/internal/pyjson"
)

// Dict is a cell holding a Python dict, as osc prints Placement's nested
// answers: keys in their insertion order, str() of the dict in table, value
// and csv ({'VCPU': 2, 'consumer_count': 1}), an object in json, a mapping
// with its keys sorted in yaml (yaml.safe_dump's order).
type Dict []Item

// Item is one key of a Dict; Value is typed as Add's cells, or a Dict.
type Item struct {
	Key   string
	Value any
}

// Repr is Python's repr of the dict.
func (d Dict) Repr() string {
	var b strings.Builder
	b.WriteByte('{')
	for i, it := range d {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(pyRepr(it.Key))
		b.WriteString(": ")
		b.WriteString(pyRepr(deref(it.Value)))
	}
	b.WriteByte('}')
	return b.String()
}

// MarshalJSON writes the keys in their order.
func (d Dict) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, it := range d {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(it.Key)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(jsonValue(deref(it.Value)))
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// pyRepr is Python's repr of a cell value: strings quoted as Python quotes
// them (single quotes unless the text holds one and no double quote).
func pyRepr(v any) string {
	switch x := v.(type) {
	case Dict:
		return x.Repr()
	case string:
		return pyjson.Repr(x)
	}
	return Text(v)
}
