//lint:file-ignore ST1001 chroma writes its lexers with chroma dot-imported; the copies stay diffable

package replay

import (
	"strings"

	. "github.com/alecthomas/chroma/v2"
)

// Two of chroma's lexers are written in Go rather than XML, so they are
// not in chroma-lexers/, and replays need them: Go and markdown (agents
// write both in their replies). These are chroma's lexers/go.go and
// lexers/markdown.go of chroma v2.27.0 with keyed fields (go vet's
// composites check) and the registry passed in rather than global;
// TestGoLexersAreChromas tokenises text with both copies and chroma's.

// goLexer is chroma's Go lexer. Its raw strings delegate to Go Text
// Template, from reg.
func goLexer(reg *LexerRegistry) Lexer {
	return MustNewLexer(
		&Config{
			Name:      "Go",
			Aliases:   []string{"go", "golang"},
			Filenames: []string{"*.go"},
			MimeTypes: []string{"text/x-gosrc"},
		},
		func() Rules { return goRules(reg) },
	).SetAnalyser(func(text string) float32 {
		if strings.Contains(text, "fmt.") && strings.Contains(text, "package ") {
			return 0.5
		}
		if strings.Contains(text, "package ") {
			return 0.1
		}
		return 0.0
	})
}

func goRules(reg *LexerRegistry) Rules {
	return Rules{
		"root": {
			{Pattern: `\n`, Type: TextWhitespace},
			{Pattern: `\s+`, Type: TextWhitespace},
			{Pattern: `//[^\s\n\r][^\n\r]*`, Type: CommentPreproc},
			{Pattern: `//[^\n\r]*`, Type: CommentSingle},
			{Pattern: `/(\\\n)?[*](.|\n)*?[*](\\\n)?/`, Type: CommentMultiline},
			{Pattern: `(import|package)\b`, Type: KeywordNamespace},
			{Pattern: `(var|func|struct|map|chan|type|interface|const)\b`, Type: KeywordDeclaration},
			{Pattern: Words(``, `\b`, `break`, `default`, `select`, `case`, `defer`, `go`, `else`, `goto`, `switch`, `fallthrough`, `if`, `range`, `continue`, `for`, `return`), Type: Keyword},
			{Pattern: `(true|false|iota|nil)\b`, Type: KeywordConstant},
			{Pattern: Words(``, `\b(\()`, `uint`, `uint8`, `uint16`, `uint32`, `uint64`, `int`, `int8`, `int16`, `int32`, `int64`, `float`, `float32`, `float64`, `complex64`, `complex128`, `byte`, `rune`, `string`, `bool`, `error`, `uintptr`, `print`, `println`, `panic`, `recover`, `close`, `complex`, `real`, `imag`, `len`, `cap`, `append`, `copy`, `delete`, `new`, `make`, `clear`, `min`, `max`), Type: ByGroups(NameBuiltin, Punctuation)},
			{Pattern: Words(``, `\b`, `uint`, `uint8`, `uint16`, `uint32`, `uint64`, `int`, `int8`, `int16`, `int32`, `int64`, `float`, `float32`, `float64`, `complex64`, `complex128`, `byte`, `rune`, `string`, `bool`, `error`, `uintptr`, `any`), Type: KeywordType},
			{Pattern: `\d+i`, Type: LiteralNumber},
			{Pattern: `\d+\.\d*([Ee][-+]\d+)?i`, Type: LiteralNumber},
			{Pattern: `\.\d+([Ee][-+]\d+)?i`, Type: LiteralNumber},
			{Pattern: `\d+[Ee][-+]\d+i`, Type: LiteralNumber},
			{Pattern: `\d+(\.\d+[eE][+\-]?\d+|\.\d*|[eE][+\-]?\d+)`, Type: LiteralNumberFloat},
			{Pattern: `\.\d+([eE][+\-]?\d+)?`, Type: LiteralNumberFloat},
			{Pattern: `0[0-7]+`, Type: LiteralNumberOct},
			{Pattern: `0[xX][0-9a-fA-F_]+`, Type: LiteralNumberHex},
			{Pattern: `0b[01_]+`, Type: LiteralNumberBin},
			{Pattern: `(0|[1-9][0-9_]*)`, Type: LiteralNumberInteger},
			{Pattern: `'(\\['"\\abfnrtv]|\\x[0-9a-fA-F]{2}|\\[0-7]{1,3}|\\u[0-9a-fA-F]{4}|\\U[0-9a-fA-F]{8}|[^\\])'`, Type: LiteralStringChar},
			{Pattern: "(`)([^`]*)(`)", Type: ByGroups(LiteralString, UsingLexer(TypeRemappingLexer(reg.Get("Go Text Template"), TypeMapping{{From: Other, To: LiteralString}})), LiteralString)},
			{Pattern: `"(\\\\|\\"|[^"])*"`, Type: LiteralString},
			{Pattern: `(<<=|>>=|<<|>>|<=|>=|&\^=|&\^|\+=|-=|\*=|/=|%=|&=|\|=|&&|\|\||<-|\+\+|--|==|!=|:=|\.\.\.|[+\-*/%&])`, Type: Operator},
			{Pattern: `([a-zA-Z_]\w*)(\s*)(\()`, Type: ByGroups(NameFunction, UsingSelf("root"), Punctuation)},
			{Pattern: `[|^<>=!()\[\]{}.,;:~]`, Type: Punctuation},
			{Pattern: `[^\W\d]\w*`, Type: NameOther},
		},
	}
}

