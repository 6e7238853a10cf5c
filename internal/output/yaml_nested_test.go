package output

import (
	"bytes"
	"encoding/json"
	"testing"
)

// orderedObject marshals its keys in the order given, as a cell holding
// Placement's answer in Placement's order does.
type orderedObject [][2]any

func (o orderedObject) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for i, kv := range o {
		if i > 0 {
			b = append(b, ',')
		}
		k, _ := json.Marshal(kv[0])
		v, _ := json.Marshal(kv[1])
		b = append(append(append(b, k...), ':'), v...)
	}
	return append(b, '}'), nil
}

// TestYAMLSortsNestedKeys (issue 21): cliff's yaml lister is
// yaml.safe_dump, which sorts the keys of every mapping, the cells' own
// objects too (osc's allocation resources); json keeps the cell's order.
func TestYAMLSortsNestedKeys(t *testing.T) {
	var r Rows
	r.Headers = []string{"resources", "name"}
	r.Add(Cell{Text: "x", Value: orderedObject{{"VCPU", 2}, {"MEMORY_MB", 1024}}}, "a")
	for _, tc := range []struct{ format, want string }{
		{YAML, "- name: a\n  resources:\n    MEMORY_MB: 1024\n    VCPU: 2\n"},
		{JSON, "[\n  {\n    \"resources\": {\n      \"VCPU\": 2,\n      \"MEMORY_MB\": 1024\n    },\n    \"name\": \"a\"\n  }\n]\n"},
	} {
		var b bytes.Buffer
		if err := Write(&b, tc.format, r, nil); err != nil {
			t.Fatal(err)
		}
		if b.String() != tc.want {
			t.Errorf("-f %s:\n%s\nwant:\n%s", tc.format, b.String(), tc.want)
		}
	}
}
