package logging

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestRedact(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"mysql+pymysql://nova:s3cr3t@db:3306/nova", "mysql+pymysql://nova:***@db:3306/nova"},
		{"nova:s3cr3t@tcp(127.0.0.1:3306)/nova", "nova:***@tcp(127.0.0.1:3306)/nova"},
		{`dsn="nova:pw@unix(/run/mysqld.sock)/nova"`, `dsn="nova:***@unix(/run/mysqld.sock)/nova"`},
		{`{"auth": {"password": "hunter2"}}`, `{"auth": {"password": "***"}}`},
		{"X-Auth-Token: gAAAAAB", "X-Auth-Token: ***"},
		{"password=hunter2&user=x", "password=***&user=x"},
		{"SELECT id FROM compute_nodes WHERE deleted = ?", "SELECT id FROM compute_nodes WHERE deleted = ?"},
		{"http://placement:8778/resource_providers", "http://placement:8778/resource_providers"},
		// issue 39: MySQL's access denied error says whether a password was
		// sent; that is no secret, and its ")" ends the message.
		{"Error 1045 (28000): Access denied for user 'nova'@'10.0.0.1' (using password: YES)", "Error 1045 (28000): Access denied for user 'nova'@'10.0.0.1' (using password: YES)"},
		{"Access denied for user 'nova'@'localhost' (using password: NO)", "Access denied for user 'nova'@'localhost' (using password: NO)"},
		{"password: YES", "password: ***"},
		{"using password: hunter2", "using password: ***"},
	} {
		if got := Redact(tc.in); got != tc.want {
			t.Errorf("Redact(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestSetup(t *testing.T) {
	var b bytes.Buffer
	closeFn, err := Setup(Options{Debug: true, Stderr: &b})
	if err != nil {
		t.Fatal(err)
	}
	if !Debug() {
		t.Error("Debug() false after Setup(Debug)")
	}
	Logger().Debug("connect", "url", "mysql://nova:pw@db/nova")
	closeFn()
	if Debug() || !strings.Contains(b.String(), "nova:***@db") || strings.Contains(b.String(), ":pw@") {
		t.Errorf("record %q", b.String())
	}
	Logger().Error("after close")
	if strings.Contains(b.String(), "after close") {
		t.Error("logged after close")
	}
}

func TestTransport(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Openstack-Request-Id", "req-1")
		w.WriteHeader(http.StatusTeapot)
	}))
	defer srv.Close()
	var b bytes.Buffer
	closeFn, _ := Setup(Options{Debug: true, Stderr: &b})
	defer closeFn()
	client := &http.Client{Transport: Transport(nil)}
	req, _ := http.NewRequest("GET", strings.Replace(srv.URL, "http://", "http://admin:pw@", 1)+"/resource_providers?name=x", nil)
	req.Header.Set("X-Auth-Token", "secret-token")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	got := b.String()
	for _, want := range []string{"method=GET", "/resource_providers?name=x", "status=418", "request_id=req-1", "admin:***@"} {
		if !strings.Contains(got, want) {
			t.Errorf("record %q lacks %q", got, want)
		}
	}
	if strings.Contains(got, "secret-token") || strings.Contains(got, ":pw@") {
		t.Errorf("record leaks a secret: %q", got)
	}
}

// TestRegisteredSecrets: a registered value is replaced wherever it
// appears, in strings, errors and what goes through RedactingWriter; a
// URL's password is found by its place even when it holds '@' and ':'.
func TestRegisteredSecrets(t *testing.T) {
	defer ResetSecrets()
	AddSecret("TokSpace111", "pw") // "pw" is too short to replace everywhere
	AddURLSecret("u:S3cr@t:x@y@tcp(127.0.0.1:3306)/db")
	for _, tc := range []struct{ in, want string }{
		{"args=--os-token TokSpace111 list", "args=--os-token *** list"},
		{"dial u:S3cr@t:x@y@tcp(127.0.0.1:3306)/db", "dial u:***@tcp(127.0.0.1:3306)/db"},
		{"err: S3cr@t:x@y rejected", "err: *** rejected"},
		{"a pwned row", "a pwned row"},
		{`url="mysql+pymysql://u:NoHost9/db"`, `url="mysql+pymysql://u:***/db"`},
	} {
		if got := Redact(tc.in); got != tc.want {
			t.Errorf("Redact(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	var b bytes.Buffer
	closeFn, _ := Setup(Options{Debug: true, Stderr: &b})
	Logger().Debug("connect", "err", errors.New("login S3cr@t:x@y failed"))
	closeFn()
	fmt.Fprint(RedactingWriter(&b), "verbose: TokSpace111\n")
	if strings.Contains(b.String(), "S3cr@t") || strings.Contains(b.String(), "TokSpace111") {
		t.Errorf("secret printed: %q", b.String())
	}
	if !SecretEnv("OS_PASSWORD") || !SecretEnv("OS_APPLICATION_CREDENTIAL_SECRET") || !SecretEnv("OS_TOKEN") || SecretEnv("OS_USERNAME") || SecretEnv("PASSWORD") {
		t.Error("SecretEnv misjudges a variable")
	}
}
