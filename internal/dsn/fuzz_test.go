package dsn

import (
	"net"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/rpctl/rpctl/internal/fuzzcheck"
)

// FuzzParse: no database URL or DSN panics or hangs Parse; what it accepts
// opens exactly what it names (the DSN handed to the driver parses back to
// the same user, password, address and database), and no error or redacted
// form shows the password.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"mysql+pymysql://nova:s3cret@db.example:3307/nova?charset=utf8",
		"mysql://nova:p%40ss@10.0.0.1/nova_api",
		"mysql+pymysql://root@/placement?unix_socket=/run/mysqld/mysqld.sock",
		"nova:pw@tcp(127.0.0.1:3306)/nova",
		"nova:pw@unix(/run/mysqld/mysqld.sock)/nova?parseTime=true",
		"sqlite:////var/lib/rpctl/cloud.db", "sqlite:///rel/cloud.db", "sqlite://", "postgresql://u:p@h/db", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		var tg Target
		var err error
		fuzzcheck.Within(t, func() { tg, err = Parse(raw) })
		pw := password(raw)
		leaks := func(s string) bool {
			// Only a password that is not also some other part of the URL,
			// the "***" mask or the messages' own words can be said to leak.
			if pw == "" || strings.Contains(strings.Replace(raw, pw, "", 1), pw) || strings.Contains(messageWords, pw) {
				return false
			}
			s = strings.ReplaceAll(s, "***", "")
			// A quoted URL's escapes (\x00 for a NUL) are not the password
			// even when it is "0" or "x0"; the password shown quoted is.
			if q := strconv.Quote(pw); q[1:len(q)-1] != pw && strings.Contains(s, q[1:len(q)-1]) {
				return true
			}
			return strings.Contains(withoutEscapes(s, pw), pw)
		}
		if err != nil {
			fuzzcheck.OneLine(t, err)
			if leaks(err.Error()) {
				t.Fatalf("error shows the password: %v", err)
			}
			return
		}
		if leaks(tg.Redacted) || leaks(tg.String()) {
			t.Fatalf("redacted form shows the password: %s", tg.Redacted)
		}
		switch tg.Driver {
		case MySQL:
			cfg, err := mysql.ParseDSN(tg.DSN)
			if err != nil {
				t.Fatalf("accepted %q, but the driver cannot read the DSN made of it: %v", raw, err)
			}
			if cfg.DBName != tg.Database {
				t.Fatalf("database %q, driver opens %q", tg.Database, cfg.DBName)
			}
			if u, ok := urlParts(raw); ok && (cfg.User != u.User.Username() || cfg.Passwd != pw) {
				t.Fatalf("%q: the driver logs in as %q", raw, cfg.User)
			}
			if u, err := url.Parse(strings.TrimSpace(raw)); err == nil && strings.Contains(raw, "://") {
				if sock := u.Query().Get("unix_socket"); sock != "" {
					if cfg.Net != "unix" || cfg.Addr != sock {
						t.Fatalf("%q: the driver connects to %s(%s)", raw, cfg.Net, cfg.Addr)
					}
				} else if host, _, err := net.SplitHostPort(cfg.Addr); err != nil || (u.Hostname() != "" && host != u.Hostname()) {
					t.Fatalf("%q: the driver connects to %s(%s)", raw, cfg.Net, cfg.Addr)
				}
			}
		case SQLite:
			if tg.Database == "" {
				t.Fatalf("accepted %q as an SQLite database with no file", raw)
			}
		default:
			t.Fatalf("accepted %q for driver %q", raw, tg.Driver)
		}
	})
}

// messageWords are the fixed words of Parse's errors.
const messageWords = `empty database URL unknown database URL scheme in "": expected mysql+pymysql://user:pass@host/db, ` +
	`sqlite:///path or a go-sql-driver DSN (rpctl speaks mysql:// and sqlite://) malformed database URL MySQL DSN: ` +
	`the user name contains ':', which rpctl's MySQL driver cannot log in with query option is not a name a password without a user name`

// password is the password raw carries, as the URL or DSN parser reads it.
func password(raw string) string {
	raw = strings.TrimSpace(raw)
	if u, ok := urlParts(raw); ok {
		p, _ := u.User.Password()
		return p
	}
	if strings.Contains(raw, "://") {
		return "" // a URL whose userinfo Go cannot read has no password to leak
	}
	if cfg, err := mysql.ParseDSN(raw); err == nil {
		return cfg.Passwd
	}
	return ""
}

func urlParts(raw string) (*url.URL, bool) {
	raw = strings.TrimSpace(raw)
	if !strings.Contains(raw, "://") {
		return nil, false
	}
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return nil, false
	}
	return u, true
}

// quoteEscape is an escape sequence strconv.Quote writes.
var quoteEscape = regexp.MustCompile(`\\(x[0-9a-f]{2}|u[0-9a-f]{4}|U[0-9a-f]{8}|[abfnrtv\\"])`)

// withoutEscapes replaces each escape sequence of s by a character that is
// not in pw, so that the escapes of a quoted URL neither show pw nor join
// its neighbours into it.
func withoutEscapes(s, pw string) string {
	sep := "\uFFFD"
	for r := rune(0xE000); strings.Contains(pw, sep); r++ {
		sep = string(r)
	}
	return quoteEscape.ReplaceAllLiteralString(s, sep)
}
