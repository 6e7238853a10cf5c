package output

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"unicode"
)

// Cell is a value whose text in tables and -f value differs from the value
// json, yaml and csv carry: a NULL uuid shown as "-", say.
type Cell struct {
	Text  string
	Value any
}

// Add appends a row of typed cells: string, int, int64, float64, bool, nil,
// a pointer to one of those (nil pointer = nil), or a Cell.
func (r *Rows) Add(cells ...any) {
	if len(r.Values) < len(r.Rows) {
		// Rows appended as text before: they stay strings.
		for _, row := range r.Rows[len(r.Values):] {
			vals := make([]any, len(row))
			for i, c := range row {
				vals[i] = c
			}
			r.Values = append(r.Values, vals)
		}
	}
	text := make([]string, len(cells))
	vals := make([]any, len(cells))
	for i, c := range cells {
		if cl, ok := c.(Cell); ok {
			text[i], vals[i] = cl.Text, deref(cl.Value)
			continue
		}
		vals[i] = deref(c)
		text[i] = Text(vals[i])
	}
	r.Rows = append(r.Rows, text)
	r.Values = append(r.Values, vals)
}

func deref(v any) any {
	switch p := v.(type) {
	case *string:
		if p == nil {
			return nil
		}
		return *p
	case *int64:
		if p == nil {
			return nil
		}
		return *p
	case *int:
		if p == nil {
			return nil
		}
		return int64(*p)
	case *float64:
		if p == nil {
			return nil
		}
		return *p
	case *bool:
		if p == nil {
			return nil
		}
		return *p
	case int:
		return int64(p)
	case int32:
		return int64(p)
	case uint32:
		return int64(p)
	}
	return v
}

// Text is a value as Python's str() prints it, as cliff's table and value
// formatters do: None, True, 16.0.
func Text(v any) string {
	switch x := v.(type) {
	case nil:
		return "None"
	case string:
		return x
	case bool:
		if x {
			return "True"
		}
		return "False"
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return PyFloat(x)
	case Dict:
		return x.Repr()
	}
	return fmt.Sprint(v)
}

// PyFloat formats f as Python's repr: the shortest round-tripping digits,
// always with a fraction or an exponent ("16.0", "1e+16", "1e-05").
func PyFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	abs := math.Abs(f)
	if abs != 0 && (abs >= 1e16 || abs < 1e-4) {
		s := strconv.FormatFloat(f, 'e', -1, 64)
		// Go writes e+16 / e-05 as Python does, two exponent digits at least.
		return s
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.ContainsAny(s, ".") {
		s += ".0"
	}
	return s
}

// ColumnName is the column-name convention: lower-case snake_case
// ("Hypervisor Hostname" -> "hypervisor_hostname", "vCPUs" -> "vcpus").
func ColumnName(h string) string {
	var b strings.Builder
	under := false
	for _, r := range h {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if under && b.Len() > 0 {
				b.WriteByte('_')
			}
			under = false
			b.WriteRune(unicode.ToLower(r))
		case r == '#':
			b.WriteString("number")
		default:
			under = true
		}
	}
	return b.String()
}

// values returns row i as typed values (strings when Add was not used).
func (r Rows) values(i int) []any {
	if i < len(r.Values) {
		return r.Values[i]
	}
	vals := make([]any, len(r.Rows[i]))
	for k, c := range r.Rows[i] {
		vals[k] = c
	}
	return vals
}

// Fields lists a struct's exported fields by their json names (embedded
// structs flattened, "-" skipped) with their values, for commands whose
// --long output is every column of a row type.
func Fields(v any) (names []string, values []any) {
	rv := reflect.Indirect(reflect.ValueOf(v))
	rt := rv.Type()
	for i := 0; i < rt.NumField(); i++ {
		sf := rt.Field(i)
		if !sf.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		fv := rv.Field(i)
		if sf.Anonymous && fv.Kind() == reflect.Struct && name == "" {
			n, vals := Fields(fv.Interface())
			names, values = append(names, n...), append(values, vals...)
			continue
		}
		if name == "" {
			name = ColumnName(sf.Name)
		}
		names = append(names, name)
		values = append(values, fieldValue(fv))
	}
	return names, values
}

func fieldValue(fv reflect.Value) any {
	if fv.Kind() == reflect.Pointer {
		if fv.IsNil() {
			return nil
		}
		fv = fv.Elem()
	}
	switch fv.Kind() {
	case reflect.String:
		return fv.String()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return fv.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return int64(fv.Uint())
	case reflect.Float32, reflect.Float64:
		return fv.Float()
	case reflect.Bool:
		return fv.Bool()
	}
	if t, ok := fv.Interface().(interface{ Format(string) string }); ok {
		// time.Time, as Nova's tools print datetimes.
		return t.Format("2006-01-02T15:04:05.000000")
	}
	return fmt.Sprint(fv.Interface())
}
