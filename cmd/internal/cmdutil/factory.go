// Package cmdutil is the plumbing every rpctl command shares, as the GitHub
// CLI's cmdutil: the Factory (streams, config files, databases, the
// Placement API client), output and log flags, output files, exit codes,
// signals, secrets, progress lines and name completion. It imports no
// command package (internal/archtest checks it).
package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/rpctl/rpctl/internal/config"
	"github.com/rpctl/rpctl/internal/dsn"
	"github.com/rpctl/rpctl/internal/iostreams"
	"github.com/rpctl/rpctl/internal/logging"
	"github.com/rpctl/rpctl/internal/output"
	"github.com/rpctl/rpctl/placementclient"
	"github.com/rpctl/rpctl/storage"
	"github.com/rpctl/rpctl/storage/apidb"
)

// Factory carries what every command needs; tests build one with fake
// streams.
type Factory struct {
	IO *iostreams.IOStreams

	// Global flags.
	ConfigFiles []string
	ConfigDirs  []string
	// CreateFiles lets SQLite database files that do not exist be created
	// (init and sample-cloud); every other command refuses them.
	CreateFiles bool
	Embedded    string
	CellDBs     []string
	APIDB       string
	PlacementDB string
	Format      string
	Verbose     bool
	// Output holds -f and cliff's output options (set before every command
	// runs); Write applies them.
	Output output.Options
	// Logging flags (--debug, --log-file, -q).
	Debug   bool
	LogFile string
	Quiet   bool
	// Force allows output files (--out, --plot, --log-file) to replace
	// existing ones (OutputPolicy).
	Force bool
	// NovaReleaseFlag is --nova-release: the release the cloud runs, as
	// the operator names it (NovaRelease, ApplyNovaRelease).
	NovaReleaseFlag string

	// CloseLog closes --log-file's file (set by SetupLogging); Run calls it
	// once the command has ended.
	CloseLog func() error
	Args     []string // the command line, for the log
	// API names a live Placement API (placementapi.go).
	API APIFlags

	opts *config.Options
	// Placement is the Placement API client, made once.
	placement    *placementclient.Client
	placementErr error
	optsErr      error
}

// NewFactory returns a Factory over the given streams.
func NewFactory(io *iostreams.IOStreams) *Factory { return &Factory{IO: io} }

// Options returns the options from the config files, read once: the
// --config-file files (or, with neither them nor a database flag, the
// default files that exist), then every *.conf of each --config-dir.
func (f *Factory) Options() (config.Options, error) {
	if f.opts == nil && f.optsErr == nil {
		o, err := f.loadOptions()
		f.opts, f.optsErr = &o, err
	}
	if f.optsErr != nil {
		return config.Options{}, f.optsErr
	}
	return *f.opts, nil
}

// configFiles are the files Options reads, in order.
func (f *Factory) configFiles() ([]string, error) {
	files := f.ConfigFiles
	if len(files) == 0 && f.Embedded == "" && len(f.CellDBs) == 0 && f.APIDB == "" && f.PlacementDB == "" {
		files = config.ExistingDefaultFiles()
	}
	return config.WithDirs(files, f.ConfigDirs)
}

// HostOptions returns the options of one compute host's own nova.conf
// read over the files Options reads (later wins, as oslo.config reads
// --config-file after --config-file). An error names the file and line.
func (f *Factory) HostOptions(file string) (config.Options, error) {
	files, err := f.configFiles()
	if err != nil {
		return config.Options{}, err
	}
	return config.LoadFiles(append(files, file))
}

func (f *Factory) loadOptions() (config.Options, error) {
	files, err := f.configFiles()
	if err != nil {
		return config.Options{}, err
	}
	if f.IO != nil && f.IO.Verbose {
		if len(files) == 0 {
			fmt.Fprintln(f.IO.ErrOut, "config: no config file read")
		} else {
			fmt.Fprintf(f.IO.ErrOut, "config: read %s\n", strings.Join(files, ", "))
		}
	}
	o, err := config.LoadFiles(files)
	for _, s := range []config.Setting{o.CellDB, o.APIDB, o.PlacementDB} {
		logging.AddURLSecret(s.Value)
	}
	return o, err
}

// Sources combines flags and config files; flags win.
func (f *Factory) Sources() (storage.Sources, error) {
	o, err := f.Options()
	if err != nil {
		return storage.Sources{}, err
	}
	s := storage.Sources{Embedded: f.Embedded, CellMappings: apidb.ListCellMappings}
	for _, c := range f.CellDBs {
		s.CellDBs = append(s.CellDBs, storage.Source{URL: c, Origin: "--cell-db"})
	}
	s.ConfigCell = storage.Source{URL: o.CellDB.Value, Origin: o.CellDB.Source}
	s.APIDB = storage.Source{URL: o.APIDB.Value, Origin: o.APIDB.Source}
	if f.APIDB != "" {
		s.APIDB = storage.Source{URL: f.APIDB, Origin: "--api-db"}
	}
	s.PlacementDB = storage.Source{URL: o.PlacementDB.Value, Origin: o.PlacementDB.Source}
	if f.PlacementDB != "" {
		s.PlacementDB = storage.Source{URL: f.PlacementDB, Origin: "--placement-db"}
	}
	if !f.CreateFiles {
		if err := sqliteFilesExist(s); err != nil {
			return storage.Sources{}, err
		}
	}
	return s, nil
}

// Databases opens the databases a command needs (an error names the ways to
// configure a missing one) and those it wants when they are configured.
func (f *Factory) Databases(ctx context.Context, need, want storage.Need) (*storage.Databases, error) {
	s, err := f.Sources()
	if err != nil {
		return nil, err
	}
	return storage.Connect(ctx, s, need, want)
}

// Write prints rows in the --format the user chose, with cliff's output
// options (-c, --sort-column, --quote, --noindent, --max-width,
// --fit-width, --print-empty). Column names are snake_case, the same in
// every format. A non-nil data replaces the rows in json and yaml: only for
// documents that are not lists of rows (Placement's bodies, say).
func (f *Factory) Write(r output.Rows, data any) error {
	o := f.Output
	o.Format = f.Format
	return o.Write(f.IO.Out, r, data)
}

// sqliteFilesExist refuses SQLite database files that do not exist: SQLite
// would create an empty one and the command fail later with "no such table".
func sqliteFilesExist(s storage.Sources) error {
	check := func(path, origin string) error {
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%s: the database file %s does not exist (rpctl init or rpctl sample-cloud creates it)", origin, path)
		}
		return nil
	}
	if s.Embedded != "" {
		if err := check(s.Embedded, "--db"); err != nil {
			return err
		}
	}
	for _, src := range append(append([]storage.Source(nil), s.CellDBs...), s.ConfigCell, s.APIDB, s.PlacementDB) {
		if src.URL == "" {
			continue
		}
		if t, err := dsn.Parse(src.URL); err == nil && t.Driver == dsn.SQLite && t.Database != ":memory:" {
			if err := check(t.Database, src.Origin); err != nil {
				return err
			}
		}
	}
	return nil
}
