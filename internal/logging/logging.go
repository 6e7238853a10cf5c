// Package logging is rpctl's one logger (log/slog): --debug turns on a
// record of every SQL statement (its shape and timing) and every HTTP request,
// --log-file sends the records to a file, -q/--quiet keeps standard error
// for errors only. Packages log through Logger(); nothing is written unless
// a command line asked for it, and passwords never reach a record (Redact).
package logging

import (
	"context"
	"io"
	"log/slog"
	"regexp"
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

var discard = slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelError + 1}))

func init() { current.Store(discard) }

// Logger returns rpctl's logger; it discards everything until Setup.
func Logger() *slog.Logger { return current.Load() }

// Debug reports whether debug records are wanted, so that callers skip the
// work of building them (and the SQL driver wrapper) otherwise.
func Debug() bool { return Logger().Enabled(context.Background(), slog.LevelDebug) }

// Setup installs the logger the options ask for and returns a function that
// closes its file and restores the silent logger.
func Setup(o Options) (func() error, error) {
	if !o.Debug && o.File == nil {
		current.Store(discard)
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
		current.Store(discard)
		return closeFn()
	}, nil
}

// redactAttr keeps passwords out of every record, whatever a caller logs.
func redactAttr(_ []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() == slog.KindString {
		a.Value = slog.StringValue(Redact(a.Value.String()))
	}
	return a
}

var (
	// scheme://user:password@host
	urlPassword = regexp.MustCompile(`(://[^:/@\s]*:)[^@\s]*@`)
	// go-sql-driver DSN: user:password@tcp(...)
	dsnPassword = regexp.MustCompile(`(^|[\s"'=])([^:/@\s"'=]+:)[^@\s]*@(tcp|unix)\(`)
	// password=..., X-Auth-Token: ..., "password": "..."
	keyPassword = regexp.MustCompile(`(?i)((?:password|passwd|secret|token|x-auth-token|x-subject-token)["']?\s*[:=]\s*["']?)[^"'&\s,}]+`)
)

// Redact replaces the passwords and tokens in s (URLs, DSNs, key=value,
// JSON members, auth headers) with ***.
func Redact(s string) string {
	s = urlPassword.ReplaceAllString(s, "${1}***@")
	s = dsnPassword.ReplaceAllString(s, "${1}${2}***@${3}(")
	return keyPassword.ReplaceAllString(s, "${1}***")
}
