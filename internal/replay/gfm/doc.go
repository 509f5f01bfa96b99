// Package gfm holds the GitHub Flavored Markdown extensions replays render
// with: tables, strikethrough, task lists and autolinks, for goldmark.
//
// table.go, strikethrough.go, tasklist.go and linkify.go are goldmark
// v1.8.0's extension package (github.com/yuin/goldmark/extension, MIT
// License, Copyright (c) 2019 Yusuke Inuzuka; see LICENSE.goldmark), with
// one change: their regexps compile on first use. That package compiles
// them, and builds every other extension it holds, when a program starts:
// linking it cost every muster command, replays or not, about 20 ms of CPU
// and 200 page faults (`muster version`: 51 → 32 ms), mostly the
// autolink patterns' {1,256}, whose compilation recurses 256 deep. The
// AST nodes stay goldmark's (github.com/yuin/goldmark/extension/ast),
// which cost nothing to link, so rendering is as before; the tests and
// their cases (_test) are goldmark's too.
package gfm

import (
	"regexp"
	"sync"
)

// lazyRegexp compiles src when first used.
func lazyRegexp(src string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(src) })
}
