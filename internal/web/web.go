// Package web is `muster serve`: a small read-only web UI over the history
// index (a searchable list, replay pages, the live sessions of a running
// daemon) and the immutable blob endpoint GET /api/v1/blob/<id> for
// published replays. It listens on loopback unless told otherwise and then
// also refuses requests whose Host is not a loopback name, so a web page in
// the user's browser cannot reach it through DNS rebinding.
package web

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/musterhq/muster/internal/blob"
	"github.com/musterhq/muster/internal/history"
	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/replay"
	"github.com/musterhq/muster/internal/transcript"
)

// uiCSP is the policy of the UI's own pages: inline styles, no scripts.
const uiCSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// replayCSP adds a sandbox to the replay's own policy: a replay runs in an
// opaque origin, so its script can never act as this server's origin.
const replayCSP = replay.CSP + "; sandbox allow-scripts"

// Options configure a Server.
type Options struct {
	Index   *history.Index
	Sources []transcript.Source
	Env     transcript.Env
	Blobs   *blob.Store
	// Live lists the running daemon's sessions; nil, or an error, shows
	// that no daemon runs.
	Live func(ctx context.Context) ([]proto.SessionInfo, error)
	// Public accepts requests for any Host (serving beyond loopback).
	Public  bool
	Version string
	Logger  *slog.Logger
}

// Server serves the UI and the blob API.
type Server struct {
	o   Options
	mux *http.ServeMux
}

// New builds a server; it starts nothing.
func New(o Options) *Server {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{o: o, mux: http.NewServeMux()}
	s.mux.HandleFunc("GET /{$}", s.handleHistory)
	s.mux.HandleFunc("GET /session/{provider}/{id}", s.handleSession)
	s.mux.HandleFunc("GET /live", s.handleLive)
	s.mux.HandleFunc("GET /api/v1/blob/{id}", s.handleBlob)
	s.mux.HandleFunc("GET /api/v1/history", s.handleHistoryJSON)
	return s
}

// Handler is the server's HTTP handler.
func (s *Server) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.o.Public && !loopbackHost(r.Host) {
			http.Error(w, "muster serve answers only to localhost names", http.StatusMisdirectedRequest)
			return
		}
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		s.mux.ServeHTTP(w, r)
	})
}

// Serve answers on ln until ctx ends, then shuts down, giving requests in
// flight five seconds.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(s.o.Logger.Handler(), slog.LevelDebug),
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve http: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := srv.Shutdown(sctx)
	<-errc
	return err
}

// IsLoopback reports whether addr (host:port) names only this machine.
func IsLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	return loopbackName(host)
}

func loopbackName(host string) bool {
	if strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

func loopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	return loopbackName(host)
}

func (s *Server) handleBlob(w http.ResponseWriter, r *http.Request) {
	id, err := blob.ParseID(r.PathValue("id"))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if s.o.Blobs == nil {
		http.Error(w, "blob not found", http.StatusNotFound)
		return
	}
	b, err := s.o.Blobs.Get(id)
	switch {
	case errors.Is(err, blob.ErrNotFound):
		http.Error(w, "blob not found", http.StatusNotFound)
		return
	case err != nil:
		s.o.Logger.Error("read blob", "err", err)
		http.Error(w, "blob unavailable", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Cache-Control", "public, max-age=31536000, immutable")
	h.Set("ETag", `"`+b.SHA256+`"`)
	ctype := http.DetectContentType(b.Content)
	if strings.HasPrefix(ctype, "text/html") {
		h.Set("Content-Security-Policy", replayCSP)
	}
	h.Set("Content-Type", ctype)
	// ServeContent answers If-None-Match (304) and ranges from the ETag.
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(b.Content))
}

func (s *Server) query(r *http.Request) (history.Query, error) {
	v := r.URL.Query()
	q := history.Query{Provider: v.Get("provider"), Search: v.Get("q"), Limit: 200}
	if q.Provider != "" && !s.knownProvider(q.Provider) {
		return q, fmt.Errorf("unknown provider %q", q.Provider)
	}
	if l := v.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 0 || n > 10000 {
			return q, fmt.Errorf("limit %q: want a number from 0 to 10000", l)
		}
		q.Limit = n
	}
	if sv := v.Get("since"); sv != "" {
		t, err := time.Parse(time.RFC3339, sv)
		if err != nil {
			return q, fmt.Errorf("since %q: want an RFC 3339 time", sv)
		}
		q.Since = t
	}
	return q, nil
}

func (s *Server) knownProvider(p string) bool {
	for _, src := range s.o.Sources {
		if src.Provider() == p {
			return true
		}
	}
	return false
}

