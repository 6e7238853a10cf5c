package exporter_test

import (
	"testing"
	"time"

	exportercmd "github.com/rpctl/rpctl/cmd/exporter"
	"github.com/rpctl/rpctl/cmd/internal/cmdutil"
	"github.com/rpctl/rpctl/internal/iostreams"
)

// TestExporterFlags: what the exporter's flags put in ExporterOptions,
// through the runF hook (nothing is served).
func TestExporterFlags(t *testing.T) {
	tests := []struct {
		name             string
		args             []string
		listen           string
		interval, expiry time.Duration
		release          string
	}{
		{"defaults", nil, "127.0.0.1:9465", time.Minute, 300 * time.Second, "zed"},
		{"given", []string{"--listen", "0.0.0.0:9100", "--interval", "30s", "--expiry", "1h", "--release", "2025.1"}, "0.0.0.0:9100", 30 * time.Second, time.Hour, "2025.1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ios, _, _, _ := iostreams.Test()
			var got *exportercmd.ExporterOptions
			c := exportercmd.NewCmdExporter(cmdutil.NewFactory(ios), func(o *exportercmd.ExporterOptions) error { got = o; return nil })
			c.SetArgs(tt.args)
			if err := c.Execute(); err != nil {
				t.Fatal(err)
			}
			if got == nil || got.Listen != tt.listen || got.Interval != tt.interval || got.Expiry != tt.expiry {
				t.Errorf("got %+v, want listen %s interval %s expiry %s", got, tt.listen, tt.interval, tt.expiry)
			}
			// One --release serves the flavors' requests and the checks.
			if got != nil && (got.FlavorOptions.Release != tt.release || got.StatusCheckOptions.Release != tt.release) {
				t.Errorf("--release: flavors %q, checks %q, want %q for both", got.FlavorOptions.Release, got.StatusCheckOptions.Release, tt.release)
			}
		})
	}
}
