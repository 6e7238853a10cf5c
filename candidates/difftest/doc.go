// Package difftest holds the differential test of rpctl's Placement core: it
// builds random provider clouds through the real placement-api's REST API,
// then sends the same random GET /allocation_candidates queries to the real
// API and to candidates.Model loaded (by package storage) from the very same
// database, and requires identical answers apart from the deliberate
// differences docs/candidates.md lists. It has no code outside its tests.
package difftest
