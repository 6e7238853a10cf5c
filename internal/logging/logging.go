// Package logging is rpctl's one logger (log/slog): --debug turns on a
// record of every SQL statement (its shape and timing) and every HTTP request,
// --log-file sends the records to a file, -q/--quiet keeps standard error
// for errors only. Packages log through Logger(); nothing is written unless
// a command line asked for it, and passwords never reach a record (Redact).
package logging

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
)

// Options are the logging flags.
type Options struct {
	Debug bool
	// File receives the records instead of Stderr; Setup's close function
	// closes it. The caller opens it (safefile.Policy.OpenLog), so that an
	// existing file or a database is never written by surprise.
	File   io.WriteCloser
	Stderr io.Writer
}

var current atomic.Pointer[slog.Logger]

// discard is the silent logger, made on first use (nothing runs at init).
var discard = sync.OnceValue(func() *slog.Logger {
	return slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelError + 1}))
})

// Logger returns rpctl's logger; it discards everything until Setup.
func Logger() *slog.Logger {
	if l := current.Load(); l != nil {
		return l
	}
	return discard()
}

// Debug reports whether debug records are wanted, so that callers skip the
// work of building them (and the SQL driver wrapper) otherwise.
func Debug() bool { return Logger().Enabled(context.Background(), slog.LevelDebug) }

// Setup installs the logger the options ask for and returns a function that
// closes its file and restores the silent logger.
func Setup(o Options) (func() error, error) {
	if !o.Debug && o.File == nil {
		current.Store(discard())
		return func() error { return nil }, nil
	}
	w := o.Stderr
	closeFn := func() error { return nil }
	if o.File != nil {
		w, closeFn = o.File, o.File.Close
	}
	level := slog.LevelInfo
	if o.Debug {
		level = slog.LevelDebug
	}
	h := slog.NewTextHandler(w, &slog.HandlerOptions{Level: level, ReplaceAttr: redactAttr})
	current.Store(slog.New(h))
	return func() error {
		current.Store(discard())
		return closeFn()
	}, nil
}

// redactAttr keeps secrets out of every record, whatever a caller logs:
// strings, errors and any other value that prints as text.
func redactAttr(_ []string, a slog.Attr) slog.Attr {
	switch a.Value.Kind() {
	case slog.KindString:
		a.Value = slog.StringValue(Redact(a.Value.String()))
	case slog.KindAny:
		v := a.Value.Any()
		var text string
		switch t := v.(type) {
		case error:
			text = t.Error()
		case fmt.Stringer:
			text = t.String()
		default:
			return a
		}
		if r := Redact(text); r != text {
			a.Value = slog.StringValue(r)
		}
	}
	return a
}
