package output

import (
	"bytes"
	"strings"
	"testing"
)

// TestRenderTableEscapesControlCharacters: a hostname holding ESC [31m or
// CR cannot recolour or overwrite the operator's terminal.
func TestRenderTableEscapesControlCharacters(t *testing.T) {
	rows := Rows{Headers: []string{"name"}, Rows: [][]string{{"\x1b[31mred\r"}, {"plain"}}}
	var b bytes.Buffer
	if err := RenderTable(&b, rows); err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(b.String(), "\x1b\r") || !strings.Contains(b.String(), `\x1b[31mred\x0d`) {
		t.Errorf("table:\n%s", b.String())
	}
	if rows.Rows[0][0] != "\x1b[31mred\r" {
		t.Error("the caller's rows were changed")
	}
}
