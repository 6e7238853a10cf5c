package status

import (
	"fmt"
	"github.com/mattn/go-runewidth"
	"io"
	"strconv"
	"strings"

	"github.com/rpctl/rpctl/iostreams"
)

// Title is oslo.upgradecheck's display_title.
const Title = "Upgrade Check Results"

// detailsWidth is the column oslo.upgradecheck wraps details at.
const detailsWidth = 60

// cellLines are the lines of one table cell, as
// "Check: %s\nResult: %s\nDetails: %s" with the details wrapped by textwrap.
func cellLines(r Result) (lines []string, resultLine int) {
	details := "None"
	if r.Details != "" {
		details = strings.Join(wrap(r.Details, detailsWidth, "  "), "\n")
	}
	cell := "Check: " + r.Check + "\nResult: " + r.Code.String() + "\nDetails: " + details
	// The check name and details may hold newlines of their own; prettytable
	// splits the cell on every one of them.
	lines = strings.Split(cell, "\n")
	return lines, strings.Count(r.Check, "\n") + 1
}

// RenderTable writes the single-column, left-aligned prettytable that
// oslo.upgradecheck prints (hrules=ALL), colouring the result word with p.
// Widths are measured on the plain text, so colour never shifts the borders.
func RenderTable(w io.Writer, results []Result, p iostreams.Palette) error {
	type cell struct {
		lines      []string
		resultLine int
		code       Code
	}
	cells := make([]cell, len(results))
	width := displayWidth(Title)
	for i, r := range results {
		lines, rl := cellLines(r)
		cells[i] = cell{lines, rl, r.Code}
		for _, l := range lines {
			width = max(width, displayWidth(l))
		}
	}
	var b strings.Builder
	rule := "+" + strings.Repeat("-", width+2) + "+\n"
	line := func(s, shown string) {
		b.WriteString("| ")
		b.WriteString(shown)
		b.WriteString(strings.Repeat(" ", width-displayWidth(s)))
		b.WriteString(" |\n")
	}
	b.WriteString(rule)
	line(Title, Title)
	b.WriteString(rule)
	for _, c := range cells {
		for i, l := range c.lines {
			shown := l
			if i == c.resultLine {
				shown = "Result: " + c.code.paint(p)
			}
			line(l, shown)
		}
		b.WriteString(rule)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// RenderJSON writes the document oslo.upgradecheck prints for --json, byte
// for byte as Python's json.dumps would: one line, ", " and ": " separators,
// non-ASCII escaped, details unwrapped and null when empty.
func RenderJSON(w io.Writer, results []Result) error {
	var b strings.Builder
	b.WriteString(`{"name": `)
	pyQuote(&b, Title)
	b.WriteString(`, "checks": [`)
	for i, r := range results {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(`{"check": `)
		pyQuote(&b, r.Check)
		fmt.Fprintf(&b, `, "result": %d, "details": `, int(r.Code))
		if r.Details == "" {
			b.WriteString("null")
		} else {
			pyQuote(&b, r.Details)
		}
		b.WriteString("}")
	}
	b.WriteString("]}\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// pyQuote writes s as Python's json.dumps (ensure_ascii=True) quotes it.
func pyQuote(b *strings.Builder, s string) {
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		default:
			switch {
			case r < 0x20 || r > 0x7f && r <= 0xffff:
				fmt.Fprintf(b, `\u%04x`, r)
			case r > 0xffff:
				r -= 0x10000
				fmt.Fprintf(b, `\u%04x\u%04x`, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
			default:
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
}

// String is oslo.upgradecheck's display name of a code.
func (c Code) String() string {
	switch c {
	case Success:
		return "Success"
	case Warning:
		return "Warning"
	case Failure:
		return "Failure"
	}
	return strconv.Itoa(int(c))
}

func (c Code) paint(p iostreams.Palette) string {
	switch c {
	case Success:
		return p.Success(c.String())
	case Warning:
		return p.Warning(c.String())
	}
	return p.Failure(c.String())
}

// displayWidth is the terminal width prettytable measures with wcwidth:
// East Asian wide characters and most emoji take two columns, combining
// marks none.
func displayWidth(s string) int {
	n := 0
	for _, r := range s {
		n += runewidth.RuneWidth(r)
	}
	return n
}
