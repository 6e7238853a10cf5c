package cmdutil

import (
	"strings"

	"github.com/spf13/cobra"
)

// OptionsTopic is the help topic that lists the global flags: `rpctl
// options` (or `rpctl help options`), as openstackclient's `openstack
// --help` lists its global options once and each command's help only the
// command's own.
const OptionsTopic = "options"

// usageTemplate is cobra 1.10's default usage template with the global
// flags left out of a command's help: a line names the topic instead (they
// made up about 36 of the 64-106 lines of every subcommand's help).
// Executed only when a help is shown.
const usageTemplate = `Usage:{{if .Runnable}}
  {{.UseLine}}{{end}}{{if .HasAvailableSubCommands}}
  {{.CommandPath}} [command]{{end}}{{if gt (len .Aliases) 0}}

Aliases:
  {{.NameAndAliases}}{{end}}{{if .HasExample}}

Examples:
{{.Example}}{{end}}{{if .HasAvailableSubCommands}}{{$cmds := .Commands}}

Available Commands:{{range $cmds}}{{if (or .IsAvailableCommand (eq .Name "help"))}}
  {{rpad .Name .NamePadding }} {{.Short}}{{end}}{{end}}{{end}}{{if .HasAvailableLocalFlags}}

Flags:
{{.LocalFlags.FlagUsages | trimTrailingWhitespaces}}{{end}}{{if .HasAvailableInheritedFlags}}

Global flags (databases, Placement API, output format and columns, logging): rpctl options{{end}}{{if .HasHelpSubCommands}}

Additional help topics:{{range .Commands}}{{if .IsAdditionalHelpTopicCommand}}
  {{rpad .CommandPath .CommandPathPadding}} {{.Short}}{{end}}{{end}}{{end}}{{if .HasAvailableSubCommands}}

Use "{{.CommandPath}} [command] --help" for more information about a command.{{end}}
`

// AddOptionsTopic gives root the usage template above and the options
// topic, whose text (the global flags) is written when it is shown.
func AddOptionsTopic(root *cobra.Command) {
	root.SetUsageTemplate(usageTemplate)
	root.AddCommand(&cobra.Command{
		Use:   OptionsTopic,
		Short: "The global flags every command takes: databases, Placement API, output, logging",
	})
}

// fillOptionsTopic writes the options topic's text from root's flags: at
// help time, so that no run pays for rendering them.
func fillOptionsTopic(c *cobra.Command) {
	if c.Name() != OptionsTopic || !c.HasParent() || c.Parent().HasParent() || c.Long != "" {
		return
	}
	c.Long = `The global flags: every command takes them, before or after its name, and its own
help names only its own flags.

` + strings.TrimRight(c.Root().PersistentFlags().FlagUsages(), " \n")
}

// examples gives a command without an Example its Examples section (see
// SetExamples); nil: none.
var examples func(path string) string

// SetExamples names the function that gives a command's Examples section
// by command path; the section joins the help when it is shown.
func SetExamples(fn func(path string) string) { examples = fn }

// addExample fills c's Example from the examples function, once.
func addExample(c *cobra.Command) {
	if c.Example == "" && examples != nil {
		c.Example = examples(c.CommandPath())
	}
}
