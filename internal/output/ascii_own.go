package output

import (
	"io"
	"strings"

	"github.com/clipperhouse/displaywidth"
)

// displayWidth is the columns s takes on a terminal: wide (East Asian)
// characters count 2, combining marks 0, each rune on its own as
// prettytable's wcwidth does. Cells reach here sanitized (no tabs or
// escapes), so nothing needs stripping; ambiguous-width characters count 1
// whatever the locale, so a table's bytes do not depend on LANG.
func displayWidth(s string) int {
	w := 0
	for _, r := range s {
		if r >= 0x20 && r < 0x7f {
			w++
			continue
		}
		w += narrow.Rune(r)
	}
	return w
}

var narrow = displaywidth.Options{}

// ownASCII is rpctl's own drawing of the prettytable-style box, which
// replaced tablewriter from 9fbb6d3 until issue 39 brought tablewriter
// back (writeASCII). It stays as the reference TestTablewriterMatchesOwn
// compares tablewriter's output with, byte for byte, on every table shape
// rpctl prints, and draws the one shape tablewriter draws otherwise (a
// table without a header row, see writeASCII).
//
// It draws the prettytable-style box: a border, the header, a
// border, the rows (a cell's lines stacked, short cells padded with blank
// lines), a closing border; a table without rows stops after the header's
// border. align[i] applies to column i's data cells, headerAlign[i] to its
// header.
func ownASCII(w io.Writer, headers []string, rows [][]string, headerAlign, align []Align) error {
	n := len(headers)
	for _, row := range rows {
		n = max(n, len(row))
	}
	widths := make([]int, n)
	measure := func(row []string) {
		for i, c := range row {
			for _, l := range strings.Split(c, "\n") {
				widths[i] = max(widths[i], displayWidth(l))
			}
		}
	}
	measure(headers)
	for _, row := range rows {
		measure(row)
	}
	var b strings.Builder
	border := func() {
		b.WriteByte('+')
		for _, cw := range widths {
			b.WriteString(strings.Repeat("-", cw+2))
			b.WriteByte('+')
		}
		b.WriteByte('\n')
	}
	line := func(row []string, al []Align) {
		cells := make([][]string, n)
		height := 1
		for i := range cells {
			cells[i] = strings.Split(cell(row, i), "\n")
			height = max(height, len(cells[i]))
		}
		for k := range height {
			b.WriteByte('|')
			for i, lines := range cells {
				s := ""
				if k < len(lines) {
					s = lines[k]
				}
				excess := widths[i] - displayWidth(s)
				left := 0
				switch al[i] {
				case AlignRight:
					left = excess
				case AlignCenter:
					left = excess / 2
				}
				b.WriteByte(' ')
				b.WriteString(strings.Repeat(" ", left))
				b.WriteString(s)
				b.WriteString(strings.Repeat(" ", excess-left))
				b.WriteString(" |")
			}
			b.WriteByte('\n')
		}
	}
	border()
	if n > 0 {
		line(headers, headerAlign)
		border()
	}
	for _, row := range rows {
		if len(row) > 0 {
			line(row, align)
		}
	}
	if len(rows) > 0 {
		border()
	}
	_, err := io.WriteString(w, b.String())
	return err
}
