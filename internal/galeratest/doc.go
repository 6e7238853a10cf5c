// Package galeratest holds rpctl's end-to-end proofs on a real 3-node
// MariaDB Galera cluster (testdb.NewGalera): concurrent migrations through
// different nodes, the lost-update proof across nodes, and a node killed
// mid-migration. It has no code of its own; `make galera` runs it alone.
package galeratest
