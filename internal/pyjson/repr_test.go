package pyjson

import "testing"

// TestRepr: Repr against what Debian's python3 printed for repr() of the
// same strings (quote choice, escapes, and the characters Python does and
// does not count printable).
func TestRepr(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"plain", `'plain'`},
		{"", `''`},
		{"it's", `"it's"`},
		{`say "hi"`, `'say "hi"'`},
		{`a'"b`, `'a\'"b'`},
		{"\\\t\n\r\x01", `'\\\t\n\r\x01'`},
		{"é\u00a0", `'é\xa0'`},
		{"a\u0085b\u200b\U000e0001\x7f", `'a\x85b\u200b\U000e0001\x7f'`},
		{"日本\u2028", `'日本\u2028'`},
	} {
		if got := Repr(c.in); got != c.want {
			t.Errorf("Repr(%q) = %s, want %s", c.in, got, c.want)
		}
	}
}
