// Package pyjson writes JSON strings byte for byte as Python's json.dumps
// does by default (ensure_ascii=True), for output that must equal what
// OpenStack's Python services print.
package pyjson

import "unicode/utf8"

const hex = "0123456789abcdef"

// AppendString appends s as a quoted JSON string: '"', '\\' and the control
// characters json.dumps names (\n \r \t \b \f) are escaped by name, every
// other character outside printable ASCII (0x20–0x7e) as \uXXXX, with
// surrogate pairs above the BMP. Invalid UTF-8 becomes U+FFFD, as Python's
// decoder with errors="replace" would have produced.
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c <= 0x7e && c != '"' && c != '\\' {
			i++
			continue
		}
		dst = append(dst, s[start:i]...)
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		start = i
		switch r {
		case '"':
			dst = append(dst, '\\', '"')
		case '\\':
			dst = append(dst, '\\', '\\')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\f':
			dst = append(dst, '\\', 'f')
		default:
			if r > 0xffff {
				r -= 0x10000
				dst = appendU(dst, 0xd800+(r>>10)&0x3ff)
				dst = appendU(dst, 0xdc00+r&0x3ff)
			} else {
				dst = appendU(dst, r)
			}
		}
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

func appendU(dst []byte, u rune) []byte {
	return append(dst, '\\', 'u', hex[u>>12&0xf], hex[u>>8&0xf], hex[u>>4&0xf], hex[u&0xf])
}

// Quote returns s as a quoted JSON string; see AppendString.
func Quote(s string) string { return string(AppendString(nil, s)) }
