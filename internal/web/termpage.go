package web

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"html/template"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/musterhq/muster/third_party/xterm"
)

// The terminal page's own script and styles; xterm.js comes from
// third_party/xterm.
var (
	//go:embed static/term.js
	termJS []byte
	//go:embed static/term.css
	termCSS []byte
)

// asset is a file served at /assets/NAME.
type asset struct {
	ctype string
	body  []byte
}

var assets = map[string]asset{
	"xterm.js":     {"text/javascript; charset=utf-8", xterm.JS},
	"xterm.css":    {"text/css; charset=utf-8", xterm.CSS},
	"addon-fit.js": {"text/javascript; charset=utf-8", xterm.FitJS},
	"term.js":      {"text/javascript; charset=utf-8", termJS},
	"term.css":     {"text/css; charset=utf-8", termCSS},
}

// routeTerminals registers the terminal view, its assets and, on an
// Interactive server, the attention drawer's acknowledgement.
func (s *Server) routeTerminals() {
	s.mux.HandleFunc("GET /assets/{file}", func(w http.ResponseWriter, r *http.Request) {
		a, ok := assets[r.PathValue("file")]
		if !ok {
			http.NotFound(w, r)
			return
		}
		h := w.Header()
		h.Set("Content-Type", a.ctype)
		// The files change only with the binary.
		h.Set("Cache-Control", "no-cache")
		http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(a.body))
	})
	s.routes = append(s.routes, "GET /assets/{file}")
	s.handle("GET /term/{name}", s.handleTermPage)
	s.mux.HandleFunc("GET /term/{name}/ws", s.handleTermWS)
	s.routes = append(s.routes, "GET /term/{name}/ws")
	if s.o.Interactive && s.o.Ack != nil {
		s.handle("POST /api/v1/attention/{id}/ack", s.handleAck)
	}
	if s.o.Interactive && s.o.Send != nil && s.o.Attention != nil && s.o.Capture != nil {
		s.handle("POST /api/v1/attention/{id}/answer", s.handleAnswer)
	}
}

func (s *Server) handleAck(r *http.Request) reply {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		return jsonReply{http.StatusBadRequest, map[string]string{"error": "an attention item's id is a positive number"}}
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.itemTimeout(id))
	defer cancel()
	res, err := s.o.Ack(ctx, []int64{id})
	if err != nil {
		return jsonReply{http.StatusBadGateway, map[string]string{"error": err.Error()}}
	}
	return jsonReply{http.StatusOK, res}
}

// writeTermPage renders the terminal page. It carries no pane text: the
// screen comes over the WebSocket, to xterm.js.
func (s *Server) writeTermPage(w http.ResponseWriter, data map[string]any) {
	var buf bytes.Buffer
	if err := termPage().Execute(&buf, data); err != nil {
		s.o.Logger.Error("render terminal page", "err", err)
		http.Error(w, "page could not be rendered", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", termCSP)
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cache-Control", "no-store")
	w.Write(buf.Bytes())
}

// keyBar is the terminal page's row of keys a phone's keyboard lacks, with
// the bytes each sends (what a terminal sends for it in normal cursor-key
// mode; term.js switches the arrows to application mode when the program
// asked for it).
var keyBar = []struct{ Label, Name, Bytes string }{
	{"Esc", "esc", "\x1b"},
	{"Tab", "tab", "\t"},
	{"⇧Tab", "btab", "\x1b[Z"},
	{"←", "left", "\x1b[D"},
	{"↑", "up", "\x1b[A"},
	{"↓", "down", "\x1b[B"},
	{"→", "right", "\x1b[C"},
	{"Ctrl-C", "ctrlc", "\x03"},
	{"⏎", "enter", "\r"},
}

func keyBarJSON() string {
	m := map[string]string{}
	for _, k := range keyBar {
		m[k.Name] = k.Bytes
	}
	b, _ := json.Marshal(m)
	return string(b)
}

var termPage = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("term").Funcs(template.FuncMap{
		"keys":    func() any { return keyBar },
		"keyJSON": keyBarJSON,
		"lower":   strings.ToLower,
	}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1, interactive-widget=resizes-content">
<link rel="icon" href="data:,">
<title>{{.Name}} · muster</title>
<link rel="stylesheet" href="/assets/xterm.css">
<link rel="stylesheet" href="/assets/term.css">
</head><body data-name="{{.Name}}" data-interactive="{{.Interactive}}" data-keys="{{keyJSON}}" data-stream="connecting">
<header><a href="/live" class="back">← Live</a><b id="name">{{.Name}}</b><span id="mode">{{if .Interactive}}viewing{{else}}read-only{{end}}</span>
{{- if .Interactive}}<button id="control" type="button">Take control</button>{{end}}<span id="status" role="status">connecting…</span></header>
<div id="term"></div>
{{if .Interactive}}<div id="keys" hidden>{{range keys}}<button type="button" data-key="{{.Name}}">{{.Label}}</button>{{end}}</div>
<form id="compose" hidden><input id="line" type="text" autocomplete="off" enterkeyhint="send" placeholder="Type a line; Send adds Enter" aria-label="line to send"><button type="submit">Send</button></form>{{end}}
<script src="/assets/xterm.js"></script>
<script src="/assets/addon-fit.js"></script>
<script src="/assets/term.js"></script>
</body></html>
`))
})
