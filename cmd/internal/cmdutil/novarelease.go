package cmdutil

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/rpctl/rpctl/internal/release"
)

// NovaReleaseHelp is --nova-release's help.
const NovaReleaseHelp = "the OpenStack release the cloud runs, for every command's --release left unset and instead of status --release auto's detection (or [rpctl] nova_release in nova.conf or placement.conf); a release rpctl does not know is refused: name the nearest it knows"

// NovaRelease is the release the operator names for the cloud:
// --nova-release, else [rpctl] nova_release of the config files; source
// says which ("" and no error when neither is set). A release rpctl does
// not know is an error naming the setting and the releases it knows.
func (f *Factory) NovaRelease() (release.Name, string, error) {
	if f.NovaReleaseFlag != "" {
		n, err := release.Parse(f.NovaReleaseFlag)
		if err != nil {
			return "", "", fmt.Errorf("--nova-release: %w", err)
		}
		return n, "--nova-release", nil
	}
	o, err := f.Options()
	if err != nil || o.NovaRelease.Value == "" {
		// A config file that cannot be read is the command's own error
		// when it reads the options; here it names no release.
		return "", "", nil
	}
	n, err := release.Parse(o.NovaRelease.Value)
	if err != nil {
		return "", "", fmt.Errorf("%s: [rpctl] nova_release: %w", o.NovaRelease.Source, err)
	}
	return n, o.NovaRelease.Source + " [rpctl] nova_release", nil
}

// ApplyNovaRelease makes the release the operator names (NovaRelease) the
// value of cmd's --release when the command line leaves it unset, so every
// command that follows a release's rules follows the cloud's. It runs
// before every command; a command without --release is left alone.
func ApplyNovaRelease(cmd *cobra.Command, f *Factory) error {
	fl := cmd.Flags().Lookup("release")
	if f.NovaReleaseFlag == "" && (fl == nil || fl.Changed) {
		return nil
	}
	n, _, err := f.NovaRelease()
	if err != nil {
		// A bad setting, like a bad flag or config value: exit 255.
		return BadCommandLine("%v", err)
	}
	if n == "" || fl == nil || fl.Changed {
		return nil
	}
	return fl.Value.Set(string(n))
}
