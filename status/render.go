package status

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/mattn/go-runewidth"

	"github.com/rpctl/rpctl/internal/iostreams"
	"github.com/rpctl/rpctl/internal/pyjson"
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
//
// It draws the box itself rather than through tablewriter, which draws
// every other table (internal/output, issue 39): tablewriter measures with
// twwidth (displaywidth), this table with go-runewidth as it always has,
// and the two disagree on 1986 code points in a C locale (Hebrew points
// U+0591.., which go-runewidth counts 1 and displaywidth 0, among others)
// and on every ambiguous-width one under a CJK locale, where go-runewidth
// counts 2 and internal/output holds twwidth's process-wide setting
// narrow. A check name or details holding one would print differently.
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
	b.WriteString(pyjson.Quote(Title))
	b.WriteString(`, "checks": [`)
	for i, r := range results {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(`{"check": `)
		b.WriteString(pyjson.Quote(r.Check))
		fmt.Fprintf(&b, `, "result": %d, "details": `, int(r.Code))
		if r.Details == "" {
			b.WriteString("null")
		} else {
			b.WriteString(pyjson.Quote(r.Details))
		}
		// oslo.upgradecheck's keys, then where the check read from
		// (rpctl's addition, after them).
		if r.Source != "" {
			b.WriteString(`, "source": `)
			b.WriteString(pyjson.Quote(r.Source))
		}
		b.WriteString("}")
	}
	b.WriteString("]}\n")
	_, err := io.WriteString(w, b.String())
	return err
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
