package cmd

import (
	"os"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/rpctl/rpctl/internal/output"
)

// addOutputFlags adds -f and cliff's output options to every command, as
// openstackclient offers them on every list command.
func addOutputFlags(root *cobra.Command, f *Factory) {
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

// validateOutputFlags runs before every command.
func validateOutputFlags(f *Factory) error {
	f.Output.Format = f.Format
	f.Output.TermWidth = f.IO.TerminalWidth()
	return f.Output.Validate()
}
