package output

import (
	"io"
	"strings"
)

// writeCSV prints rows as cliff's -f csv does: Python's csv.writer with
// escapechar "\" and "\n" line ends, quoting by mode (default nonnumeric:
// every value but numbers quoted; None is "" quoted).
func writeCSV(w io.Writer, r Rows, mode string) error {
	if mode == "" {
		mode = "nonnumeric"
	}
	var b strings.Builder
	headers := make([]any, len(r.Headers))
	for i, h := range r.Headers {
		headers[i] = h
	}
	csvRow(&b, headers, mode)
	for i := range r.Rows {
		csvRow(&b, r.values(i), mode)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func csvRow(b *strings.Builder, vals []any, mode string) {
	for i, v := range vals {
		if i > 0 {
			b.WriteByte(',')
		}
		_, numeric := number(v)
		text := Text(v)
		if v == nil {
			text = ""
		}
		quote := false
		switch mode {
		case "all":
			quote = true
		case "nonnumeric":
			quote = !numeric
		case "minimal":
			// Python quotes a row's only field when it is empty.
			quote = len(vals) == 1 && text == ""
		}
		var f strings.Builder
		for _, c := range text {
			special := c == ',' || c == '"' || c == '\\' || c == '\n'
			switch {
			case !special:
				f.WriteRune(c)
			case mode == "none":
				f.WriteByte('\\')
				f.WriteRune(c)
			case c == '"':
				f.WriteString(`""`)
				quote = true
			case c == '\\':
				f.WriteString(`\\`)
			default:
				f.WriteRune(c)
				quote = true
			}
		}
		if quote {
			b.WriteByte('"')
		}
		b.WriteString(f.String())
		if quote {
			b.WriteByte('"')
		}
	}
	b.WriteByte('\n')
}