// markdownLexer is chroma's markdown lexer.
func newMarkdownLexer(reg *LexerRegistry) Lexer {
	return &markdownLexer{reg: reg, Lexer: MustNewLexer(
		&Config{
			Name:      "markdown",
			Aliases:   []string{"md", "mkd"},
			Filenames: []string{"*.md", "*.mkd", "*.markdown"},
			MimeTypes: []string{"text/x-markdown"},
		},
		markdownRules,
	)}
}

// markdownLexer wraps the base Markdown lexer to highlight top-of-file YAML frontmatter.
type markdownLexer struct {
	Lexer
	reg *LexerRegistry
}

// Lexes Markdown, highlighting a leading YAML frontmatter block before delegating to Markdown rules.
func (m *markdownLexer) Tokenise(options *TokeniseOptions, text string) (Iterator, error) {
	frontmatter, rest, ok := splitFrontmatter(text)
	if !ok {
		return m.Lexer.Tokenise(options, text)
	}

	yamlLexer := m.reg.Get("YAML")
	if yamlLexer == nil {
		return m.Lexer.Tokenise(options, text)
	}

	yamlTokens, err := yamlLexer.Tokenise(options, frontmatter)
	if err != nil {
		return nil, err
	}
	markdownTokens, err := m.Lexer.Tokenise(options, rest)
	if err != nil {
		return nil, err
	}
	return Concaterator(yamlTokens, markdownTokens), nil
}

// Extracts a leading YAML frontmatter block if the document starts with one.
func splitFrontmatter(text string) (frontmatter string, rest string, ok bool) {
	if !strings.HasPrefix(text, "---\n") && !strings.HasPrefix(text, "---\r\n") {
		return "", text, false
	}

	lineEnd := strings.IndexByte(text, '\n')
	if lineEnd < 0 {
		return "", text, false
	}
	if strings.TrimSuffix(text[:lineEnd], "\r") != "---" {
		return "", text, false
	}

	for pos := lineEnd + 1; pos < len(text); {
		next := strings.IndexByte(text[pos:], '\n')
		if next < 0 {
			break
		}
		lineEnd = pos + next
		line := strings.TrimSuffix(text[pos:lineEnd], "\r")
		if line == "---" {
			return text[:lineEnd+1], text[lineEnd+1:], true
		}
		pos = lineEnd + 1
	}
	return "", text, false
}

func markdownRules() Rules {
	return Rules{
		"root": {
			{Pattern: `<!--[\w\W]*?-->`, Type: CommentMultiline},
			{Pattern: `^(#[^#].+\n)`, Type: ByGroups(GenericHeading)},
			{Pattern: `^(#{2,6}.+\n)`, Type: ByGroups(GenericSubheading)},
			{Pattern: `^(\s*)([*-] )(\[[ xX]\])( .+\n)`, Type: ByGroups(Text, Keyword, Keyword, UsingSelf("inline"))},
			{Pattern: `^(\s*)([*-])(\s)(.+\n)`, Type: ByGroups(Text, Keyword, Text, UsingSelf("inline"))},
			{Pattern: `^(\s*)([0-9]+\.)( .+\n)`, Type: ByGroups(Text, Keyword, UsingSelf("inline"))},
			{Pattern: `^(\s*>\s)(.+\n)`, Type: ByGroups(Keyword, GenericEmph)},
			{Pattern: "^(```\\n)([\\w\\W]*?)(^```$)", Type: ByGroups(String, Text, String)},
			{
				Pattern: "^(```)(\\w+)(\\n)([\\w\\W]*?)(^```$)",
				Type:    UsingByGroup(2, 4, String, String, String, Text, String),
			},
			Include("inline"),
		},
		"inline": {
			{Pattern: `<!--[\w\W]*?-->`, Type: CommentMultiline},
			{Pattern: `\\.`, Type: Text},
			{Pattern: `(\s)(\*|_)((?:(?!\2).)*)(\2)((?=\W|\n))`, Type: ByGroups(Text, GenericEmph, GenericEmph, GenericEmph, Text)},
			{Pattern: `(\s)((\*\*|__).*?)\3((?=\W|\n))`, Type: ByGroups(Text, GenericStrong, GenericStrong, Text)},
			{Pattern: `(\s)(~~[^~]+~~)((?=\W|\n))`, Type: ByGroups(Text, GenericDeleted, Text)},
			{Pattern: "`[^`]+`", Type: LiteralStringBacktick},
			{Pattern: `[@#][\w/:]+`, Type: NameEntity},
			{Pattern: `(!?\[)([^]]+)(\])(\()([^)]+)(\))`, Type: ByGroups(Text, NameTag, Text, Text, NameAttribute, Text)},
			{Pattern: `.|\n`, Type: Text},
		},
	}
}
