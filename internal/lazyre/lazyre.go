// Package lazyre holds regular expressions that compile on first use.
//
// A package-level regexp.MustCompile runs at program start in every
// command, even `rpctl --version`, and Go has no way to skip the init of a
// package that is linked in (issue 22). A *Regexp declared as
//
//	var name = &lazyre.Regexp{Expr: `...`}
//
// is laid out by the linker with no code at init; the expression compiles
// the first time Get is called.
package lazyre

import (
	"regexp"
	"sync"
)

// Regexp is a regular expression compiled once, when first used.
type Regexp struct {
	// Expr is the expression; it must compile (a bad one panics on first
	// use, as regexp.MustCompile would at init).
	Expr string
	once sync.Once
	re   *regexp.Regexp
}

// Get returns the compiled expression.
func (r *Regexp) Get() *regexp.Regexp {
	r.once.Do(func() { r.re = regexp.MustCompile(r.Expr) })
	return r.re
}
