package capacity_test

import (
	"slices"
	"testing"

	capacitycmd "github.com/rpctl/rpctl/cmd/capacity"
	"github.com/rpctl/rpctl/cmd/internal/cmdutil"
	"github.com/rpctl/rpctl/cmd/internal/shared"
	"github.com/rpctl/rpctl/internal/iostreams"
)

// TestCapacityFlags: what capacity's flags put in CapacityOptions, through
// the runF hook (nothing runs).
func TestCapacityFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want shared.CapacityOptions
	}{
		{"defaults", nil, shared.CapacityOptions{Mode: "independent"}},
		{"pack", []string{"--flavor", "m1.small", "--flavor", "m1.large", "--mode", "pack", "--mix", "m1.small=3,m1.large=1", "--hosts"},
			shared.CapacityOptions{Flavors: []string{"m1.small", "m1.large"}, Mode: "pack", Mix: "m1.small=3,m1.large=1", Hosts: true}},
		{"aggregate and plot", []string{"--aggregate", "agg1", "--plot", "out.png"}, shared.CapacityOptions{Aggregate: "agg1", Plot: "out.png", Mode: "independent"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ios, _, _, _ := iostreams.Test()
			var got *shared.CapacityOptions
			c := capacitycmd.NewCmdCapacity(cmdutil.NewFactory(ios), func(o *shared.CapacityOptions) error { got = o; return nil })
			c.SetArgs(tt.args)
			if err := c.Execute(); err != nil {
				t.Fatal(err)
			}
			if got == nil {
				t.Fatal("runF was not called")
			}
			if !slices.Equal(got.Flavors, tt.want.Flavors) || got.Mode != tt.want.Mode || got.Mix != tt.want.Mix ||
				got.Hosts != tt.want.Hosts || got.Aggregate != tt.want.Aggregate || got.Plot != tt.want.Plot {
				t.Errorf("got %+v, want %+v", *got, tt.want)
			}
		})
	}
}
