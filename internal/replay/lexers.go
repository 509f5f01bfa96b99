package replay

import (
	"embed"
	"io/fs"
	"sync"

	"github.com/alecthomas/chroma/v2"
)

// lexerFiles are chroma's lexers serialised to XML, every one chroma can
// serialise (TestChromaLexersCopied checks them against the chroma in
// go.mod; `go generate` rewrites them after an upgrade).
//
// Why a copy: chroma's lexers package parses its 279 XML lexers and
// compiles their analyser regexps in its package init, and Go runs the
// init of every linked package whatever the command: about 31,000
// allocations and 2.7 MB in every `muster` start, `muster version`
// included, for code only replays run. Here they are parsed on the first
// highlighted block. Chroma's lexers written in Go are not data; Go and
// markdown are copied (chromago.go), and the rest (notCopied in
// lexers_test.go: HTTP, reST, Raku, Haxe, Svelte, Lisps, Caddyfile,
// Gemtext, Markless and template languages that embed HTML) show as
// plain code, as every unknown language does.
//
//go:generate go test -run TestChromaLexersCopied -update-lexers .
//go:embed chroma-lexers/*.xml
var lexerFiles embed.FS

// codeLexers is the registry of lexers, built on first use.
var codeLexers = sync.OnceValue(func() *chroma.LexerRegistry {
	reg := chroma.NewLexerRegistry()
	paths, err := fs.Glob(lexerFiles, "chroma-lexers/*.xml")
	if err != nil {
		panic(err)
	}
	for _, p := range paths {
		// chroma's own lexers, checked by a test: a failure is a bad copy.
		reg.Register(chroma.MustNewXMLLexer(lexerFiles, p))
	}
	// As chroma's go.go registers them, after the XML lexers.
	reg.Register(goLexer(reg))
	reg.Register(newMarkdownLexer(reg))
	reg.Register(chroma.MustNewXMLLexer(lexerFiles, "chroma-lexers/go_template.xml").SetConfig(&chroma.Config{
		Name:    "Go Text Template",
		Aliases: []string{"go-text-template"},
	}))
	return reg
})
