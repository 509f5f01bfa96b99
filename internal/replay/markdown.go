package replay

import (
	"bytes"
	"embed"
	"html/template"
	"net/url"
	"strings"
	"sync"

	"github.com/alecthomas/chroma/v2"
	chromahtml "github.com/alecthomas/chroma/v2/formatters/html"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"

	"github.com/musterhq/muster/internal/replay/gfm"
)

// Bounds on highlighting: a lexer's cost grows with its input, and a
// hostile transcript can hold megabytes of "code"; past these a block is
// shown as plain text, which is still escaped and readable.
const (
	maxHighlightBytes     = 32 << 10
	maxHighlightPageBytes = 4 << 20
	// maxMarkdownBytes bounds one block rendered as markdown; a longer
	// reply is shown as plain text.
	maxMarkdownBytes = 64 << 10
	// goldmark's time grows with the square of nested containers and
	// delimiters, not with the text: 8 KB of ">" took 114 ms, 64 KB 4.7 s,
	// 250 KB of "[a](" 15 s (issue 22 item 11). So the markup characters
	// outside fenced code (markup) are bounded per block and per page,
	// which keeps a block under about 40 ms and a page under about half a
	// second however hostile; prose and code stay far below both.
	maxMarkupChars     = 2000
	maxMarkupPageChars = 20000
)

// markdown renders agent replies. Raw HTML is never passed through
// (goldmark's default; it becomes a comment), links are kept only when
// their scheme is http, https or mailto (or they are #fragments), and
// images become links, since the page may fetch nothing. Fenced code is
// highlighted by chroma with classes whose CSS is in the page.
type markdown struct {
	md goldmark.Markdown
	// budget is what is left of maxHighlightPageBytes for this page.
	budget int
	// markupBudget is what is left of maxMarkupPageChars for this page.
	markupBudget int
}

func newMarkdown() *markdown {
	m := &markdown{budget: maxHighlightPageBytes, markupBudget: maxMarkupPageChars}
	m.md = goldmark.New(
		goldmark.WithExtensions(gfm.Table, gfm.Strikethrough, gfm.TaskList,
			gfm.NewLinkify(gfm.WithLinkifyAllowedProtocols([]string{"http:", "https:", "mailto:"}))),
		goldmark.WithParserOptions(parser.WithASTTransformers(util.Prioritized(linkChecker{}, 100))),
		goldmark.WithRendererOptions(
			renderer.WithNodeRenderers(util.Prioritized(&codeRenderer{m: m}, 100)),
		),
	)
	return m
}

// render returns s (already stripped of control characters and redacted)
// as HTML; ok is false when s is too large to render, and the caller then
// shows it as text.
func (m *markdown) render(s string) (template.HTML, bool) {
	if len(s) > maxMarkdownBytes {
		return "", false
	}
	n := markup(s)
	if n > maxMarkupChars || n > m.markupBudget {
		return "", false
	}
	m.markupBudget -= n
	var buf bytes.Buffer
	if err := m.md.Convert([]byte(s), &buf); err != nil {
		return "", false
	}
	// goldmark escaped every text and attribute, dropped raw HTML and
	// checked every URL (linkChecker).
	return template.HTML(buf.String()), true
}

// markup counts the characters of s that open or close markdown
// structure (brackets, parentheses, quotes, emphasis, code spans, angle
// brackets, ordered-list dots), outside fenced code blocks, whose text
// goldmark does not parse.
func markup(s string) int {
	n := 0
	fence := ""
	for line := range strings.Lines(s) {
		t := strings.TrimLeft(line, " ")
		if fence != "" {
			if strings.HasPrefix(t, fence) {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			fence = t[:3]
			continue
		}
		for i := 0; i < len(line); i++ {
			switch c := line[i]; c {
			case '[', ']', '(', ')', '>', '<', '*', '_', '`':
				n++
			case '.':
				if i > 0 && line[i-1] >= '0' && line[i-1] <= '9' {
					n++
				}
			}
		}
	}
	return n
}

// safeURL reports whether a link may stay live: an absolute http, https
// or mailto URL, or a fragment of the page.
func safeURL(dest string) bool {
	if strings.HasPrefix(dest, "#") {
		return !strings.ContainsAny(dest, "\"'<> \t\r\n")
	}
	for _, r := range dest {
		// Browsers drop tabs and newlines inside a scheme ("java\tscript:").
		if r < 0x21 || r == 0x7f {
			return false
		}
	}
	u, err := url.Parse(dest)
	if err != nil {
		return false
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
		return u.Host != ""
	case "mailto":
		return u.Opaque != ""
	}
	return false
}

// linkChecker rewrites the document before rendering: a link whose URL is
// not safe becomes its text, an autolink its label, and an image a link
// to it (or its alt text), so nothing on the page is fetched.
type linkChecker struct{}

func (linkChecker) Transform(doc *ast.Document, reader text.Reader, pc parser.Context) {
	src := reader.Source()
	var links []ast.Node
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if entering {
			switch n.Kind() {
			case ast.KindLink, ast.KindAutoLink, ast.KindImage:
				links = append(links, n)
			}
		}
		return ast.WalkContinue, nil
	})
	for _, n := range links {
		parent := n.Parent()
		if parent == nil {
			continue
		}
		switch l := n.(type) {
		case *ast.Link:
			if safeURL(string(l.Destination)) {
				l.SetAttributeString("rel", []byte("noopener noreferrer nofollow"))
				continue
			}
			unwrap(l)
		case *ast.AutoLink:
			u := string(l.URL(src))
			if l.AutoLinkType == ast.AutoLinkEmail {
				u = "mailto:" + u
			}
			if !safeURL(u) {
				parent.ReplaceChild(parent, l, ast.NewString(l.Label(src)))
			}
		case *ast.Image:
			label := "image"
			if alt := plainText(l, src); alt != "" {
				label = "image: " + alt
			}
			if !safeURL(string(l.Destination)) {
				parent.ReplaceChild(parent, l, ast.NewString([]byte("["+label+"]")))
				continue
			}
			link := ast.NewLink()
			link.Destination = l.Destination
			link.Title = l.Title
			link.SetAttributeString("rel", []byte("noopener noreferrer nofollow"))
			link.AppendChild(link, ast.NewString([]byte("["+label+"]")))
			parent.ReplaceChild(parent, l, link)
		}
	}
}

