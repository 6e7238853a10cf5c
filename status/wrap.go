package status

import (
	"strings"
	"unicode"
)

// wrap reproduces Python's textwrap.wrap(text, width, subsequent_indent=indent)
// with its defaults (tabs expanded to 8, whitespace made spaces, whitespace
// dropped at line edges, long words broken, breaks after hyphens), because
// operators' scripts and eyes are used to oslo.upgradecheck's exact lines.
// Widths count code points, as Python's len does.
func wrap(text string, width int, indent string) []string {
	chunks := splitChunks([]rune(munge(text)))
	ind := []rune(indent)
	var lines []string
	// chunks is consumed from the front; i is the next chunk.
	for i := 0; i < len(chunks); {
		var cur [][]rune
		curLen := 0
		var prefix []rune
		if len(lines) > 0 {
			prefix = ind
		}
		w := width - len(prefix)
		if len(lines) > 0 && isBlank(chunks[i]) {
			i++
		}
		for i < len(chunks) && curLen+len(chunks[i]) <= w {
			cur = append(cur, chunks[i])
			curLen += len(chunks[i])
			i++
		}
		if i < len(chunks) && len(chunks[i]) > w {
			// A chunk longer than any line: cut it where it fits, after its
			// last hyphen if one leaves something before it.
			space := w - curLen
			if w < 1 {
				space = 1
			}
			c := chunks[i]
			end := space
			if len(c) > space {
				if h := lastIndex(c[:space], '-'); h > 0 && hasNonHyphen(c[:h]) {
					end = h + 1
				}
			}
			cur = append(cur, c[:end])
			chunks[i] = c[end:]
			curLen = 0
			for _, x := range cur {
				curLen += len(x)
			}
		}
		if len(cur) > 0 && isBlank(cur[len(cur)-1]) {
			cur = cur[:len(cur)-1]
		}
		if len(cur) > 0 {
			var b strings.Builder
			b.WriteString(string(prefix))
			for _, x := range cur {
				b.WriteString(string(x))
			}
			lines = append(lines, b.String())
		}
	}
	return lines
}

// munge expands tabs to 8 columns and turns the other ASCII whitespace into
// spaces, as textwrap does before splitting.
func munge(s string) string {
	var b strings.Builder
	col := 0
	for _, r := range s {
		switch r {
		case '\t':
			n := 8 - col%8
			b.WriteString(strings.Repeat(" ", n))
			col += n
			continue
		case '\n', '\r':
			b.WriteByte(' ')
			col = 0
			continue
		case '\v', '\f':
			r = ' '
		}
		b.WriteRune(r)
		col++
	}
	return b.String()
}

func isWS(r rune) bool { return r == ' ' }

// isWord is Python's \w for str patterns.
func isWord(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r) }

// isLetter is textwrap's [^\d\W]: a word character that is not a digit.
func isLetter(r rune) bool { return isWord(r) && !unicode.IsDigit(r) }

// isWordPunct is textwrap's [\w!"'&.,?].
func isWordPunct(r rune) bool { return isWord(r) || strings.ContainsRune("!\"'&.,?", r) }

// emDashAt reports whether t[i:] starts with two or more hyphens followed by
// a word character.
func emDashAt(t []rune, i int) bool {
	j := i
	for j < len(t) && t[j] == '-' {
		j++
	}
	return j-i >= 2 && j < len(t) && isWord(t[j])
}

func at(t []rune, i int) rune {
	if i < 0 || i >= len(t) {
		return 0
	}
	return t[i]
}

// splitChunks cuts munged text into textwrap's indivisible chunks: runs of
// spaces, em-dashes between words, and words split after hyphens that sit
// between letters ("goof-" "ball").
func splitChunks(t []rune) [][]rune {
	var out [][]rune
	for i := 0; i < len(t); {
		if isWS(t[i]) {
			j := i
			for j < len(t) && isWS(t[j]) {
				j++
			}
			out, i = append(out, t[i:j]), j
			continue
		}
		if i > 0 && isWordPunct(t[i-1]) && emDashAt(t, i) {
			j := i
			for t[j] == '-' {
				j++
			}
			out, i = append(out, t[i:j]), j
			continue
		}
		j := i + 1
		for ; ; j++ {
			if j == len(t) || isWS(t[j]) {
				break
			}
			if t[j] == '-' && (isLetter(at(t, j-2)) && isLetter(at(t, j-1)) ||
				isLetter(at(t, j-3)) && at(t, j-2) == '-' && isLetter(at(t, j-1))) &&
				isLetter(at(t, j+1)) && (isLetter(at(t, j+2)) || at(t, j+2) == '-' && isLetter(at(t, j+3))) {
				j++
				break
			}
			if isWordPunct(t[j-1]) && emDashAt(t, j) {
				break
			}
		}
		out, i = append(out, t[i:j]), j
	}
	return out
}

func isBlank(c []rune) bool {
	for _, r := range c {
		if !unicode.IsSpace(r) {
			return false
		}
	}
	return true
}

func lastIndex(c []rune, r rune) int {
	for i := len(c) - 1; i >= 0; i-- {
		if c[i] == r {
			return i
		}
	}
	return -1
}

func hasNonHyphen(c []rune) bool {
	for _, r := range c {
		if r != '-' {
			return true
		}
	}
	return false
}
