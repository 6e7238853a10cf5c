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
	"os"
	"sync/atomic"

	"github.com/rpctl/rpctl/internal/lazyre"
)

// Options are the logging flags.
type Options struct {
	Debug bool
	// File receives the records instead of Stderr (appended).
	File   string
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
	if !o.Debug && o.File == "" {
		current.Store(discard)
		return func() error { return nil }, nil
	}
	w := o.Stderr
	closeFn := func() error { return nil }
	if o.File != "" {
		f, err := os.OpenFile(o.File, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return nil, err
		}
		w, closeFn = f, f.Close
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
	urlPassword = &lazyre.Regexp{Expr: `(://[^:/@\s]*:)[^@\s]*@`}
	// go-sql-driver DSN: user:password@tcp(...)
	dsnPassword = &lazyre.Regexp{Expr: `(^|[\s"'=])([^:/@\s"'=]+:)[^@\s]*@(tcp|unix)\(`}
	// password=..., X-Auth-Token: ..., "password": "..."
	keyPassword = &lazyre.Regexp{Expr: `(?i)((?:password|passwd|secret|token|x-auth-token|x-subject-token)["']?\s*[:=]\s*["']?)[^"'&\s,}]+`}
)

// Redact replaces the passwords and tokens in s (URLs, DSNs, key=value,
// JSON members, auth headers) with ***.
func Redact(s string) string {
	s = urlPassword.Get().ReplaceAllString(s, "${1}***@")
	s = dsnPassword.Get().ReplaceAllString(s, "${1}${2}***@${3}(")
	return keyPassword.Get().ReplaceAllString(s, "${1}***")
}
