package cmdutil

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestApplyNovaRelease: --nova-release, else [rpctl] nova_release, is the
// --release of a command that leaves it unset; a --release given wins; a
// release rpctl does not know is refused naming the setting.
func TestApplyNovaRelease(t *testing.T) {
	dir := t.TempDir()
	conf := func(body string) string {
		p := filepath.Join(dir, strings.NewReplacer(" ", "_", "=", "", "\n", "").Replace(body)+".conf")
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good, bad := conf("[rpctl]\nnova_release = 2024.1\n"), conf("[rpctl]\nnova_release = 2025.2\n")
	for _, tc := range []struct {
		name      string
		flag      string
		files     []string
		args      []string
		noRelease bool
		want      string
		err       string
	}{
		{name: "nothing", want: "zed"},
		{name: "--nova-release", flag: "2025.1", want: "2025.1"},
		{name: "config", files: []string{good}, want: "2024.1"},
		{name: "flag over config", flag: "2023.1", files: []string{good}, want: "2023.1"},
		{name: "--release wins", flag: "2025.1", args: []string{"--release", "2023.2"}, want: "2023.2"},
		{name: "--release wins over config", files: []string{good}, args: []string{"--release", "zed"}, want: "zed"},
		{name: "unknown flag value", flag: "2025.2", err: `--nova-release: rpctl knows the rules of zed, 2023.1, 2023.2, 2024.1, 2024.2, 2025.1, not "2025.2"`},
		{name: "unknown config value", files: []string{bad}, err: bad + `:2: [rpctl] nova_release: rpctl knows the rules of`},
		{name: "unknown flag value, no --release", flag: "epoxy", noRelease: true, err: `--nova-release: rpctl knows the rules of`},
		{name: "config value, no --release", files: []string{bad}, noRelease: true},
	} {
		f := &Factory{NovaReleaseFlag: tc.flag, ConfigFiles: tc.files, Embedded: "x.db"}
		var rel string
		cmd := &cobra.Command{Use: "x", RunE: func(*cobra.Command, []string) error { return nil }}
		if !tc.noRelease {
			cmd.Flags().StringVar(&rel, "release", "zed", "")
		}
		if err := cmd.ParseFlags(tc.args); err != nil {
			t.Fatal(err)
		}
		err := ApplyNovaRelease(cmd, f)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: %v; want an error containing %q", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil || rel != tc.want && !tc.noRelease {
			t.Errorf("%s: release %q, %v; want %q", tc.name, rel, err, tc.want)
		}
	}
}