func (s *Server) handleHistoryJSON(w http.ResponseWriter, r *http.Request) {
	q, err := s.query(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	list, err := s.o.Index.List(r.Context(), q)
	if err != nil {
		s.o.Logger.Error("list history", "err", err)
		http.Error(w, "history unavailable", http.StatusInternalServerError)
		return
	}
	if list == nil {
		list = []transcript.Session{}
	}
	w.Header().Set("Content-Type", "application/json")
	writeJSON(w, list)
}

type historyRow struct {
	transcript.Session
	When  string
	Link  string
	Title string
}

func (s *Server) handleHistory(w http.ResponseWriter, r *http.Request) {
	q, err := s.query(r)
	if err != nil {
		s.page(w, http.StatusBadRequest, "error", map[string]any{"Message": err.Error()})
		return
	}
	list, err := s.o.Index.List(r.Context(), q)
	if err != nil {
		s.o.Logger.Error("list history", "err", err)
		s.page(w, http.StatusInternalServerError, "error", map[string]any{"Message": "the history index could not be read"})
		return
	}
	total, _ := s.o.Index.Count(r.Context(), history.Query{Provider: q.Provider, Search: q.Search})
	var rows []historyRow
	for _, ss := range list {
		title := ss.Title
		if title == "" {
			title = transcript.Headline(ss.FirstPrompt)
		}
		if title == "" {
			title = "(untitled)"
		}
		when := ss.EndedAt
		if when.IsZero() {
			when = ss.StartedAt
		}
		row := historyRow{Session: ss, Title: title, Link: "/session/" + pathEscape(ss.Provider) + "/" + pathEscape(ss.ID)}
		if !when.IsZero() {
			row.When = when.Local().Format("2006-01-02 15:04")
		}
		rows = append(rows, row)
	}
	var providers []string
	for _, src := range s.o.Sources {
		providers = append(providers, src.Provider())
	}
	s.page(w, http.StatusOK, "history", map[string]any{
		"Rows": rows, "Q": q.Search, "Provider": q.Provider, "Providers": providers, "Shown": len(rows), "Total": total,
	})
}

func pathEscape(s string) string {
	return strings.ReplaceAll(template.URLQueryEscaper(s), "+", "%20")
}

func (s *Server) handleSession(w http.ResponseWriter, r *http.Request) {
	ref := r.PathValue("provider") + ":" + r.PathValue("id")
	if !s.knownProvider(r.PathValue("provider")) || strings.ContainsAny(r.PathValue("id"), "/\\") || r.PathValue("id") == "" {
		s.page(w, http.StatusNotFound, "error", map[string]any{"Message": "no such session"})
		return
	}
	res, err := s.o.Index.Resolve(r.Context(), ref, s.o.Sources, s.o.Env)
	if err != nil {
		status := http.StatusNotFound
		if _, ok := errors.AsType[*history.AmbiguousError](err); ok {
			status = http.StatusConflict
		} else if !errors.Is(err, history.ErrNoSession) {
			status = http.StatusBadRequest
		}
		s.page(w, status, "error", map[string]any{"Message": err.Error()})
		return
	}
	if res.Session.ID != r.PathValue("id") {
		// Only exact ids have pages; a prefix redirects to its session.
		http.Redirect(w, r, "/session/"+pathEscape(res.Session.Provider)+"/"+pathEscape(res.Session.ID), http.StatusFound)
		return
	}
	t, err := history.Load(r.Context(), res, s.o.Env)
	if err != nil {
		s.o.Logger.Warn("load transcript", "path", res.Session.Path, "err", err)
		s.page(w, http.StatusNotFound, "error", map[string]any{"Message": "the transcript could not be read"})
		return
	}
	out, err := replay.HTML(t, replay.Options{Version: s.o.Version})
	if err != nil {
		s.page(w, http.StatusInternalServerError, "error", map[string]any{"Message": "the replay could not be rendered"})
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", replayCSP)
	h.Set("Cache-Control", "no-store")
	w.Write(out)
}

func (s *Server) handleLive(w http.ResponseWriter, r *http.Request) {
	data := map[string]any{"Running": false}
	if s.o.Live != nil {
		ctx, cancel := context.WithTimeout(r.Context(), 3*time.Second)
		list, err := s.o.Live(ctx)
		cancel()
		if err == nil {
			data["Running"] = true
			data["Sessions"] = list
		} else {
			s.o.Logger.Debug("list live sessions", "err", err)
		}
	}
	s.page(w, http.StatusOK, "live", data)
}

func (s *Server) page(w http.ResponseWriter, status int, name string, data map[string]any) {
	data["Version"] = s.o.Version
	data["Page"] = name
	var buf bytes.Buffer
	if err := pages.ExecuteTemplate(&buf, name, data); err != nil {
		s.o.Logger.Error("render page", "page", name, "err", err)
		http.Error(w, "page could not be rendered", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", uiCSP)
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}
