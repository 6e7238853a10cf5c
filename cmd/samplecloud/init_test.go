package samplecloud_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/rpctl/rpctl/cmd/internal/cmdtest"
	"github.com/rpctl/rpctl/internal/testdb"
)

// TestBadInputIsOneLine covers the foundation's promise: every way of
// pointing rpctl at a database wrongly ends in one line on stderr that says
// what is wrong, a non-zero exit, and never the password.
func TestBadInputIsOneLine(t *testing.T) {
	dir := t.TempDir()
	badConf := filepath.Join(dir, "nova.conf")
	os.WriteFile(badConf, []byte("[database]\nconnection = mysql://nova:hunter2@db/nova\nthis line is not an option\n"), 0o600)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"unparsable config", []string{"--config-file", badConf, "init"}, badConf + ":3: expected \"key = value\""},
		{"missing config", []string{"--config-file", filepath.Join(dir, "nope.conf"), "init"}, "nope.conf: no such file"},
		{"unknown scheme", []string{"--placement-db", "postgresql://placement:hunter2@db/placement", "init"}, `unknown database URL scheme "postgresql"`},
		{"dead server", []string{"--placement-db", "mysql+pymysql://placement:hunter2@127.0.0.1:1/placement", "init"}, "Placement database (mysql+pymysql://placement:***@127.0.0.1:1/placement): cannot connect"},
		{"no database at all", []string{"init"}, "no database configured"},
		{"no cell database", []string{"compute-node", "list"}, "give --db FILE (the embedded default), --cell-db URL, or --config-file"},
		{"bad format", []string{"--db", filepath.Join(dir, "x.db"), "-f", "xml", "compute-node", "list"}, `invalid --format "xml"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := cmdtest.Rpctl(t, tc.args...)
			if code == 0 {
				t.Fatalf("exit 0; stdout %q", out)
			}
			if !strings.Contains(errOut, tc.want) {
				t.Errorf("stderr %q, want it to contain %q", errOut, tc.want)
			}
			if n := strings.Count(strings.TrimRight(errOut, "\n"), "\n"); n != 0 {
				t.Errorf("stderr has %d lines, want one: %q", n+1, errOut)
			}
			if strings.Contains(out+errOut, "hunter2") {
				t.Errorf("password printed: %q %q", out, errOut)
			}
		})
	}
}

func TestWrongPassword(t *testing.T) {
	my := testdb.NewMySQL(t)
	cfg, err := mysql.ParseDSN(my.DSN)
	if err != nil {
		t.Fatal(err)
	}
	url := "mysql+pymysql://" + cfg.User + ":hunter2-wrong@" + cfg.Addr + "/" + my.Name
	_, errOut, code := cmdtest.Rpctl(t, "--placement-db", url, "init")
	if code != 255 || !strings.Contains(errOut, "Access denied") || strings.Contains(errOut, "hunter2") {
		t.Errorf("exit %d stderr %q", code, errOut)
	}
}

func TestInitOnMariaDBAndSQLite(t *testing.T) {
	cell, api, pl := testdb.NewMySQL(t), testdb.NewMySQL(t), testdb.NewMySQL(t)
	// nova.conf and placement.conf naming new, empty databases: the cell is
	// [database] connection, since the new API database maps none yet.
	confCell, confAPI, confPl := testdb.NewMySQL(t), testdb.NewMySQL(t), testdb.NewMySQL(t)
	conf := filepath.Join(t.TempDir(), "nova.conf")
	os.WriteFile(conf, []byte("[database]\nconnection = "+confCell.URL+"\n[api_database]\nconnection = "+confAPI.URL+
		"\n[placement_database]\nconnection = "+confPl.URL+"\n"), 0o600)
	for _, args := range [][]string{
		{"--cell-db", cell.URL, "--api-db", api.DSN, "--placement-db", pl.URL, "init"},
		{"--config-file", conf, "init"},
		{"--db", filepath.Join(t.TempDir(), "cloud.db"), "init"},
	} {
		out, errOut, code := cmdtest.Rpctl(t, args...)
		if code != 0 || strings.Count(out, "created") != 3 {
			t.Fatalf("%v: exit %d\n%s%s", args, code, out, errOut)
		}
		// A second init finds complete schemas and leaves them alone.
		out, errOut, code = cmdtest.Rpctl(t, args...)
		if code != 0 || strings.Count(out, "already present") != 3 {
			t.Fatalf("%v again: exit %d\n%s%s", args, code, out, errOut)
		}
	}
}

// TestFlagsWinOverConfigFiles: a database flag replaces the config file's
// connection, which is never opened.
func TestFlagsWinOverConfigFiles(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "placement.conf")
	os.WriteFile(conf, []byte("[placement_database]\nconnection = mysql+pymysql://placement:hunter2@127.0.0.1:1/placement\n"), 0o600)
	out, errOut, code := cmdtest.Rpctl(t, "--config-file", conf, "--placement-db", "sqlite:///"+filepath.Join(dir, "p.db"), "init")
	if code != 0 || !strings.Contains(out, "p.db") || strings.Count(out, "created") != 1 {
		t.Errorf("exit %d\n%s%s", code, out, errOut)
	}
}
