package status_test

import (
	"slices"
	"testing"

	"github.com/spf13/cobra"

	"github.com/rpctl/rpctl/cmd/internal/cmdutil"
	"github.com/rpctl/rpctl/cmd/internal/shared"
	statuscmd "github.com/rpctl/rpctl/cmd/status"
	"github.com/rpctl/rpctl/internal/iostreams"
	"github.com/rpctl/rpctl/status"
)

// TestStatusFlags: what the flags of status and upgrade check put in
// StatusOptions, through the runF hook (nothing runs).
func TestStatusFlags(t *testing.T) {
	want := func(json bool, checks []string, minVersion int64, release string) statuscmd.StatusOptions {
		return statuscmd.StatusOptions{JSON: json, StatusCheckOptions: shared.StatusCheckOptions{Checks: checks, MinServiceVersion: minVersion, Release: release}}
	}
	tests := []struct {
		name string
		cmd  func(*cmdutil.Factory, func(*statuscmd.StatusOptions) error) *cobra.Command
		args []string
		want statuscmd.StatusOptions
	}{
		{"defaults", statuscmd.NewCmdStatus, nil, want(false, nil, status.DefaultMinServiceVersion, "zed")},
		{"release", statuscmd.NewCmdStatus, []string{"--release", "2025.1"}, want(false, nil, status.DefaultMinServiceVersion, "2025.1")},
		{"every flag", statuscmd.NewCmdStatus, []string{"--json", "--check", "Cells", "--check", "compute-node-uuids", "--min-service-version", "61"},
			want(true, []string{"Cells", "compute-node-uuids"}, 61, "zed")},
		{"upgrade check", statuscmd.NewCmdUpgrade, []string{"check", "--json"},
			want(true, nil, status.DefaultMinServiceVersion, "zed")},
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
