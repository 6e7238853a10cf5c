package candidates_test

import (
	"testing"

	candidatescmd "github.com/rpctl/rpctl/cmd/candidates"
	"github.com/rpctl/rpctl/cmd/internal/cmdutil"
	"github.com/rpctl/rpctl/internal/iostreams"
)

// TestCandidatesFlags: what the flags put in CandidatesOptions, through the
// runF hook (nothing runs): which bounds were set, and the microversion a
// --flavor request is asked at (Nova 26's 1.36 unless --microversion).
func TestCandidatesFlags(t *testing.T) {
	tests := []struct {
		name             string
		args             []string
		limitSet         bool
		maxSet           bool
		microversion     string
		resources, query string
	}{
		{name: "resources", args: []string{"--resources", "VCPU:1"}, resources: "VCPU:1", microversion: "1.39"},
		{name: "limit set", args: []string{"--query", "resources=VCPU:1", "--limit", "5"}, limitSet: true, query: "resources=VCPU:1", microversion: "1.39"},
		{name: "max-candidates set", args: []string{"--resources", "VCPU:1", "--max-candidates", "0"}, maxSet: true, resources: "VCPU:1", microversion: "1.39"},
		{name: "flavor asks at 1.36", args: []string{"--flavor", "m1.small"}, microversion: "1.36"},
		{name: "flavor at a given microversion", args: []string{"--flavor", "m1.small", "--microversion", "1.39"}, microversion: "1.39"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ios, _, _, _ := iostreams.Test()
			var got *candidatescmd.CandidatesOptions
			c := candidatescmd.NewCmdCandidates(cmdutil.NewFactory(ios), func(o *candidatescmd.CandidatesOptions) error { got = o; return nil })
			c.SetArgs(tt.args)
			if err := c.Execute(); err != nil {
				t.Fatal(err)
			}
			if got == nil {
				t.Fatal("runF was not called")
			}
			if got.LimitSet != tt.limitSet || got.MaxCandidatesSet != tt.maxSet || got.Microversion != tt.microversion ||
				got.Resources != tt.resources || got.Query != tt.query {
				t.Errorf("got LimitSet=%v MaxCandidatesSet=%v Microversion=%q Resources=%q Query=%q", got.LimitSet, got.MaxCandidatesSet, got.Microversion, got.Resources, got.Query)
			}
		})
	}
}
