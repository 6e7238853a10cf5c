// Package dsn turns the database URLs operators have in nova.conf and
// placement.conf (SQLAlchemy URLs) and go-sql-driver DSNs into something
// database/sql can open, and into a form that is safe to print.
package dsn

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"

	"github.com/go-sql-driver/mysql"

	"github.com/rpctl/rpctl/internal/lazyre"
)

// Driver names as registered with database/sql.
const (
	MySQL  = "mysql"
	SQLite = "sqlite"
)

// Target is an openable database.
type Target struct {
	Driver string // MySQL or SQLite
	// DSN is what sql.Open takes. It contains the password: never print it.
	DSN string
	// Database is the schema name (MySQL) or file path (SQLite).
	Database string
	// Redacted is the original URL with the password replaced by "***".
	Redacted string
}

func (t Target) String() string { return t.Redacted }

// ErrUnknownScheme is returned for URLs rpctl cannot open.
var ErrUnknownScheme = errors.New("unknown database URL scheme")

// goNetAddr is the part of a go-sql-driver DSN between the credentials'
// '@' and the database's '/': empty, or a protocol with an optional
// (address).
var goNetAddr = &lazyre.Regexp{Expr: `^(tcp|tcp6|unix)?(\(.*\))?$`}

// isGoDSN recognises a go-sql-driver DSN, [user[:pass]@][net[(addr)]]/db,
// the way its ParseDSN splits one: the last '/' starts the database name
// and the last '@' before it ends the credentials, so a password may hold
// '@', ':' and '/' (u:a@b:c@tcp(127.0.0.1:3306)/db).
func isGoDSN(raw string) bool {
	slash := strings.LastIndexByte(raw, '/')
	if slash < 0 {
		return false
	}
	head := raw[:slash]
	at := strings.LastIndexByte(head, '@')
	if at < 0 {
		// No credentials: only "tcp(addr)/db" or "/db" is a DSN, not a
		// relative path such as dir/cloud.db.
		return head != "" && goNetAddr.Get().MatchString(head) || head == ""
	}
	return goNetAddr.Get().MatchString(head[at+1:])
}

// Parse translates a SQLAlchemy URL (mysql://, mysql+pymysql://,
// mysql+mysqldb://, sqlite:///rel, sqlite:////abs, sqlite:// for memory) or a
// go-sql-driver DSN into a Target. Errors never contain the password.
func Parse(raw string) (Target, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return Target{}, errors.New("empty database URL")
	}
	scheme, rest, hasScheme := strings.Cut(raw, "://")
	if !hasScheme {
		if isGoDSN(raw) {
			return parseGoDSN(raw)
		}
		return Target{}, fmt.Errorf("%w in %q: expected mysql+pymysql://user:pass@host/db, sqlite:///path or a go-sql-driver DSN", ErrUnknownScheme, Redact(raw))
	}
	dialect, _, _ := strings.Cut(strings.ToLower(scheme), "+")
	switch dialect {
	case "mysql", "mariadb":
		return parseMySQLURL(raw)
	case "sqlite":
		return parseSQLiteURL(raw, rest)
	}
	return Target{}, fmt.Errorf("%w %q in %s (rpctl speaks mysql:// and sqlite://)", ErrUnknownScheme, scheme, shown(raw))
}

