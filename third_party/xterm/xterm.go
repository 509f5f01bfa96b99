// Package xterm embeds xterm.js and its fit addon, as published on npm,
// for `muster serve`'s terminal views: the files are served from the
// binary, so a page never loads code from elsewhere and nothing is built
// at run time. README.md says where the files came from.
package xterm

import _ "embed"

// The files as the npm packages ship them, unmodified.
var (
	//go:embed xterm.js
	JS []byte
	//go:embed xterm.css
	CSS []byte
	//go:embed addon-fit.js
	FitJS []byte
)

// Version is the version of @xterm/xterm; FitVersion of @xterm/addon-fit.
const (
	Version    = "6.0.0"
	FitVersion = "0.11.0"
)
