package output

import (
	"io"
	"strings"
	"unicode"
)

// writeTable prints a table as cliff's table formatter does: nothing but a
// newline for no rows unless PrintEmpty, cells wrapped to fit --max-width
// (or the terminal with --fit-width).
//
// minWidth is cliff's narrowest wrap: 8 for a list (Lister), 16 for a
// record (ShowOne, which keeps its Field column readable).
func (o Options) writeTable(w io.Writer, r Rows, minWidth int) error {
	if len(r.Rows) == 0 {
		if !o.PrintEmpty {
			_, err := io.WriteString(w, "\n")
			return err
		}
		// prettytable closes an empty body with a second border line.
		var b strings.Builder
		if err := RenderTable(&b, r); err != nil {
			return err
		}
		border, _, _ := strings.Cut(b.String(), "\n")
		_, err := io.WriteString(w, b.String()+border+"\n")
		return err
	}
	width := o.MaxWidth
	if width <= 0 && o.FitWidth {
		width = o.TermWidth
	}
	if width > 0 {
		r = fitWidth(r, width, minWidth)
	}
	return RenderTable(w, r)
}

// fitWidth wraps the cells of the widest columns with cliff's rule
// (TableFormatter._assign_max_widths): columns narrower than an equal share
// are left alone, the others share what remains, none below minWidth;
// each is then wrapped at its own width, its share or its header's if wider,
// as prettytable does.
func fitWidth(r Rows, term, minWidth int) Rows {
	n := len(r.Headers)
	if n == 0 {
		return r
	}
	widths := make([]int, n)
	for i, h := range r.Headers {
		widths[i] = textWidth(h)
	}
	for _, row := range r.Rows {
		for i := range widths {
			widths[i] = max(widths[i], textWidth(cell(row, i)))
		}
	}
	line := 1
	for _, w := range widths {
		line += w + 3
	}
	if line <= term {
		return r
	}
	usable := max(0, term-1-3*n)
	optimal := max(0, usable/n)
	remaining := usable
	var shrink []int
	for i, w := range widths {
		if w <= optimal {
			remaining -= w
		} else {
			shrink = append(shrink, i)
		}
	}
	if len(shrink) == 0 {
		return r
	}
	limit := make([]int, n)
	to := remaining / len(shrink)
	for _, i := range shrink[:len(shrink)-1] {
		limit[i] = max(minWidth, to)
		remaining -= to
	}
	limit[shrink[len(shrink)-1]] = max(minWidth, remaining)
	// prettytable sizes a limited column by its header and its cells, each
	// capped at the limit (PrettyTable._compute_widths), and wraps every
	// cell at that width (_stringify_row): a header wider than the limit
	// widens the column, and its cells use all of it.
	for i := range limit {
		if limit[i] > 0 {
			limit[i] = max(textWidth(r.Headers[i]), min(widths[i], limit[i]))
		}
	}
	out := r
	out.Rows = make([][]string, len(r.Rows))
	for k, row := range r.Rows {
		out.Rows[k] = make([]string, len(row))
		for i, c := range row {
			if i < n && limit[i] > 0 {
				c = wrap(c, limit[i])
			}
			out.Rows[k][i] = c
		}
	}
	// prettytable sizes a wrapped column by its unwrapped cells, capped at
	// the limit, which can be wider than any wrapped line: pad one line.
	for i := range limit {
		if limit[i] == 0 || len(out.Rows) == 0 {
			continue
		}
		want := limit[i]
		if columnWidth(out, i) < want {
			lines := strings.Split(out.Rows[0][i], "\n")
			pad := strings.Repeat(" ", want-displayWidth(lines[0]))
			if r.Align == AlignRight {
				lines[0] = pad + lines[0]
			} else {
				lines[0] += pad
			}
			out.Rows[0][i] = strings.Join(lines, "\n")
		}
	}
	return out
}

func textWidth(s string) int {
	w := 0
	for _, l := range strings.Split(s, "\n") {
		w = max(w, displayWidth(l))
	}
	return w
}

// wrap fills each line of s wider than width as prettytable does, with
// Python's textwrap.fill: chunks are words and whitespace runs, words split
// after inner hyphens, a word longer than a line is cut (after its last
// hyphen that fits, if any). Widths count characters, as textwrap does.
func wrap(s string, width int) string {
	lines := strings.Split(s, "\n")
	for i, line := range lines {
		if displayWidth(line) > width {
			lines[i] = strings.Join(textwrapLines(line, width), "\n")
		}
	}
	return strings.Join(lines, "\n")
}

func textwrapLines(text string, width int) []string {
	text = strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return ' '
		}
		return r
	}, text)
	chunks := textwrapChunks(text)
	var lines []string
	for len(chunks) > 0 {
		if strings.TrimSpace(chunks[0]) == "" && len(lines) > 0 {
			chunks = chunks[1:]
		}
		var cur []string
		n := 0
		for len(chunks) > 0 && n+runeLen(chunks[0]) <= width {
			cur = append(cur, chunks[0])
			n += runeLen(chunks[0])
			chunks = chunks[1:]
		}
		if len(chunks) > 0 && runeLen(chunks[0]) > width {
			left := width - n
			if width < 1 {
				left = 1
			}
			chunk := []rune(chunks[0])
			end := left
			if len(chunk) > left {
				if h := lastIndexRune(chunk[:left], '-'); h > 0 && strings.Trim(string(chunk[:h]), "-") != "" {
					end = h + 1
				}
			}
			cur = append(cur, string(chunk[:end]))
			chunks[0] = string(chunk[end:])
		}
		if len(cur) > 0 && strings.TrimSpace(cur[len(cur)-1]) == "" {
			cur = cur[:len(cur)-1]
		}
		if len(cur) > 0 {
			lines = append(lines, strings.Join(cur, ""))
		}
	}
	return lines
}

// textwrapChunks splits text as textwrap's wordsep_re: whitespace runs, and
// words cut after a hyphen preceded by two letters (or letter-letter-) and
// followed by a letter, an optional hyphen and a letter.
func textwrapChunks(text string) []string {
	var chunks []string
	r := []rune(text)
	isLetter := func(i int) bool { return i >= 0 && i < len(r) && (unicode.IsLetter(r[i]) || r[i] == '_') }
	for i := 0; i < len(r); {
		j := i
		if r[i] == ' ' {
			for j < len(r) && r[j] == ' ' {
				j++
			}
			chunks = append(chunks, string(r[i:j]))
			i = j
			continue
		}
		for j < len(r) && r[j] != ' ' {
			if r[j] == '-' && j > i {
				before := isLetter(j-2) && isLetter(j-1) && j-2 >= i ||
					j-3 >= i && isLetter(j-3) && r[j-2] == '-' && isLetter(j-1)
				after := isLetter(j+1) && (isLetter(j+2) || j+2 < len(r) && r[j+2] == '-' && isLetter(j+3))
				if before && after {
					j++
					break
				}
			}
			j++
		}
		chunks = append(chunks, string(r[i:j]))
		i = j
	}
	return chunks
}

func runeLen(s string) int { return len([]rune(s)) }

func lastIndexRune(r []rune, c rune) int {
	for i := len(r) - 1; i >= 0; i-- {
		if r[i] == c {
			return i
		}
	}
	return -1
}

func columnWidth(r Rows, i int) int {
	w := textWidth(r.Headers[i])
	for _, row := range r.Rows {
		w = max(w, textWidth(cell(row, i)))
	}
	return w
}
