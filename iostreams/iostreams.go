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

	outTTY, errTTY bool
	colorEnabled   bool
	// Verbose asks for extra detail on ErrOut (--verbose).
	Verbose bool
}

// System returns the process's streams. Colour is on only when stdout is a
// terminal and NO_COLOR is unset (https://no-color.org).
func System() *IOStreams {
	outTTY := isTerminal(os.Stdout)
	_, noColor := os.LookupEnv("NO_COLOR")
	return &IOStreams{
		In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr,
		outTTY:       outTTY,
		errTTY:       isTerminal(os.Stderr),
		colorEnabled: outTTY && !noColor && os.Getenv("TERM") != "dumb",
	}
}

func isTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }

// Test returns streams backed by buffers, not a terminal.
func Test() (*IOStreams, *bytes.Buffer, *bytes.Buffer, *bytes.Buffer) {
	in, out, errOut := &bytes.Buffer{}, &bytes.Buffer{}, &bytes.Buffer{}
	return &IOStreams{In: in, Out: out, ErrOut: errOut}, in, out, errOut
}

// IsStdoutTTY reports whether Out is a terminal.
func (s *IOStreams) IsStdoutTTY() bool { return s.outTTY }

// IsStderrTTY reports whether ErrOut is a terminal (progress bars go there).
func (s *IOStreams) IsStderrTTY() bool { return s.errTTY }

// SetStdoutTTY overrides terminal detection, for tests.
func (s *IOStreams) SetStdoutTTY(tty bool) { s.outTTY = tty }

// SetStderrTTY overrides terminal detection, for tests.
func (s *IOStreams) SetStderrTTY(tty bool) { s.errTTY = tty }

// SetColorEnabled overrides colour detection, for tests.
func (s *IOStreams) SetColorEnabled(on bool) { s.colorEnabled = on }

// ColorEnabled reports whether output may carry ANSI colour.
func (s *IOStreams) ColorEnabled() bool { return s.colorEnabled }

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

// Muted greys out secondary text.
func (p Palette) Muted(s string) string { return p.paint("8", false, s) }