func parseMySQLURL(raw string) (Target, error) {
	u, err := url.Parse(raw)
	if err != nil {
		// url.Error repeats the URL, password included; say only what broke.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		msg := err.Error()
		if pass, ok := Password(raw); ok {
			// url.Parse reads a password without '@host' as a port
			// and quotes it.
			msg = strings.ReplaceAll(msg, pass, "***")
			if !strings.Contains(raw, "@") {
				msg = "no '@' between the password and the host name (user:password@host)"
			}
		}
		return Target{}, fmt.Errorf("malformed database URL %s: %s", shown(raw), msg)
	}
	cfg := mysql.NewConfig()
	if u.User != nil {
		cfg.User = u.User.Username()
		cfg.Passwd, _ = u.User.Password()
	}
	if cfg.User == "" && cfg.Passwd != "" {
		// go-sql-driver drops a password that has no user name.
		return Target{}, fmt.Errorf("malformed database URL %s: a password without a user name", shown(raw))
	}
	if strings.Contains(cfg.User, ":") {
		// go-sql-driver reads everything after the first ':' as the
		// password, so it would log in as someone else.
		return Target{}, fmt.Errorf("malformed database URL %s: the user name contains ':', which rpctl's MySQL driver cannot log in with", shown(raw))
	}
	cfg.DBName = strings.TrimPrefix(u.Path, "/")
	q := u.Query()
	if sock := q.Get("unix_socket"); sock != "" {
		cfg.Net, cfg.Addr = "unix", sock
	} else {
		host := u.Hostname()
		if strings.ContainsAny(host, "[]") {
			return Target{}, fmt.Errorf("malformed database URL %s: host %q", shown(raw), host)
		}
		if host == "" {
			host = "localhost"
		}
		port := u.Port()
		if port == "" {
			port = "3306"
		}
		// JoinHostPort brackets an IPv6 literal ([::1]:3306), which the
		// URL's brackets were dropped from.
		cfg.Net, cfg.Addr = "tcp", net.JoinHostPort(host, port)
	}
	// SQLAlchemy query options that are not server variables must not reach
	// go-sql-driver, which would send them as SET statements.
	for k, vs := range q {
		if !optionName.Get().MatchString(k) {
			// go-sql-driver would not read back a parameter named so.
			return Target{}, fmt.Errorf("malformed database URL %s: query option %q is not a name", shown(raw), k)
		}
		switch {
		case k == "unix_socket", k == "plugin", k == "read_default_file", k == "read_default_group":
			continue
		case k == "charset" && vs[0] == "":
			continue
		case k == "charset" && handshakeCollation(vs[0]) != "":
			// Sent in the handshake, as PyMySQL sends it, rather than as a
			// SET NAMES after it: one round trip less per connection.
			cfg.Collation = handshakeCollation(vs[0])
			continue
		}
		if cfg.Params == nil {
			cfg.Params = map[string]string{}
		}
		cfg.Params[k] = vs[0]
	}
	applyDefaults(cfg)
	return Target{Driver: MySQL, DSN: cfg.FormatDSN(), Database: cfg.DBName, Redacted: Redact(raw)}, nil
}

// handshakeCollation is the collation whose id the MySQL handshake carries
// for charset, or "" when rpctl does not know it: go-sql-driver then runs
// SET NAMES. These are the ids PyMySQL sends, so a session gets what
// placement-api's get; on MariaDB 10.11 that is also what `SET NAMES
// charset` gives (TestOpenSessionCharset), while a server whose default
// collation for the charset is another (MySQL 8's utf8mb4_0900_ai_ci)
// would give the PyMySQL one, not its default.
func handshakeCollation(charset string) string {
	switch strings.ToLower(charset) {
	case "utf8", "utf8mb3":
		return "utf8_general_ci"
	case "utf8mb4":
		return "utf8mb4_general_ci"
	}
	return ""
}

// optionName is what a SQLAlchemy/PyMySQL connect option looks like.
var optionName = &lazyre.Regexp{Expr: `^[A-Za-z_][A-Za-z0-9_]*$`}

func applyDefaults(cfg *mysql.Config) {
	// Nova's columns are DATETIME; parse them into time.Time in UTC like
	// oslo.db does, and keep multi-statement off.
	cfg.ParseTime = true
	cfg.Loc = nil
	cfg.AllowNativePasswords = true
}

func parseGoDSN(raw string) (Target, error) {
	cfg, err := mysql.ParseDSN(raw)
	if err != nil {
		return Target{}, fmt.Errorf("malformed MySQL DSN %s: %s", shown(raw), oneLine(scrub(err.Error(), raw)))
	}
	applyDefaults(cfg)
	return Target{Driver: MySQL, DSN: cfg.FormatDSN(), Database: cfg.DBName, Redacted: Redact(raw)}, nil
}

func parseSQLiteURL(raw, rest string) (Target, error) {
	// sqlite:// → memory; sqlite:///rel → rel; sqlite:////abs → /abs.
	path := strings.TrimPrefix(rest, "/")
	if i := strings.IndexByte(path, '?'); i >= 0 {
		path = path[:i]
	}
	if path == "" || path == ":memory:" {
		return Target{Driver: SQLite, DSN: "file::memory:?cache=shared" + sqlitePragmas("&"), Database: ":memory:", Redacted: raw}, nil
	}
	return SQLiteFile(path), nil
}

// SQLiteFile is the Target of the embedded database file at path.
func SQLiteFile(path string) Target {
	clean := filepath.Clean(path)
	return Target{Driver: SQLite, DSN: "file:" + clean + sqlitePragmas("?"), Database: clean, Redacted: "sqlite:///" + clean}
}

