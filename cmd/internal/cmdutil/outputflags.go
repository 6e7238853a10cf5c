package cmdutil

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rpctl/rpctl/internal/output"
	"github.com/rpctl/rpctl/internal/sanitize"
)

// AddOutputFlags adds -f and cliff's output options to every command, as
// openstackclient offers them on every list command.
func AddOutputFlags(root *cobra.Command, f *Factory) {
	pf := root.PersistentFlags()
	o := &f.Output
	pf.StringVarP(&f.Format, "format", "f", output.Table, "output format: table, json, yaml, csv or value")
	pf.StringArrayVarP(&o.Columns, "column", "c", nil, "show only this column (repeatable; snake_case names as in -f json)")
	pf.StringArrayVar(&o.SortColumns, "sort-column", nil, "sort the rows by this column (repeatable, first has priority; unknown names are ignored)")
	pf.Bool("sort-ascending", false, "sort the column(s) in ascending order (the default)")
	pf.BoolVar(&o.SortDescending, "sort-descending", false, "sort the column(s) in descending order")
	pf.StringVar(&o.Quote, "quote", "nonnumeric", "-f csv: when to quote: all, minimal, none or nonnumeric")
	pf.BoolVar(&o.NoIndent, "noindent", false, "-f json: print on one line")
	// cliff's environment defaults.
	maxWidth, _ := strconv.Atoi(os.Getenv("CLIFF_MAX_TERM_WIDTH"))
	fit, _ := strconv.Atoi(os.Getenv("CLIFF_FIT_WIDTH"))
	pf.IntVar(&o.MaxWidth, "max-width", maxWidth, "-f table: wrap cells so that lines fit in this many characters (<1: no limit; env CLIFF_MAX_TERM_WIDTH)")
	pf.BoolVar(&o.FitWidth, "fit-width", fit != 0, "-f table: wrap cells to fit the terminal (env CLIFF_FIT_WIDTH=1)")
	pf.BoolVar(&o.PrintEmpty, "print-empty", false, "-f table: print the headers even when there is no row")
	root.MarkFlagsMutuallyExclusive("sort-ascending", "sort-descending")
}

// ValidateOutputFlags runs before every command: a format c does not take
// is refused before anything is read or written.
func ValidateOutputFlags(c *cobra.Command, f *Factory) error {
	f.Output.Format = f.Format
	f.Output.TermWidth = f.IO.TerminalWidth()
	if err := f.Output.Validate(); err != nil {
		return err
	}
	formats, why := FormatsOf(c)
	switch {
	case why != "" && c.Flags().Changed("format"):
		return fmt.Errorf("-f %s: %s", f.Format, why)
	case why == "" && !slices.Contains(formats, f.Format):
		return fmt.Errorf("-f %s: %s prints no metrics; its formats are %s", f.Format, c.CommandPath(), strings.Join(formats, ", "))
	}
	return nil
}

// NoticeOut is where a command's sentences for people go (summaries,
// "Released ...", nova-manage's messages): standard output beside a table,
// standard error when stdout is for a program (json, yaml, csv, value), so
// that it stays one well-formed document.
func (f *Factory) NoticeOut() io.Writer {
	if f.Format == output.Table || f.Format == "" {
		return f.IO.Out
	}
	return f.IO.ErrOut
}

// The -f values every command takes; offerFormats and refuseFormats
// declare the exceptions, which TestEveryCommandEveryFormat runs.
var standardFormats = []string{output.Table, output.JSON, output.YAML, output.CSV, output.Value}

const (
	formatsAnnotation        = "rpctl/formats"
	formatsRefusedAnnotation = "rpctl/formats-refused"
)

// OfferFormats declares the formats c prints besides the standard five
// (-f prometheus); its help says how.
func OfferFormats(c *cobra.Command, extra ...string) {
	if c.Annotations == nil {
		c.Annotations = map[string]string{}
	}
	c.Annotations[formatsAnnotation] = strings.Join(extra, ",")
}

// RefuseFormats declares that c prints no rows, so that any -f given is
// refused with why, which c's help must say too.
func RefuseFormats(c *cobra.Command, why string) {
	if c.Annotations == nil {
		c.Annotations = map[string]string{}
	}
	c.Annotations[formatsRefusedAnnotation] = why
}

// FormatsOf is every -f value c takes, or, for a command that prints no
// rows, why it takes none (then the default, table, is its only format).
func FormatsOf(c *cobra.Command) (formats []string, refused string) {
	if why := c.Annotations[formatsRefusedAnnotation]; why != "" {
		return []string{output.Table}, why
	}
	formats = slices.Clone(standardFormats)
	if extra := c.Annotations[formatsAnnotation]; extra != "" {
		formats = append(formats, strings.Split(extra, ",")...)
	}
	return formats, ""
}

// LineSanitizer is w for a writer that gets one message per Write (one
// fmt.Fprintf, ending in a newline): every control character in a message
// — an ESC or a newline in a name read from a database — is escaped as
// sanitize.String does, and the message's final newline kept, so each
// message stays one line that shows which bytes were there.
func LineSanitizer(w io.Writer) io.Writer { return lineSanitizer{w} }

type lineSanitizer struct{ w io.Writer }

func (l lineSanitizer) Write(p []byte) (int, error) {
	s := string(p)
	nl := strings.HasSuffix(s, "\n")
	s = sanitize.String(strings.TrimSuffix(s, "\n"))
	if nl {
		s += "\n"
	}
	if _, err := io.WriteString(l.w, s); err != nil {
		return 0, err
	}
	return len(p), nil
}
