package cmd_test

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/cmd/internal/cmdtest"
)

// TestUpgradeGuide walks docs/upgrade-guide.md on the sample cloud: its
// config file examples, each written out with every `connection` pointed at
// the sample cloud's SQLite file, are the files rpctl reads by default, and
// every `rpctl` line of its sh blocks runs in the guide's order with the exit
// code the line is marked with (`# exit N`; none: 0).
func TestUpgradeGuide(t *testing.T) {
	guide, err := os.ReadFile("../docs/upgrade-guide.md")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cloud := filepath.Join(dir, "cloud.db")
	if err := os.MkdirAll(filepath.Join(dir, "backups"), 0o755); err != nil {
		t.Fatal(err)
	}
	blocks := fencedBlocks(string(guide))

	// The config files: complete examples, named by their first line.
	files := map[string]string{}
	for _, b := range blocks {
		if b.lang != "ini" {
			continue
		}
		name, _ := strings.CutPrefix(strings.SplitN(b.text, "\n", 2)[0], "# ")
		conf := connectionLine.ReplaceAllString(b.text, "connection = sqlite:///"+cloud)
		local := filepath.Join(dir, filepath.Base(name))
		if err := os.WriteFile(local, []byte(conf), 0o600); err != nil {
			t.Fatal(err)
		}
		files[name] = local
	}
	var defaults []string
	for _, name := range []string{"/etc/nova/nova.conf", "/etc/placement/placement.conf"} {
		if files[name] == "" {
			t.Fatalf("the guide has no example of %s (an ini block whose first line is '# %s')", name, name)
		}
		defaults = append(defaults, files[name])
	}
	t.Setenv("RPCTL_DEFAULT_CONFIG_FILES", strings.Join(defaults, ":"))
	paths := strings.NewReplacer("/tmp/rehearsal.db", cloud, "/var/backups/rpctl/", filepath.Join(dir, "backups")+"/",
		"/etc/nova/nova.conf", files["/etc/nova/nova.conf"], "/etc/placement/placement.conf", files["/etc/placement/placement.conf"])

	ran := 0
	for _, b := range blocks {
		if b.lang != "sh" {
			continue
		}
		sc := bufio.NewScanner(strings.NewReader(b.text))
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			if !strings.HasPrefix(line, "rpctl ") {
				continue
			}
			args, want, err := guideCommand(paths.Replace(line))
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			out, errOut, code := cmdtest.Rpctl(t, args[1:]...)
			if code != want {
				t.Fatalf("%s: exit %d, the guide says %d\nstdout:\n%s\nstderr:\n%s", line, code, want, out, errOut)
			}
			t.Logf("%s: exit %d", line, code)
			ran++
		}
	}
	if ran < 15 {
		t.Errorf("ran %d rpctl commands of the guide; it has more", ran)
	}
}

var connectionLine = regexp.MustCompile(`(?m)^connection = .*$`)

type fenced struct{ lang, text string }

// fencedBlocks returns the guide's ``` blocks (indented ones too) with
// their language.
func fencedBlocks(doc string) []fenced {
	var blocks []fenced
	var cur *fenced
	var body []string
	for _, line := range strings.Split(doc, "\n") {
		trimmed := strings.TrimSpace(line)
		if !strings.HasPrefix(trimmed, "```") {
			if cur != nil {
				body = append(body, trimmed)
			}
			continue
		}
		if cur == nil {
			cur = &fenced{lang: strings.TrimPrefix(trimmed, "```")}
			body = nil
			continue
		}
		cur.text = strings.Join(body, "\n")
		blocks = append(blocks, *cur)
		cur = nil
	}
	return blocks
}

// guideCommand splits a command line as sh would (words, "double quotes")
// and reads its `# exit N` comment.
func guideCommand(line string) ([]string, int, error) {
	var args []string
	want := 0
	var word strings.Builder
	inWord, quoted := false, false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '"':
			quoted, inWord = !quoted, true
		case quoted:
			word.WriteByte(c)
		case c == ' ' || c == '\t':
			if inWord {
				args = append(args, word.String())
				word.Reset()
				inWord = false
			}
		case c == '#' && !inWord:
			comment := strings.TrimSpace(line[i+1:])
			if n, ok := strings.CutPrefix(comment, "exit "); ok {
				var err error
				if want, err = strconv.Atoi(n); err != nil {
					return nil, 0, err
				}
			}
			i = len(line)
		case strings.ContainsRune("<>|&;$`'\\", rune(c)):
			return nil, 0, strconv.ErrSyntax
		default:
			word.WriteByte(c)
			inWord = true
		}
	}
	if quoted {
		return nil, 0, strconv.ErrSyntax
	}
	if inWord {
		args = append(args, word.String())
	}
	return args, want, nil
}