// SQLiteReadOnly is the driver DSN that opens the database file at path
// without writing to it: mode=ro, and no journal_mode pragma (setting it
// writes). In a directory this process cannot write, SQLite can create no
// -shm file beside a WAL database, so immutable=1 tells it no one else
// writes the file either: such a copy reads as it is, not as a writer
// elsewhere may be changing it.
func SQLiteReadOnly(path string, dirWritable bool) string {
	dsn := "file:" + filepath.Clean(path) + "?mode=ro&_pragma=busy_timeout(10000)&_time_format=sqlite"
	if !dirWritable {
		dsn += "&immutable=1"
	}
	return dsn
}

// sqlitePragmas enforces foreign keys (Placement's schema relies on them being
// declared, not enforced, but correctness checks are cheap) and waits for a
// lock rather than failing, so a concurrent reader does not abort a run.
func sqlitePragmas(sep string) string {
	return sep + "_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_time_format=sqlite"
}

// Password returns the password a database URL or go-sql-driver DSN holds,
// found by the place it has in either form rather than by what it looks
// like: a URL's password runs from the ':' after the user name to the last
// '@' before the query (so it may hold '@', ':' and '/'); a URL whose '@host'
// is missing (mysql://u:pw/db) has the password where the port would be,
// and a port is digits only; a DSN's runs from the first ':' to the last
// '@' before the database's '/'.
func Password(raw string) (string, bool) {
	if _, rest, ok := strings.Cut(raw, "://"); ok {
		if q := strings.IndexByte(rest, '?'); q >= 0 {
			rest = rest[:q]
		}
		if at := strings.LastIndexByte(rest, '@'); at >= 0 {
			_, pass, hasPass := strings.Cut(rest[:at], ":")
			return pass, hasPass && pass != ""
		}
		authority, _, _ := strings.Cut(rest, "/")
		if _, port, ok := strings.Cut(authority, ":"); ok && port != "" && strings.Trim(port, "0123456789") != "" && !strings.HasPrefix(authority, "[") {
			return port, true
		}
		return "", false
	}
	head := raw
	if slash := strings.LastIndexByte(raw, '/'); slash >= 0 {
		head = raw[:slash]
	}
	at := strings.LastIndexByte(head, '@')
	if at < 0 {
		return "", false
	}
	_, pass, hasPass := strings.Cut(head[:at], ":")
	return pass, hasPass && pass != ""
}

// Redact returns raw with its password (see Password) replaced by "***".
func Redact(raw string) string {
	pass, ok := Password(raw)
	if !ok {
		return raw
	}
	prefix := ""
	rest := raw
	if scheme, r, isURL := strings.Cut(raw, "://"); isURL {
		prefix, rest = scheme+"://", r
	}
	// The password follows the user name's ':'; replace it there, not a
	// copy of it elsewhere (it may equal the host name).
	user, after, _ := strings.Cut(rest, ":")
	return prefix + user + ":***" + strings.TrimPrefix(after, pass)
}

// oneLine quotes a message holding a control character (a driver error
// echoing part of the DSN), so that it stays one line.
func oneLine(msg string) string {
	if strings.IndexFunc(msg, unicode.IsControl) >= 0 {
		return strconv.Quote(msg)
	}
	return msg
}

// shown is raw as an error message may show it: redacted, and quoted when
// it holds a control character, so that the message stays one line.
func shown(raw string) string {
	r := Redact(raw)
	if strings.IndexFunc(r, unicode.IsControl) >= 0 {
		return strconv.Quote(r)
	}
	return r
}

// scrub removes the password of raw from msg, for driver errors that echo
// the DSN.
func scrub(msg, raw string) string {
	red := Redact(raw)
	if red == raw {
		return msg
	}
	return strings.ReplaceAll(msg, raw, red)
}

// SameDatabase reports whether a and b open the same database: the same
// driver and schema (or file) on the same server address, whatever the
// URL's spelling (SQLAlchemy URL or DSN, options, credentials).
func SameDatabase(a, b Target) bool {
	if a.Driver != b.Driver || a.Database != b.Database {
		return false
	}
	if a.Driver != MySQL {
		return true
	}
	ca, errA := mysql.ParseDSN(a.DSN)
	cb, errB := mysql.ParseDSN(b.DSN)
	return errA == nil && errB == nil && ca.Net == cb.Net && ca.Addr == cb.Addr
}