// unwrap replaces n by its children.
func unwrap(n ast.Node) {
	parent := n.Parent()
	for c := n.FirstChild(); c != nil; {
		next := c.NextSibling()
		parent.InsertBefore(parent, n, c)
		c = next
	}
	parent.RemoveChild(parent, n)
}

func plainText(n ast.Node, src []byte) string {
	var b strings.Builder
	_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch t := c.(type) {
		case *ast.Text:
			b.Write(t.Segment.Value(src))
		case *ast.String:
			b.Write(t.Value)
		}
		return ast.WalkContinue, nil
	})
	return b.String()
}

// codeRenderer renders fenced and indented code blocks with chroma.
type codeRenderer struct{ m *markdown }

func (r *codeRenderer) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(ast.KindFencedCodeBlock, r.render)
	reg.Register(ast.KindCodeBlock, r.render)
}

func (r *codeRenderer) render(w util.BufWriter, src []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkSkipChildren, nil
	}
	var code bytes.Buffer
	lines := node.Lines()
	for i := range lines.Len() {
		seg := lines.At(i)
		code.Write(seg.Value(src))
	}
	lang := ""
	if fc, ok := node.(*ast.FencedCodeBlock); ok {
		lang = string(fc.Language(src))
	}
	w.WriteString(`<div class="code">`)
	if lang != "" {
		w.WriteString(`<div class="lang">`)
		w.WriteString(template.HTMLEscapeString(lang))
		w.WriteString(`</div>`)
	}
	if !r.m.highlight(w, lang, code.String()) {
		w.WriteString(`<pre class="chroma"><code>`)
		w.WriteString(template.HTMLEscapeString(code.String()))
		w.WriteString(`</code></pre>`)
	}
	w.WriteString("</div>\n")
	return ast.WalkSkipChildren, nil
}

var codeFormatter = chromahtml.New(chromahtml.WithClasses(true), chromahtml.WithCSSComments(false))

// highlight writes code highlighted as lang; false when it did not (no
// lexer for lang, over the bounds, or a lexer error) and wrote nothing.
func (m *markdown) highlight(w util.BufWriter, lang, code string) bool {
	if lang == "" || len(code) > maxHighlightBytes || len(code) > m.budget {
		return false
	}
	lexer := codeLexers().Get(lang)
	if lexer == nil {
		return false
	}
	m.budget -= len(code)
	it, err := chroma.Coalesce(lexer).Tokenise(nil, code)
	if err != nil {
		return false
	}
	var buf bytes.Buffer
	if err := codeFormatter.Format(&buf, codeStyles().light, it); err != nil {
		return false
	}
	w.Write(buf.Bytes())
	return true
}

// codeCSS is the stylesheet of highlighted code: chroma's github style,
// and github-dark for a dark color scheme.
var codeCSS = sync.OnceValue(func() template.CSS {
	var light, dark bytes.Buffer
	st := codeStyles()
	_ = codeFormatter.WriteCSS(&light, st.light)
	_ = codeFormatter.WriteCSS(&dark, st.dark)
	// The CSS comes from chroma's built-in styles, not from a transcript.
	return template.CSS(light.String() + "@media (prefers-color-scheme:dark){" + dark.String() + "}")
})

// styleFiles are chroma's styles/github.xml and github-dark.xml, copied
// (TestCodeStylesAreChromas checks them against the chroma in go.mod):
// chroma's styles package parses all of its 70-odd styles in its package
// init, about 40,000 allocations and 1.9 MB that every muster command,
// `muster version` included, paid for the two styles only replays use.
//
//go:embed chroma-styles/*.xml
var styleFiles embed.FS

type codeStyleSet struct{ light, dark *chroma.Style }

// codeStyles parses the two styles on first use.
var codeStyles = sync.OnceValue(func() codeStyleSet {
	parse := func(name string) *chroma.Style {
		f, err := styleFiles.Open("chroma-styles/" + name)
		if err != nil {
			panic(err) // embedded above
		}
		defer f.Close()
		s, err := chroma.NewXMLStyle(f)
		if err != nil {
			panic(err) // a copy of chroma's own file, checked by a test
		}
		return s
	}
	return codeStyleSet{light: parse("github.xml"), dark: parse("github-dark.xml")}
})
