// Package sanitize makes text from databases and command lines safe to
// print on a terminal: a hostname or a query holding ESC [31m, BEL or CR
// must not recolour, beep at or overwrite the operator's screen.
package sanitize

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// String returns s with every control character (C0, DEL, C1) and every
// byte that is not UTF-8 written as \xNN, so that the result is one line
// that shows exactly which bytes were there.
func String(s string) string {
	clean := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f || c >= 0x80 {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f):
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}
