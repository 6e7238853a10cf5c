// Package iostreams is rpctl's one abstraction over standard input, output
// and error: it knows whether output goes to a terminal, so commands can
// colour and animate there and print plain, stable text into pipes and CI
// logs.
package iostreams

import (
	"bytes"
	"io"
	"os"

	"github.com/charmbracelet/lipgloss"
	"golang.org/x/term"
)

// IOStreams are the streams of one command run.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer

	errTTY       bool
	inTTY        bool
	colorEnabled bool
	// Verbose asks for extra detail on ErrOut (--verbose).
	Verbose bool
}

// System returns the process's streams.
func System() *IOStreams {
	return &IOStreams{
		In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr,
		errTTY:       isTerminal(os.Stderr),
		inTTY:        isTerminal(os.Stdin),
		colorEnabled: useColor(isTerminal(os.Stdout), os.LookupEnv),
	}
}

// useColor says whether stdout may carry colour: only on a terminal, never
// with NO_COLOR set (https://no-color.org) or TERM=dumb.
func useColor(stdoutTTY bool, lookupEnv func(string) (string, bool)) bool {
	if _, noColor := lookupEnv("NO_COLOR"); noColor {
		return false
	}
	term, _ := lookupEnv("TERM")
	return stdoutTTY && term != "dumb"
}

// TerminalWidth is the width of the terminal standard output goes to, 0
// when it is not a terminal (tables are then never wrapped to fit).
func (s *IOStreams) TerminalWidth() int {
	f, ok := s.Out.(*os.File)
	if !ok || !isTerminal(f) {
		return 0
	}
	w, _, err := term.GetSize(int(f.Fd()))
	if err != nil {
		return 0
	}
	return w
}

func isTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }

// Test returns streams backed by buffers, not a terminal.
func Test() (*IOStreams, *bytes.Buffer, *bytes.Buffer, *bytes.Buffer) {
	in, out, errOut := &bytes.Buffer{}, &bytes.Buffer{}, &bytes.Buffer{}
	return &IOStreams{In: in, Out: out, ErrOut: errOut}, in, out, errOut
}

// IsStderrTTY reports whether ErrOut is a terminal (progress bars go there).
func (s *IOStreams) IsStderrTTY() bool { return s.errTTY }

// IsStdinTTY reports whether In is a terminal (where rpctl may ask).
func (s *IOStreams) IsStdinTTY() bool { return s.inTTY }

// SetStdinTTY overrides terminal detection of In, for tests.
func (s *IOStreams) SetStdinTTY(on bool) { s.inTTY = on }

// SetColorEnabled overrides colour detection, for tests.
func (s *IOStreams) SetColorEnabled(on bool) { s.colorEnabled = on }

// Palette colours words by meaning; with colour off it returns them as they are.
type Palette struct{ on bool }

// Palette returns the colour scheme for Out.
func (s *IOStreams) Palette() Palette { return Palette{on: s.colorEnabled} }

func (p Palette) paint(c lipgloss.Color, bold bool, txt string) string {
	if !p.on {
		return txt
	}
	st := lipgloss.NewStyle().Foreground(c).Bold(bold)
	return st.Render(txt)
}

// Success colours good news green.
func (p Palette) Success(s string) string { return p.paint("2", true, s) }

// Warning colours warnings yellow.
func (p Palette) Warning(s string) string { return p.paint("3", true, s) }

// Failure colours failures red.
func (p Palette) Failure(s string) string { return p.paint("1", true, s) }
