// Package cmd holds rpctl's cobra commands. Commands are thin: they parse
// flags into an options struct, ask the Factory for streams and databases,
// call a domain package and print. They hold no SQL and no domain rules.
package cmd

import (
	"context"
	"errors"
	"fmt"

	"github.com/rpctl/rpctl/config"
	"github.com/rpctl/rpctl/iostreams"
	"github.com/rpctl/rpctl/output"
	"github.com/rpctl/rpctl/placementclient"
	"github.com/rpctl/rpctl/storage"
)

// Factory carries what every command needs; tests build one with fake
// streams.
type Factory struct {
	IO *iostreams.IOStreams

	// Global flags.
	ConfigFiles []string
	Embedded    string
	CellDBs     []string
	APIDB       string
	PlacementDB string
	Format      string
	Verbose     bool
	// API names a live Placement API (placementapi.go).
	API APIFlags

	opts *config.Options
	// placement is the Placement API client, made once.
	placement    *placementclient.Client
	placementErr error
	optsErr      error
}

// NewFactory returns a Factory over the given streams.
func NewFactory(io *iostreams.IOStreams) *Factory { return &Factory{IO: io} }

// Options returns the options from --config-file files, read once.
func (f *Factory) Options() (config.Options, error) {
	if f.opts == nil && f.optsErr == nil {
		o, err := config.LoadFiles(f.ConfigFiles)
		f.opts, f.optsErr = &o, err
	}
	if f.optsErr != nil {
		return config.Options{}, f.optsErr
	}
	return *f.opts, nil
}

// Sources combines flags and config files; flags win.
func (f *Factory) Sources() (storage.Sources, error) {
	o, err := f.Options()
	if err != nil {
		return storage.Sources{}, err
	}
	s := storage.Sources{Embedded: f.Embedded}
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

// Write prints rows or data in the --format the user chose.
func (f *Factory) Write(r output.Rows, data any) error {
	return output.Write(f.IO.Out, f.Format, r, data)
}

// ExitError ends rpctl with a specific exit code. A nil Err prints nothing.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// Exit returns an error that makes rpctl exit with code, printing nothing.
func Exit(code int) error { return &ExitError{Code: code} }

// ExitCode maps an error to the process exit code: ExitError's own code,
// else 1.
func ExitCode(err error) int {
	if err == nil {
		return 0
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		return ee.Code
	}
	return 1
}
