package sanitize

import "testing"

func TestString(t *testing.T) {
	for in, want := range map[string]string{
		"plain host-1.example": "plain host-1.example",
		"\x1b[31mred\x1b[0m":   `\x1b[31mred\x1b[0m`,
		"bell\a":               `bell\x07`,
		"over\rwrite":          `over\x0dwrite`,
		"two\nlines\ttab":      `two\x0alines\x09tab`,
		"del\x7f":              `del\x7f`,
		"c1 \u009b31m":         `c1 \x9b31m`,
		"bad utf8 \xff\xfe":    `bad utf8 \xff\xfe`,
		"unicode ünïcødé 主机":   "unicode ünïcødé 主机",
	} {
		if got := String(in); got != want {
			t.Errorf("String(%q) = %q, want %q", in, got, want)
		}
	}
}
