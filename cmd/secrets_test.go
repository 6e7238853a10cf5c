package cmd_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/rpctl/rpctl/cmd/internal/cmdtest"
	"github.com/rpctl/rpctl/internal/testdb"
)

// TestSecretsNeverPrinted plants ten secrets through every way rpctl takes
// one (secret flags in both forms, OS_* variables, database URLs and DSNs
// on flags and in a config file, a DSN password holding '@' and ':', a URL
// missing its @host) and greps standard output, standard error and the
// --log-file of --debug runs for each: none may appear.
func TestSecretsNeverPrinted(t *testing.T) {
	my := testdb.NewMySQL(t)
	// A real login whose password holds '@' and ':', so that --debug logs
	// real SQL through a DSN that carries it.
	const dsnPass = "Pl@nt:ed@DsnPw"
	user := "sec" + my.Name[len(my.Name)-8:]
	for _, q := range []string{
		fmt.Sprintf("CREATE USER '%s'@'%%' IDENTIFIED BY '%s'", user, dsnPass),
		fmt.Sprintf("GRANT ALL ON `%s`.* TO '%s'@'%%'", my.Name, user),
	} {
		if _, err := my.Admin.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { my.Admin.Exec(fmt.Sprintf("DROP USER '%s'@'%%'", user)) })
	cfg, err := mysql.ParseDSN(my.DSN)
	if err != nil {
		t.Fatal(err)
	}
	goDSN := fmt.Sprintf("%s:%s@tcp(%s)/%s", user, dsnPass, cfg.Addr, my.Name)
	if _, errOut, code := cmdtest.Rpctl(t, "--cell-db", goDSN, "init"); code != 0 {
		t.Fatalf("init through the planted DSN: %s", errOut)
	}

	const confPass = "ConfFilePw77"
	conf := filepath.Join(t.TempDir(), "nova.conf")
	os.WriteFile(conf, []byte(fmt.Sprintf("[database]\nconnection = mysql+pymysql://%s:%s@127.0.0.1:1/nova\n", user, confPass)), 0o600)

	secrets := map[string]string{
		"--os-token T":                        "TokSpace111",
		"--os-token=T":                        "TokEquals222",
		"--os-password":                       "PwFlag333",
		"--os-application-credential-secret=": "AppCredSec444",
		"OS_PASSWORD":                         "EnvPw555",
		"OS_APPLICATION_CREDENTIAL_SECRET":    "EnvAppSec666",
		"DSN password with @ and :":           dsnPass,
		"URL missing @host":                   "NoHostPw888",
		"config file connection":              confPass,
		"--placement-db URL":                  "PlaceUrlPw999",
	}
	t.Setenv("OS_PASSWORD", secrets["OS_PASSWORD"])
	t.Setenv("OS_APPLICATION_CREDENTIAL_SECRET", secrets["OS_APPLICATION_CREDENTIAL_SECRET"])
	lines := [][]string{
		{"--os-endpoint", "http://127.0.0.1:1/placement", "--os-token", secrets["--os-token T"], "provider", "list"},
		{"--os-endpoint", "http://127.0.0.1:1/placement", "--os-token=" + secrets["--os-token=T"], "provider", "list"},
		{"--os-auth-url", "http://127.0.0.1:1/identity", "--os-username", "admin", "--os-password", secrets["--os-password"], "--os-project-name", "admin", "provider", "list"},
		{"--os-auth-url=http://127.0.0.1:1/identity", "--os-application-credential-id=abc", "--os-application-credential-secret=" + secrets["--os-application-credential-secret="], "provider", "list"},
		{"--os-auth-url", "http://127.0.0.1:1/identity", "--os-username", "admin", "provider", "list"}, // OS_PASSWORD
		{"--os-auth-url", "http://127.0.0.1:1/identity", "--os-application-credential-id", "abc", "provider", "list"},
		{"--cell-db", goDSN, "compute-node", "list"},
		{"--cell-db", goDSN, "compute-node", "list", "--cell", "nope"},
		{"--cell-db", "mysql+pymysql://u:" + secrets["URL missing @host"] + "/nova", "compute-node", "list"},
		{"--config-file", conf, "compute-node", "list"},
		{"--cell-db", goDSN, "--placement-db", "mysql+pymysql://p:" + secrets["--placement-db URL"] + "@127.0.0.1:1/placement", "status"},
		{"--cell-db=" + goDSN, "--placement-db=mysql://p:" + secrets["--placement-db URL"] + "@127.0.0.1:1/p", "--bogus-flag"},
	}
	dir := t.TempDir()
	for i, line := range lines {
		for _, toFile := range []bool{false, true} {
			args := append([]string{"--debug", "--verbose"}, line...)
			log := filepath.Join(dir, fmt.Sprintf("run%d-%v.log", i, toFile))
			if toFile {
				args = append([]string{"--log-file", log}, args...)
			}
			out, errOut, code := cmdtest.Rpctl(t, args...)
			logText, _ := os.ReadFile(log)
			if code == 0 && i != 6 {
				t.Errorf("%q: exit 0; the run was meant to fail and print an error", line)
			}
			for where, text := range map[string]string{"stdout": out, "stderr": errOut, "log file": string(logText)} {
				for how, s := range secrets {
					if strings.Contains(text, s) {
						t.Errorf("%q: %s shows the secret planted as %s:\n%s", line, where, how, text)
					}
				}
			}
			if toFile && i != len(lines)-1 && !strings.Contains(string(logText), "rpctl start") {
				t.Errorf("%q: log file lacks the start record:\n%s", line, logText)
			}
		}
	}
}
