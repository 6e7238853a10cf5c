package status_test

import (
	"slices"
	"testing"

	"github.com/spf13/cobra"

	"github.com/rpctl/rpctl/cmd/internal/cmdutil"
	statuscmd "github.com/rpctl/rpctl/cmd/status"
	"github.com/rpctl/rpctl/internal/iostreams"
	"github.com/rpctl/rpctl/status"
)

// TestStatusFlags: what the flags of status and upgrade check put in
// StatusOptions, through the runF hook (nothing runs).
func TestStatusFlags(t *testing.T) {
	tests := []struct {
		name string
		cmd  func(*cmdutil.Factory, func(*statuscmd.StatusOptions) error) *cobra.Command
		args []string
		want statuscmd.StatusOptions
	}{
		{"defaults", statuscmd.NewCmdStatus, nil, statuscmd.StatusOptions{MinServiceVersion: status.DefaultMinServiceVersion, Release: "zed"}},
		{"release", statuscmd.NewCmdStatus, []string{"--release", "2025.1"}, statuscmd.StatusOptions{MinServiceVersion: status.DefaultMinServiceVersion, Release: "2025.1"}},
		{"every flag", statuscmd.NewCmdStatus, []string{"--json", "--check", "Cells", "--check", "compute-node-uuids", "--min-service-version", "61"},
			statuscmd.StatusOptions{JSON: true, Checks: []string{"Cells", "compute-node-uuids"}, MinServiceVersion: 61, Release: "zed"}},
		{"upgrade check", statuscmd.NewCmdUpgrade, []string{"check", "--json"},
			statuscmd.StatusOptions{JSON: true, MinServiceVersion: status.DefaultMinServiceVersion, Release: "zed"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ios, _, _, _ := iostreams.Test()
			var got *statuscmd.StatusOptions
			c := tt.cmd(cmdutil.NewFactory(ios), func(o *statuscmd.StatusOptions) error { got = o; return nil })
			c.SetArgs(tt.args)
			if err := c.Execute(); err != nil {
				t.Fatal(err)
			}
			if got == nil {
				t.Fatal("runF was not called")
			}
			if got.JSON != tt.want.JSON || !slices.Equal(got.Checks, tt.want.Checks) || got.MinServiceVersion != tt.want.MinServiceVersion || got.Release != tt.want.Release {
				t.Errorf("got %+v, want %+v", *got, tt.want)
			}
		})
	}
}
