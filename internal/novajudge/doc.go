// Package novajudge holds issue #32's differential test: a fleet built by
// Nova 26's own compute code (scripts/nova_fleet_judge.py) reports to a real
// placement-api, rpctl migrates the same cell rows into an empty Placement,
// and every provider, inventory, trait, aggregate and allocation of the two
// is compared. The package has no code of its own; the test is
// judge_test.go.
package novajudge
