// Command gendocs writes rpctl's command reference (markdown) and man pages
// (section 1) from the cobra tree: `make docs`, i.e.
//
//	go run ./cmd/internal/gendocs -out docs
//
// writes OUT/reference/*.md and OUT/man/*.1. It sits under cmd/ because it
// walks the command tree (helpers under internal/ import no domain), and
// beside cmd/rpctl rather than in it, so that cobra/doc and its
// markdown-to-roff renderer are not linked into the binary operators run.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
	"github.com/spf13/pflag"

	"github.com/rpctl/rpctl/cmd"
	"github.com/rpctl/rpctl/cmd/internal/cmdutil"
	"github.com/rpctl/rpctl/internal/iostreams"
)

// manDate is the date every man page's footer carries. It is fixed because
// the pages are committed and checked for staleness: a date taken from the
// clock would make every regeneration differ from the last.
var manDate = time.Date(2026, time.November, 1, 0, 0, 0, 0, time.UTC)

// defaultChangingEnv are the variables that change flag defaults in the
// command tree (cliff's terminal-width settings); the generated pages must
// not depend on the environment of whoever runs `make docs`.
var defaultChangingEnv = []string{"CLIFF_MAX_TERM_WIDTH", "CLIFF_FIT_WIDTH"}

func main() {
	out := flag.String("out", "docs", "directory to write reference/ and man/ into")
	flag.Parse()
	if err := generate(*out); err != nil {
		fmt.Fprintln(os.Stderr, "gendocs:", err)
		os.Exit(1)
	}
}

// generate replaces OUT/reference and OUT/man with pages for every command,
// so that a removed command's pages go too.
func generate(out string) error {
	for _, name := range defaultChangingEnv {
		os.Unsetenv(name)
	}
	ref, man := filepath.Join(out, "reference"), filepath.Join(out, "man")
	for _, dir := range []string{ref, man} {
		if err := os.RemoveAll(dir); err != nil {
			return err
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	// The markdown pages show flags in a code block; the man pages render
	// Flag usages as markdown too.
	err := eachPage(commandTree(false), func(c *cobra.Command, global bool) error {
		var b bytes.Buffer
		if err := doc.GenMarkdownCustom(c, &b, func(name string) string { return name }); err != nil {
			return err
		}
		page := b.String()
		if global {
			page = insertBefore(page, "### SEE ALSO\n", "### Global flags\n\n"+globalFlagsLine+
				" [rpctl options]("+pageName(c.Root(), "_")+"_"+cmdutil.OptionsTopic+".md).\n\n")
		}
		return os.WriteFile(filepath.Join(ref, pageName(c, "_")+".md"), []byte(page), 0o644)
	})
	if err != nil {
		return fmt.Errorf("markdown: %w", err)
	}
	err = eachPage(commandTree(true), func(c *cobra.Command, global bool) error {
		header := &doc.GenManHeader{Section: "1", Date: &manDate, Source: "rpctl", Manual: "rpctl Manual"}
		var b bytes.Buffer
		if err := doc.GenMan(c, header, &b); err != nil {
			return err
		}
		page := b.String()
		if global {
			page = insertBefore(page, ".SH SEE ALSO\n", ".SH GLOBAL FLAGS\n.PP\n"+globalFlagsLine+
				" \\fB"+pageName(c.Root(), "\\-")+"\\-"+cmdutil.OptionsTopic+"(1)\\fP.\n\n\n")
		}
		return os.WriteFile(filepath.Join(man, pageName(c, "-")+".1"), []byte(page), 0o644)
	})
	if err != nil {
		return fmt.Errorf("man pages: %w", err)
	}
	return nil
}

// globalFlagsLine is what a command's page says in place of the global
// flags, as its --help does (cmdutil's usage template): they are listed
// once, on the options topic's page (and the root's).
const globalFlagsLine = "Databases, Placement API, output format and columns, logging: every command takes the global flags, listed once in"

// eachPage calls page for the commands cobra/doc's tree generators would
// (every available command, the root first), plus the options topic,
// which lists the global flags. Every page but the root's is written with
// the global flags hidden (global: its page names the options topic
// instead), so that the ~36 lines of global flags are not repeated under
// "Options inherited from parent commands" on each of them; the topic's
// text is its --help's, the flag list taken before they are hidden.
func eachPage(root *cobra.Command, page func(c *cobra.Command, global bool) error) error {
	if err := page(root, false); err != nil {
		return err
	}
	var globals []*pflag.Flag
	root.PersistentFlags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden {
			globals = append(globals, f)
		}
	})
	for _, f := range globals {
		f.Hidden = true
	}
	defer func() {
		for _, f := range globals {
			f.Hidden = false
		}
	}()
	var walk func(c *cobra.Command) error
	walk = func(c *cobra.Command) error {
		for _, s := range c.Commands() {
			topic := s.Name() == cmdutil.OptionsTopic && c == root
			if (!s.IsAvailableCommand() || s.IsAdditionalHelpTopicCommand()) && !topic {
				continue
			}
			if err := page(s, !topic); err != nil {
				return err
			}
			if err := walk(s); err != nil {
				return err
			}
		}
		return nil
	}
	return walk(root)
}

