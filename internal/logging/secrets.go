package logging

import (
	"io"
	"os"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/rpctl/rpctl/internal/dsn"
)

// Secrets are redacted by what they are, not by what they look like: the
// command line's secret flags, the passwords of the database URLs it names
// or its config files hold, and the OS_* variables that carry credentials
// register their values here, and every log record, error and diagnostic
// line has each registered value replaced by "***" wherever it appears
// (an argument list, a driver error quoting a DSN, a URL in a message).
var secrets struct {
	sync.RWMutex
	values []string // longest first, so that a secret containing another goes whole
}

// minSecretLen is the shortest value replaced wherever it appears; a
// shorter one (a test cloud's "pw") would turn every log line to noise,
// and is still removed where it has a place (URL, DSN, flag value).
const minSecretLen = 4

// AddSecret registers values that must never be printed.
func AddSecret(values ...string) {
	secrets.Lock()
	defer secrets.Unlock()
	for _, v := range values {
		if len(v) < minSecretLen {
			continue
		}
		known := false
		for _, s := range secrets.values {
			known = known || s == v
		}
		if !known {
			secrets.values = append(secrets.values, v)
		}
	}
	sort.SliceStable(secrets.values, func(i, j int) bool { return len(secrets.values[i]) > len(secrets.values[j]) })
}

// AddURLSecret registers the password of a database URL or DSN.
func AddURLSecret(raw string) {
	if p, ok := dsn.Password(raw); ok {
		AddSecret(p)
	}
}

// ResetSecrets forgets every registered secret (tests run many command
// lines in one process).
func ResetSecrets() {
	secrets.Lock()
	secrets.values = nil
	secrets.Unlock()
}

// SecretEnv reports whether an OS_* variable carries a credential: the
// password, token and secret variables openstackclient and clouds.yaml
// read (OS_PASSWORD, OS_TOKEN, OS_AUTH_TOKEN,
// OS_APPLICATION_CREDENTIAL_SECRET, OS_CLIENT_SECRET, …).
func SecretEnv(name string) bool {
	if !strings.HasPrefix(name, "OS_") {
		return false
	}
	for _, w := range []string{"PASSWORD", "TOKEN", "SECRET", "PASSCODE", "KEY"} {
		if strings.Contains(name, w) {
			return true
		}
	}
	return false
}

// AddEnvSecrets registers the values of the credential-carrying OS_*
// variables of the environment.
func AddEnvSecrets() {
	for _, kv := range os.Environ() {
		if name, v, ok := strings.Cut(kv, "="); ok && SecretEnv(name) {
			AddSecret(v)
		}
	}
}

func redactRegistered(s string) string {
	secrets.RLock()
	defer secrets.RUnlock()
	for _, v := range secrets.values {
		if strings.Contains(s, v) {
			s = strings.ReplaceAll(s, v, "***")
		}
	}
	return s
}

// keyed are the secrets a text names by their key (a JSON member, a
// header, key=value) rather than by value; compiled on first use.
var keyed = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)((?:password|passwd|secret|token|x-auth-token|x-subject-token)["']?\s*[:=]\s*["']?)[^"'&\s,}]+`)
})

// Redact replaces in s every registered secret, the password of every URL
// or DSN it holds (each whitespace- or quote-separated word is read as
// one), and values keyed password/secret/token, with ***.
func Redact(s string) string {
	s = redactRegistered(s)
	if strings.Contains(s, "@") || strings.Contains(s, "://") {
		s = redactWords(s)
	}
	if k := keyed(); k.MatchString(s) {
		s = redactKeyed(k, s)
	}
	return s
}

// redactKeyed replaces the value of every keyed match with ***, except
// MySQL's own "(using password: YES)" / "(using password: NO)" of an
// access denied error: that says whether a password was sent, it is not
// one, and masking it ate the message's end.
func redactKeyed(k *regexp.Regexp, s string) string {
	var b strings.Builder
	last := 0
	for _, m := range k.FindAllStringSubmatchIndex(s, -1) {
		value := s[m[3]:m[1]]
		if v := strings.TrimSuffix(value, ")"); (v == "YES" || v == "NO") && strings.HasSuffix(strings.ToLower(s[:m[2]]), "using ") {
			continue
		}
		b.WriteString(s[last:m[3]])
		b.WriteString("***")
		last = m[1]
	}
	b.WriteString(s[last:])
	return b.String()
}

// redactWords applies dsn.Redact to every word of s that may be a URL or
// DSN, keeping the separators.
func redactWords(s string) string {
	var b strings.Builder
	word := func(w string) {
		if strings.Contains(w, "@") || strings.Contains(w, "://") {
			// A word may be key=URL (dsn=..., --cell-db=...).
			if k, v, ok := strings.Cut(w, "="); ok && !strings.Contains(k, "/") && !strings.Contains(k, "@") {
				b.WriteString(k + "=" + dsn.Redact(v))
				return
			}
			w = dsn.Redact(w)
		}
		b.WriteString(w)
	}
	start := 0
	for i, r := range s {
		if r == ' ' || r == '\t' || r == '\n' || r == '"' || r == '\'' {
			word(s[start:i])
			b.WriteRune(r)
			start = i + 1
		}
	}
	word(s[start:])
	return b.String()
}

// RedactingWriter passes what is written to w with the registered secrets
// replaced: standard error's diagnostics go through it.
func RedactingWriter(w io.Writer) io.Writer { return redactingWriter{w} }

type redactingWriter struct{ w io.Writer }

func (r redactingWriter) Write(p []byte) (int, error) {
	s := string(p)
	red := Redact(s)
	if red == s {
		return r.w.Write(p)
	}
	if _, err := io.WriteString(r.w, red); err != nil {
		return 0, err
	}
	return len(p), nil
}
