package status_test

import (
	"context"
	"strings"
	"testing"

	"github.com/rpctl/rpctl/internal/release"
	"github.com/rpctl/rpctl/status"
)

type head struct{ name, rev string }

func (h head) Name() string                                   { return h.name }
func (h head) CellSchemaHead(context.Context) (string, error) { return h.rev, nil }

// TestReleaseOfCellHead: the cell schema heads of Nova 26.2.2 and 31.0.0's
// db sync (TestDetectReleaseDBSync reads them from the real ones), and the
// heads rpctl refuses.
func TestReleaseOfCellHead(t *testing.T) {
	for _, tc := range []struct {
		head, want, err string
	}{
		{head: "ccb0fa1a2252", want: "zed"},
		{head: "2903cd72dc14", want: "2025.1"},
		{head: "1acf2c98e646", err: "between Zed's and 2025.1's heads"},
		{head: "16f1fbcab42b", err: "older than Zed's head"},
		{head: "", err: "no alembic_version"},
		{head: "deadbeef0000", err: "no Nova cell schema head rpctl knows"},
	} {
		got, err := status.ReleaseOfCellHead(tc.head)
		if string(got) != tc.want || (tc.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("ReleaseOfCellHead(%q) = %q, %v; want %q, error containing %q", tc.head, got, err, tc.want, tc.err)
		}
	}
	ctx := context.Background()
	if rel, _, err := status.DetectRelease(ctx, []status.SchemaHead{head{"cell0", "2903cd72dc14"}, head{"cell1", "2903cd72dc14"}}); err != nil || rel != release.R2025_1 {
		t.Errorf("two 2025.1 cells: %q, %v", rel, err)
	}
	if _, _, err := status.DetectRelease(ctx, []status.SchemaHead{head{"cell1", "2903cd72dc14"}, head{"cell2", "ccb0fa1a2252"}}); err == nil || !strings.Contains(err.Error(), "different releases") {
		t.Errorf("cells of two releases: %v", err)
	}
}
