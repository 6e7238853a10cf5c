// Package status is rpctl's upgrade check: nova-status-style checks of the
// Nova cells, the API database and Placement, run in order and all of them,
// with oslo.upgradecheck's table, a real --json and its exit codes.
package status

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

// Code is a check's outcome, oslo.upgradecheck's Code.
type Code int

// The outcomes, worst last; the command exits with the worst.
const (
	Success Code = 0
	Warning Code = 1
	Failure Code = 2
)

// ExitCrashed is the exit code when a check itself broke; oslo.upgradecheck
// uses 255 so that it is not taken for a check's verdict.
const ExitCrashed = 255

// Check is one named upgrade check. Run returns the verdict and, for a
// warning or failure, details telling the operator what to do (empty details
// print as "None"). An error or a panic means the check itself broke: it is
// reported, the remaining checks still run, and the run exits 255.
type Check struct {
	Name string
	Run  func(ctx context.Context) (Code, string, error)
	// Tool is the upstream command whose check this is (ToolNova,
	// ToolPlacement), or ToolRpctl for rpctl's own.
	Tool string
	// Source says where the check reads from (Env.Sources), once wired;
	// nil says nothing.
	Source func() string
}

// The tools whose checks rpctl status carries; a tool's name given to
// --check selects all its checks.
const (
	ToolNova      = "nova-status"
	ToolPlacement = "placement-status"
	ToolRpctl     = "rpctl"
)

// Result is a check's outcome.
type Result struct {
	Check string
	// Tool is the check's Tool.
	Tool    string
	Code    Code
	Details string
	// Crashed is set when Run returned an error or panicked; Code is then
	// Failure and Details say what broke.
	Crashed bool
	// Unreadable is set when the check could not read its database (not
	// configured, unreachable, a table missing): Code is Failure, Details
	// name the database, and the run exits 255, as for a crash.
	Unreadable bool
	// Elapsed is how long the check took (for --verbose and benchmarks).
	Elapsed time.Duration
	// Source says where the check read from: the databases (and the
	// config line or flag naming each), the APIs, the files.
	Source string
}

// Report is the outcome of a run.
type Report struct {
	Results []Result
}

// Exit is the process exit code: 255 if a check crashed, else the worst code.
func (r Report) Exit() int {
	worst := Success
	for _, res := range r.Results {
		if res.Crashed || res.Unreadable {
			return ExitCrashed
		}
		worst = max(worst, res.Code)
	}
	return int(worst)
}

// Run runs every check, whatever the others find, and reports them in the
// checks' order. The checks run concurrently: each waits mostly on its own
// queries, to the cells or to Placement, which the servers answer in
// parallel (checks that share a bulk read share it through Env).
func Run(ctx context.Context, checks []Check) Report {
	var rep Report
	if len(checks) == 0 {
		return rep
	}
	rep.Results = make([]Result, len(checks))
	var wg sync.WaitGroup
	for i, c := range checks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := time.Now()
			r := runOne(ctx, c)
			r.Elapsed = time.Since(start)
			rep.Results[i] = r
		}()
	}
	wg.Wait()
	return rep
}

func runOne(ctx context.Context, c Check) (res Result) {
	res = runCheck(ctx, c)
	res.Tool = c.Tool
	if c.Source != nil {
		res.Source = c.Source()
	}
	return res
}

func runCheck(ctx context.Context, c Check) (res Result) {
	res.Check = c.Name
	defer func() {
		if p := recover(); p != nil {
			res.Code, res.Crashed = Failure, true
			res.Details = fmt.Sprintf("Error: the check crashed: %v", p)
		}
	}()
	code, details, err := c.Run(ctx)
	var unreadable *unreadableError
	if errors.As(err, &unreadable) {
		return Result{Check: c.Name, Code: Failure, Details: unreadable.Error(), Unreadable: true}
	}
	if err != nil {
		return Result{Check: c.Name, Code: Failure, Details: "Error: " + err.Error(), Crashed: true}
	}
	if code < Success || code > Failure {
		return Result{Check: c.Name, Code: Failure, Details: fmt.Sprintf("Error: the check returned an unknown code %d", code), Crashed: true}
	}
	res.Code, res.Details = code, details
	return res
}

// Select returns the checks whose names are in names (case-insensitive, and
// "compute-node-uuids" matches "Compute Node UUIDs"), or whose tool is
// ("nova-status", "placement-status", "rpctl"), in the checks' order. An
// unknown name is an error listing the known ones.
func Select(checks []Check, names []string) ([]Check, error) {
	if len(names) == 0 {
		return checks, nil
	}
	want := map[string]bool{}
	for _, n := range names {
		k := slug(n)
		found := false
		for _, c := range checks {
			if slug(c.Name) == k || slug(tool(c)) == k {
				found = true
			}
		}
		if !found {
			var known []string
			for _, c := range checks {
				if q := fmt.Sprintf("%q", c.Name); !slices.Contains(known, q) {
					known = append(known, q)
				}
			}
			return nil, fmt.Errorf("--check %q: no such check (checks: %s; or a tool's: %s, %s, %s)", n, strings.Join(known, ", "), ToolNova, ToolPlacement, ToolRpctl)
		}
		want[k] = true
	}
	var out []Check
	for _, c := range checks {
		if want[slug(c.Name)] || want[slug(tool(c))] {
			out = append(out, c)
		}
	}
	return out, nil
}

func tool(c Check) string {
	if c.Tool == "" {
		return ToolRpctl
	}
	return c.Tool
}

// slug folds a check name for matching: lower case, runs of anything but
// letters and digits become one '-'.
func slug(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(strings.TrimSpace(s)) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(r)
			dash = false
		} else {
			dash = true
		}
	}
	return b.String()
}

// CheckSlugs are the names --check takes, for completion: every check's
// name as a slug ("compute-node-uuids"), in the checks' order, then the
// tools'.
func CheckSlugs() []string {
	var out []string
	for _, c := range Checks(&Env{}) {
		if s := slug(c.Name); !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return append(out, ToolNova, ToolPlacement, ToolRpctl)
}
