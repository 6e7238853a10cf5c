package output

import (
	"bytes"
	"io"
	"sync"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/pkg/twwidth"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// narrowWidths makes twwidth measure as displayWidth does: its init
// guesses East Asian widths from LANG/LC_ALL/RUNEWIDTH_EASTASIAN, under
// which ambiguous characters (ü, ±, §...) count 2; prettytable counts them
// 1, and a table's bytes must not depend on the operator's locale. Set at
// first use, not at init (TestInitAllocations).
var narrowWidths = sync.OnceFunc(func() { twwidth.SetOptions(twwidth.Options{}) })

// writeASCII draws the prettytable-style box with tablewriter (the design
// card's table library, issue 39): a border, the header, a border, the
// rows (a cell's lines stacked, short cells padded with blank lines), a
// closing border; a table without rows stops after the header's border.
// align[i] applies to column i's data cells, headerAlign[i] to its header.
//
// Its bytes are ownASCII's on every shape rpctl prints
// (TestTablewriterMatchesOwn): tablewriter's own formatting is turned off
// (no header upper-casing, no wrapping, no trimming: cells arrive wrapped
// by fitWidth and centred by centre as prettytable does them).
//
// The one shape it does not draw is a table without a header row: no
// command prints one (every Rows has headers, and Write refuses -c that
// leaves none), but RenderTable accepts it, and there tablewriter leaves
// the header's lines out where rpctl has always drawn an empty header (and
// for no column at all prints nothing or "++" where rpctl draws "+"), so
// ownASCII keeps drawing it.
//
// The table is drawn into memory and written at once, as ownASCII does:
// one write to the terminal, and nothing half-written if drawing fails.
func writeASCII(w io.Writer, headers []string, rows [][]string, headerAlign, align []Align) error {
	if len(headers) == 0 {
		return ownASCII(w, headers, rows, headerAlign, align)
	}
	narrowWidths()
	var b bytes.Buffer
	t := tablewriter.NewTable(&b,
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{Symbols: tw.NewSymbols(tw.StyleASCII)})),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAutoWrap(tw.WrapNone),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithTrimSpace(tw.Off),
		tablewriter.WithTrimLine(tw.Off),
		tablewriter.WithHeaderAlignmentConfig(tw.CellAlignment{Global: tw.AlignLeft, PerColumn: twAligns(headerAlign)}),
		tablewriter.WithRowAlignmentConfig(tw.CellAlignment{Global: tw.AlignLeft, PerColumn: twAligns(align)}),
	)
	t.Header(anys(headers)...)
	for _, row := range rows {
		if err := t.Append(anys(row)...); err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	_, err := w.Write(b.Bytes())
	return err
}

func twAligns(al []Align) []tw.Align {
	out := make([]tw.Align, len(al))
	for i, a := range al {
		switch a {
		case AlignCenter:
			out[i] = tw.AlignCenter
		case AlignRight:
			out[i] = tw.AlignRight
		default:
			out[i] = tw.AlignLeft
		}
	}
	return out
}

func anys(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
