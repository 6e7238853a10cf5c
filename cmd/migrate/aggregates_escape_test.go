package migrate_test

import (
	"context"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/cmd/internal/cmdtest"
	"github.com/rpctl/rpctl/internal/dsn"
	"github.com/rpctl/rpctl/storage"
)

// TestAggregatesVerboseEscapes (issue 37 row 10): aggregate names holding
// ESC, BEL, CR and a newline reach migrate aggregates --verbose's lines
// escaped (\x1b …), each message one line, as errors and table cells are.
func TestAggregatesVerboseEscapes(t *testing.T) {
	db := cmdtest.FlavorCloud(t)
	api, err := storage.Open(context.Background(), dsn.SQLiteFile(db), storage.RoleAPI, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		id   int
		name string
	}{{1, "red\x1b[31m\nnext"}, {2, "bell\x07cr\r"}} {
		if _, err := api.Exec(`UPDATE aggregates SET name = ? WHERE id = ?`, tc.name, tc.id); err != nil {
			t.Fatal(err)
		}
	}
	api.Close()
	out, errOut, code := cmdtest.Rpctl(t, "--db", db, "migrate", "aggregates", "--verbose")
	if code != 0 {
		t.Fatalf("migrate aggregates: exit %d: %s", code, errOut)
	}
	for _, want := range []string{"Processing aggregate: red\\x1b[31m\\x0anext\n", "Processing aggregate: bell\\x07cr\\x0d\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	if i := strings.IndexFunc(out+errOut, func(r rune) bool { return r < 0x20 && r != '\n' }); i >= 0 {
		t.Errorf("a raw control character in the output: %q", (out + errOut)[max(0, i-20):])
	}
	if strings.Contains(out, "\nnext") {
		t.Error("a name's newline split a line")
	}
}
