package cmdutil

import (
	"errors"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/rpctl/rpctl/internal/dsn"
	"github.com/rpctl/rpctl/internal/safefile"
)

// OutputPolicy is how a command may write the files the operator names
// (--out, --plot, --log-file): --force (rpctl's, or a command's own
// --force, which says the operator accepts replacing things) allows
// replacing an existing file; the databases and config files the command
// reads are never written.
func (f *Factory) OutputPolicy(c *cobra.Command) safefile.Policy {
	force := f.Force
	if c != nil {
		if fl := c.Flags().Lookup("force"); fl != nil && fl.Value.String() == "true" {
			force = true
		}
	}
	return safefile.Policy{Force: force, Protected: f.readPaths()}
}

// readPaths lists the files the run reads: the embedded database, every
// SQLite database a flag or config file names, and the config files. A
// config file that cannot be read adds nothing here; the command reports
// it when it loads its options.
func (f *Factory) readPaths() []string {
	paths := append([]string{f.Embedded}, f.ConfigFiles...)
	urls := append([]string{f.APIDB, f.PlacementDB}, f.CellDBs...)
	if o, err := f.Options(); err == nil {
		urls = append(urls, o.CellDB.Value, o.APIDB.Value, o.PlacementDB.Value)
	}
	for _, u := range urls {
		if u == "" {
			continue
		}
		if t, err := dsn.Parse(u); err == nil && t.Driver == dsn.SQLite && t.Database != ":memory:" {
			paths = append(paths, t.Database)
		}
	}
	return paths
}

// FileSafetyExit gives a refused output path its code: 2, the run failed
// and wrote nothing.
func FileSafetyExit(err error) error {
	if errors.Is(err, safefile.ErrExists) || errors.Is(err, safefile.ErrProtected) || errors.Is(err, safefile.ErrNotRegular) || errors.Is(err, safefile.ErrNoPlace) {
		return &ExitError{Code: ExitFailed, Err: err}
	}
	return err
}

// PathFlagAnnotation marks a flag that takes a file or directory path:
// "output" (written through OutputPolicy) or "input" (only read). The
// file-safety test requires every path-taking flag to say which it is and
// tests every output one.
const PathFlagAnnotation = "rpctl/path"

// MarkPathFlags annotates the named flags of fs as taking paths of kind.
func MarkPathFlags(fs *pflag.FlagSet, kind string, names ...string) {
	for _, n := range names {
		if err := fs.SetAnnotation(n, PathFlagAnnotation, []string{kind}); err != nil {
			panic(err) // a programming error: the flag is not defined
		}
	}
}
