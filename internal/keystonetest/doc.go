// Package keystonetest holds the one test that runs rpctl against a real
// Keystone: it is a package of its own so that Keystone's slow start runs
// beside the cmd tests under `make test`, not after them.
package keystonetest
