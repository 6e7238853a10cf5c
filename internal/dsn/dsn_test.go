package dsn

import (
	"errors"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		raw, driver, dsn, db, redacted string
	}{
		{"mysql+pymysql://nova:s3cret@db.example:3307/nova?charset=utf8",
			MySQL, "nova:s3cret@tcp(db.example:3307)/nova?collation=utf8_general_ci&parseTime=true", "nova", "mysql+pymysql://nova:***@db.example:3307/nova?charset=utf8"},
		// The utf8 charsets go in the handshake (see handshakeCollation);
		// others stay a SET NAMES.
		{"mysql+pymysql://nova:pw@db/nova?charset=UTF8MB4",
			MySQL, "nova:pw@tcp(db:3306)/nova?collation=utf8mb4_general_ci&parseTime=true", "nova", "mysql+pymysql://nova:***@db/nova?charset=UTF8MB4"},
		{"mysql+pymysql://nova:pw@db/nova?charset=latin1",
			MySQL, "nova:pw@tcp(db:3306)/nova?parseTime=true&charset=latin1", "nova", "mysql+pymysql://nova:***@db/nova?charset=latin1"},
		{"mysql://nova:p%40ss@10.0.0.1/nova_api",
			MySQL, "nova:p@ss@tcp(10.0.0.1:3306)/nova_api?parseTime=true", "nova_api", "mysql://nova:***@10.0.0.1/nova_api"},
		{"mysql+pymysql://root@/placement?unix_socket=/run/mysqld/mysqld.sock",
			MySQL, "root@unix(/run/mysqld/mysqld.sock)/placement?parseTime=true", "placement", "mysql+pymysql://root@/placement?unix_socket=/run/mysqld/mysqld.sock"},
		{"nova:pw@tcp(127.0.0.1:3306)/nova",
			MySQL, "nova:pw@tcp(127.0.0.1:3306)/nova?parseTime=true", "nova", "nova:***@tcp(127.0.0.1:3306)/nova"},
		// The DSN: go-sql-driver's ParseDSN splits at the last '@'.
		{"u:a@b:c@tcp(127.0.0.1:3306)/db",
			MySQL, "u:a@b:c@tcp(127.0.0.1:3306)/db?parseTime=true", "db", "u:***@tcp(127.0.0.1:3306)/db"},
		{"u:p/w@d@tcp(db.example:3307)/nova",
			MySQL, "u:p/w@d@tcp(db.example:3307)/nova?parseTime=true", "nova", "u:***@tcp(db.example:3307)/nova"},
		{"root@unix(/run/mysqld/mysqld.sock)/placement",
			MySQL, "root@unix(/run/mysqld/mysqld.sock)/placement?parseTime=true", "placement", "root@unix(/run/mysqld/mysqld.sock)/placement"},
		{"tcp(127.0.0.1:3306)/nova", MySQL, "tcp(127.0.0.1:3306)/nova?parseTime=true", "nova", "tcp(127.0.0.1:3306)/nova"},
		{"sqlite:////var/lib/rpctl/cloud.db", SQLite, "", "/var/lib/rpctl/cloud.db", "sqlite:////var/lib/rpctl/cloud.db"},
		{"sqlite:///rel/cloud.db", SQLite, "", "rel/cloud.db", "sqlite:///rel/cloud.db"},
		{"sqlite://", SQLite, "", ":memory:", "sqlite://"},
	}
	for _, tc := range tests {
		t.Run(tc.raw, func(t *testing.T) {
			got, err := Parse(tc.raw)
			if err != nil {
				t.Fatal(err)
			}
			if got.Driver != tc.driver || got.Database != tc.db || got.Redacted != tc.redacted {
				t.Errorf("got %s %q %q, want %s %q %q", got.Driver, got.Database, got.Redacted, tc.driver, tc.db, tc.redacted)
			}
			if tc.dsn != "" && got.DSN != tc.dsn {
				t.Errorf("DSN %q, want %q", got.DSN, tc.dsn)
			}
		})
	}
}

func TestParseErrorsNeverShowPassword(t *testing.T) {
	for _, raw := range []string{
		"postgresql://nova:topsecret@db/nova",
		"oracle://u:topsecret@h/x",
		"mysql://nova:topsecret@db:notaport/nova",
		"nova:topsecret@tcp(db/nova",
		"just-a-word-topsecret",
		"u:top@secret@tcp(db/nova",
		"dir/cloud.db",
		"mysql+pymysql://u:topsecret/db", // issue 21: no @host, printed twice before
	} {
		_, err := Parse(raw)
		if err == nil {
			t.Errorf("%s: no error", raw)
			continue
		}
		if (strings.Contains(err.Error(), "topsecret") || strings.Contains(err.Error(), "top@secret")) && raw != "just-a-word-topsecret" {
			t.Errorf("%s: error shows the password: %v", raw, err)
		}
	}
	if _, err := Parse("postgresql://a:b@c/d"); !errors.Is(err, ErrUnknownScheme) {
		t.Errorf("want ErrUnknownScheme, got %v", err)
	}
}

func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"mysql+pymysql://u:p@h/db":                           "mysql+pymysql://u:***@h/db",
		"mysql://u@h/db":                                     "mysql://u@h/db",
		"u:p:with:colons@tcp(h:1)/db":                        "u:***@tcp(h:1)/db",
		"mysql://u:p@ss@h/db":                                "mysql://u:***@h/db",
		"u:a@b:c@tcp(127.0.0.1:3306)/db":                     "u:***@tcp(127.0.0.1:3306)/db",
		"{scheme}://{username}:{password}@{hostname}/{path}": "{scheme}://{username}:***@{hostname}/{path}",
		// issue 21: a URL missing its @host, a DSN password holding '@' and ':'.
		"mysql+pymysql://u:S3cretPW/db":       "mysql+pymysql://u:***/db",
		"mysql+pymysql://u:S3cretPW@/db":      "mysql+pymysql://u:***@/db",
		"u:S3cr@t:x@y@tcp(127.0.0.1:3306)/db": "u:***@tcp(127.0.0.1:3306)/db",
		"mysql://u:p/w@h/db?unix_socket=/s":   "mysql://u:***@h/db?unix_socket=/s",
		"mysql://db:3306/nova":                "mysql://db:3306/nova",
		"mysql://[::1]:3306/nova":             "mysql://[::1]:3306/nova",
		"mysql://host/nova":                   "mysql://host/nova",
		"mysql://h:h@h/h":                     "mysql://h:***@h/h",
		"sqlite:////var/lib/cloud.db":         "sqlite:////var/lib/cloud.db",
		"tcp(127.0.0.1:3306)/nova":            "tcp(127.0.0.1:3306)/nova",
	} {
		if got := Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestParseURLsTheDriverMisreads: an IPv6 literal keeps its brackets in the
// driver's address, and a user name the driver would split is refused.
func TestParseURLsTheDriverMisreads(t *testing.T) {
	tg, err := Parse("mysql+pymysql://nova:pw@[fd00::1]:3307/nova")
	if err != nil || !strings.Contains(tg.DSN, "tcp([fd00::1]:3307)") {
		t.Errorf("IPv6: %v %q", err, tg.DSN)
	}
	if _, err := Parse("mysql://us%3Aer:secret@db/nova"); err == nil || !strings.Contains(err.Error(), "user name contains ':'") || strings.Contains(err.Error(), "secret") {
		t.Errorf("user with ':': %v", err)
	}
}