// pageName is c's command path joined by sep, as cobra/doc names pages.
func pageName(c *cobra.Command, sep string) string {
	return strings.ReplaceAll(c.CommandPath(), " ", sep)
}

// insertBefore puts text before the first line that is mark, or at the end.
func insertBefore(page, mark, text string) string {
	if i := strings.Index(page, "\n"+mark); i >= 0 {
		return page[:i+1] + text + page[i+1:]
	}
	return page + text
}

// commandTree is the tree the binary runs, with cobra's completion command
// (which cobra adds only when executing) and without the generation date
// cobra would stamp on each page. Its help texts are turned into markdown
// that renders as --help prints them (escapeFlags: the flag usages too).
// Each generator gets a fresh tree: they add help commands and flags as
// they go, and the texts must be escaped exactly once.
func commandTree(escapeFlags bool) *cobra.Command {
	ios, _, _, _ := iostreams.Test()
	root := cmd.NewCmdRoot(cmdutil.NewFactory(ios), "")
	cmdutil.FinishHelp(root)
	root.InitDefaultCompletionCmd()
	done := map[*pflag.Flag]bool{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.DisableAutoGenTag = true
		c.Short = escapeMarkdown(c.Short)
		c.Long = helpMarkdown(c.Long)
		if escapeFlags {
			// Inherited flags are the parent's *pflag.Flag values.
			c.Flags().VisitAll(func(f *pflag.Flag) {
				if !done[f] {
					done[f] = true
					f.Usage = escapeMarkdown(f.Usage)
				}
			})
			c.PersistentFlags().VisitAll(func(f *pflag.Flag) {
				if !done[f] {
					done[f] = true
					f.Usage = escapeMarkdown(f.Usage)
				}
			})
		}
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(root)
	return root
}

// helpMarkdown turns a --help text, written for a terminal, into markdown
// that says the same: a paragraph holding indented lines (a table such as
// the exit codes, a list of flags) keeps its layout in a code block; the
// others are text in which nothing is markup (pci_stats, CUSTOM_*, <uuid>).
func helpMarkdown(s string) string {
	paras := strings.Split(strings.TrimSpace(s), "\n\n")
	for i, p := range paras {
		if laidOut(p) {
			paras[i] = "```\n" + p + "\n```"
		} else {
			paras[i] = escapeMarkdown(p)
		}
	}
	return strings.Join(paras, "\n\n")
}

func laidOut(p string) bool {
	for _, line := range strings.Split(p, "\n") {
		if strings.HasPrefix(line, " ") || strings.HasPrefix(line, "\t") {
			return true
		}
	}
	return false
}

// markdownSpecial are the characters markdown (blackfriday, which cobra's
// man pages go through) would read as markup anywhere in a line.
var markdownSpecial = strings.NewReplacer(
	`\`, `\\`, "`", "\\`", `*`, `\*`, `_`, `\_`, `[`, `\[`, `]`, `\]`,
	`<`, `\<`, `>`, `\>`, `#`, `\#`, `|`, `\|`, `~`, `\~`, `&`, `\&`,
)

// listStart matches what markdown reads as a list item at a line's start.
var listStart = regexp.MustCompile(`(?m)^([-+]|[0-9]+\.) `)

func escapeMarkdown(s string) string {
	s = markdownSpecial.Replace(s)
	return listStart.ReplaceAllStringFunc(s, func(m string) string { return `\` + m })
}
