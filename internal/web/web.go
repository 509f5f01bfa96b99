// Package web is `muster serve`: a small read-only web UI over the history
// index (a paged list with full-text search, replay pages in pages of
// their own, analytics with inline SVG charts, the Live page of a running
// daemon's panes kept current by server-sent events, live.go) and the
// immutable blob endpoint GET /api/v1/blob/<id> for published replays.
//
// Transcripts hold secrets, so two things hold for every route:
//
//   - Redaction: a handler returns a reply instead of writing to the
//     client, and writing a reply redacts everything it carries (page data,
//     JSON, messages, replays) with package redact, the replays' own
//     redactor. A new page gets it without asking. Only a published blob is
//     served as stored: its id is its hash, and `muster replay --publish`
//     redacted it unless told not to.
//   - Who may ask: the Host header must name this server (on loopback, a
//     loopback name), so a web page in the user's browser cannot reach it
//     through DNS rebinding; and with Public, every request needs the token
//     printed at start, exchanged once for an HttpOnly, SameSite=Strict
//     cookie (API clients send it as Authorization: Bearer).
package web

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/musterhq/muster/internal/blob"
	"github.com/musterhq/muster/internal/history"
	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/replay"
	"github.com/musterhq/muster/internal/transcript"
)

// uiCSP is the policy of the UI's own pages: inline styles, no scripts
// (the Live page adds its one script by nonce, liveCSP).
const uiCSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// replayCSP adds a sandbox to the replay's own policy: a replay runs in an
// opaque origin, so its script can never act as this server's origin.
const replayCSP = replay.CSP + "; sandbox allow-scripts"

// tokenParam is the query parameter of the login URL.
const tokenParam = "token"

// minTokenLen is the length of rand.Text's output: 26 base32 digits, 130
// bits.
const minTokenLen = 26

// Options configure a Server.
type Options struct {
	Index   *history.Index
	Sources []transcript.Source
	Env     transcript.Env
	Blobs   *blob.Store
	// Live lists the running daemon's sessions; nil, or an error, shows
	// that no daemon runs.
	Live func(ctx context.Context) ([]proto.SessionInfo, error)
	// Capture reads a live pane's screen as text, for the Live page's
	// preview; nil shows none.
	Capture func(ctx context.Context, name string) (string, error)
	// Attention lists the daemon's attention items; nil shows none.
	Attention func(ctx context.Context) ([]proto.AttentionItem, error)
	// Watch streams the daemon's sessions and attention items (op
	// "watch"), calling push for each update until ctx ends or the
	// daemon goes away. With it the Live page's event stream follows
	// what the daemon pushes; without it, it asks Live, Attention and
	// Capture every LiveInterval.
	Watch func(ctx context.Context, push func(proto.WatchUpdate)) error
	// Preview streams one pane's screen (op "preview") like Watch; nil
	// shows no screens in pushed mode.
	Preview func(ctx context.Context, name string, push func(proto.PreviewScreen)) error
	// External lists the agents the CLIs' own supervisors run (Claude
	// Code's `claude --bg`) that none of panes runs, as `muster ls` lists
	// them: rows with External set. It may start a program, so the Live
	// page asks at most once per ExternalInterval for every page, one
	// call at a time, and only while a daemon answers. nil lists none.
	External func(ctx context.Context, panes []proto.SessionInfo) ([]proto.SessionInfo, error)
	// Remote follows the other machines (`muster host add`) for the
	// Live page (remote.go): their sessions, drawer items and
	// terminals. It needs Watch (the hub follows it); nil shows this
	// machine's only.
	Remote Remote
	// ExternalInterval is how long one listing of External serves; 0
	// means 5 seconds, the dashboard's interval.
	ExternalInterval time.Duration
	// Now is the clock of the Stats page's period and of the Live page's
	// dates; nil means time.Now.
	Now func() time.Time
	// Location is where the Stats page's days begin and the time zone of
	// the Live page's reset times; nil means time.Local.
	Location *time.Location
	// LiveInterval is how often the Live page's event stream looks at
	// the daemon without Watch, and how often it tries to reach a daemon
	// that is not running with it; 0 means every second.
	LiveInterval time.Duration
	// Addr is the address the server listens on (host:port). It decides
	// the Host names the server answers to and the URL it prints.
	Addr string
	// Hosts are more names the server answers to: a DNS name of this
	// machine, a reverse proxy's or a port forwarder's.
	Hosts []string
	// Public serves beyond loopback: every request needs Token.
	Public bool
	// Interactive lets pages type into panes and acknowledge attention
	// items: every request then needs Token too, wherever it listens.
	Interactive bool
	// Attach opens a pane's stream for a terminal view (op "attach");
	// nil shows no terminals.
	Attach func(ctx context.Context, a proto.AttachArgs) (PaneStream, error)
	// Ack resolves attention items (op "ack"); only an Interactive
	// server offers it.
	Ack func(ctx context.Context, ids []int64) (proto.AckResult, error)
	// Send types keys into a pane (op "send", no Enter): the drawer's
	// answers. Only an Interactive server with Attention and Capture
	// offers them.
	Send func(ctx context.Context, name, keys string) error
	// Token is the credential printed in the URL at start: every request
	// of a Public or Interactive server needs it, and a terminal view on
	// any server. New makes one when it is empty.
	Token   string
	Version string
	Logger  *slog.Logger
}

// Server serves the UI and the blob API.
type Server struct {
	o      Options
	mux    *http.ServeMux
	routes []string
	// hosts are the normalized Host names accepted besides loopback ones;
	// loopback says whether loopback names are accepted.
	hosts    map[string]bool
	loopback bool
	tokenSum [sha256.Size]byte
	cookie   string
	hub      *liveHub
	// ext holds the last listing of Options.External; nil without it.
	ext *externalList
	// terms holds a token per open terminal view (maxTerms).
	terms chan struct{}
	// renders holds a token per replay being loaded or rendered.
	renders chan struct{}
	// renderWait, set by tests, runs when a replay is about to wait for
	// a token.
	renderWait func()
}

// minPrefix is the shortest id prefix a session page redirects from.
const minPrefix = 8

// maxRenders bounds the replays loaded and rendered at once.
const maxRenders = 2

// New builds a server; it starts nothing.
func New(o Options) (*Server, error) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{o: o, mux: http.NewServeMux(), hosts: map[string]bool{}, cookie: "muster_serve", renders: make(chan struct{}, maxRenders), terms: make(chan struct{}, maxTerms)}
	if o.External != nil {
		s.ext = newExternalList(o.External, o.ExternalInterval)
	}
	if o.Watch != nil {
		retry := o.LiveInterval
		if retry <= 0 {
			retry = time.Second
		}
		s.hub = &liveHub{watch: o.Watch, preview: o.Preview, retry: retry, external: s.ext, remote: o.Remote}
	}
	if s.o.Token == "" {
		s.o.Token = rand.Text()
	}
	if len(s.o.Token) < minTokenLen {
		return nil, fmt.Errorf("a server's token needs at least %d characters", minTokenLen)
	}
	s.tokenSum = sha256.Sum256([]byte(s.o.Token))
	host, port, err := net.SplitHostPort(o.Addr)
	if o.Addr != "" && err != nil {
		return nil, fmt.Errorf("address %q: %w", o.Addr, err)
	}
	if port != "" {
		// Cookies ignore ports: two servers on one host keep theirs apart.
		s.cookie += "_" + port
	}
	s.loopback = !o.Public || o.Addr == "" || loopbackName(host) || unspecified(host)
	if o.Public {
		if unspecified(host) {
			for _, h := range machineNames() {
				s.hosts[normalizeHost(h)] = true
			}
		} else if !loopbackName(host) {
			s.hosts[normalizeHost(host)] = true
		}
	}
	for _, h := range o.Hosts {
		s.hosts[normalizeHost(h)] = true
	}
	delete(s.hosts, "")

	s.handle("GET /{$}", s.handleHistory)
	s.handle("GET /session/{provider}/{id}", s.handleSession)
	s.handle("GET /live", s.handleLive)
	s.handle("GET /live/events", s.handleLiveEvents)
	s.handle("GET /stats", s.handleStats)
	s.handle("GET /api/v1/blob/{id}", s.handleBlob)
	s.handle("GET /api/v1/history", s.handleHistoryJSON)
	s.routeTerminals()
	return s, nil
}

// handle registers h: its reply, written by the mux, is the only thing
// that reaches the client.
func (s *Server) handle(pattern string, h func(*http.Request) reply) {
	s.routes = append(s.routes, pattern)
	s.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		h(r).write(s, w, r)
	})
}

// URL is the address to open: it carries the token, so it is printed
// once, at start, and never logged.
func (s *Server) URL() string {
	host, port, _ := net.SplitHostPort(s.o.Addr)
	if unspecified(host) {
		host = preferredName()
	}
	u := url.URL{Scheme: "http", Host: net.JoinHostPort(host, port), Path: "/"}
	u.RawQuery = url.Values{tokenParam: {s.o.Token}}.Encode()
	return u.String()
}

// Handler is the server's HTTP handler.
func (s *Server) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		if !s.hostOK(r.Host) {
			msg := "muster serve answers only to localhost names"
			if s.o.Public {
				msg = "muster serve does not answer to this host name (see --host)"
			}
			http.Error(w, msg, http.StatusMisdirectedRequest)
			return
		}
		if r.URL.Query().Has(tokenParam) || s.everyRequestNeedsToken() {
			if !s.authorize(w, r) {
				return
			}
		}
		if !safeMethod(r.Method) && !s.changeAllowed(r) {
			http.Error(w, "a request that changes something must come from this server's own page (Origin) with its token", http.StatusForbidden)
			return
		}
		s.mux.ServeHTTP(w, r)
	})
}

// hostOK reports whether a request's Host names this server.
func (s *Server) hostOK(hostport string) bool {
	h := normalizeHost(hostport)
	if h == "" {
		return false
	}
	return s.hosts[h] || (s.loopback && loopbackName(h))
}

// authorize lets a request with the token through. A request carrying it
// in the URL (the printed login URL) gets it as a cookie and is sent to
// the same URL without it, so it leaves the address bar and the history.
func (s *Server) authorize(w http.ResponseWriter, r *http.Request) bool {
	h := w.Header()
	if q := r.URL.Query(); q.Has(tokenParam) {
		if !s.tokenOK(q.Get(tokenParam)) {
			unauthorized(w)
			return false
		}
		http.SetCookie(w, &http.Cookie{Name: s.cookie, Value: s.o.Token, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
		q.Del(tokenParam)
		// One leading slash: "//host" would send the browser elsewhere.
		to := url.URL{Path: "/" + strings.TrimLeft(r.URL.Path, "/\\"), RawQuery: q.Encode()}
		h.Set("Cache-Control", "no-store")
		h.Set("Location", to.String())
		w.WriteHeader(http.StatusSeeOther)
		return false
	}
	if s.credential(r) {
		return true
	}
	unauthorized(w)
	return false
}

// credential reports whether r carries the token: the cookie of the
// one-time URL, or Authorization: Bearer.
func (s *Server) credential(r *http.Request) bool {
	if c, err := r.Cookie(s.cookie); err == nil && s.tokenOK(c.Value) {
		return true
	}
	_, ok := s.bearer(r)
	return ok
}

// bearer reports whether r has an Authorization header, and whether it
// carries the token.
func (s *Server) bearer(r *http.Request) (present, ok bool) {
	v := r.Header.Get("Authorization")
	if v == "" {
		return false, false
	}
	scheme, tok, cut := strings.Cut(v, " ")
	return true, cut && strings.EqualFold(scheme, "Bearer") && s.tokenOK(strings.TrimSpace(tok))
}

// everyRequestNeedsToken: a server that reaches beyond loopback or lets
// pages change things answers nobody without the token.
func (s *Server) everyRequestNeedsToken() bool {
	return s.o.Public || s.o.Interactive
}

func safeMethod(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}

// changeAllowed is the rule of every request that can change anything
// (no GET does): the token, and either the server's own page as its
// Origin, or no Origin at all with the token in Authorization (a script:
// a page elsewhere cannot set that header without a preflight this
// server never answers).
func (s *Server) changeAllowed(r *http.Request) bool {
	if !s.credential(r) {
		return false
	}
	if r.Header.Get("Origin") != "" {
		return sameOrigin(r)
	}
	_, ok := s.bearer(r)
	return ok
}

// tokenOK compares in constant time; hashing first hides the length too.
func (s *Server) tokenOK(tok string) bool {
	sum := sha256.Sum256([]byte(tok))
	return subtle.ConstantTimeCompare(sum[:], s.tokenSum[:]) == 1
}

func unauthorized(w http.ResponseWriter) {
	h := w.Header()
	h.Set("WWW-Authenticate", `Bearer realm="muster serve"`)
	h.Set("Cache-Control", "no-store")
	http.Error(w, "muster serve needs its token here: open the URL it printed at start, or send Authorization: Bearer TOKEN", http.StatusUnauthorized)
}

// Serve answers on ln until ctx ends, then shuts down, giving requests in
// flight five seconds.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{
		Handler: s.Handler(),
		// Requests end with ctx: an event stream would otherwise hold
		// Shutdown for its whole grace period.
		BaseContext:       func(net.Listener) context.Context { return ctx },
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
	host = normalizeHost(host)
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func unspecified(host string) bool {
	if host == "" {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsUnspecified()
}

// normalizeHost reduces a Host header or a name to what is compared: no
// port, no brackets, lower case, no trailing dot, IPs in canonical form.
func normalizeHost(hostport string) string {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	if ip := net.ParseIP(host); ip != nil {
		return ip.String()
	}
	return host
}

// machineNames are the names a server listening on every address answers
// to: the host name and every interface address.
func machineNames() []string {
	var names []string
	if h, err := os.Hostname(); err == nil {
		names = append(names, h)
		if short, _, ok := strings.Cut(h, "."); ok {
			names = append(names, short)
		}
	}
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if ipn, ok := a.(*net.IPNet); ok {
			names = append(names, ipn.IP.String())
		}
	}
	return names
}

// preferredName is the host of the URL printed for a server listening on
// every address: an address other machines can likely reach.
func preferredName() string {
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if ipn, ok := a.(*net.IPNet); ok && ipn.IP.To4() != nil && !ipn.IP.IsLoopback() && !ipn.IP.IsLinkLocalUnicast() {
			return ipn.IP.String()
		}
	}
	if h, err := os.Hostname(); err == nil {
		return h
	}
	return "127.0.0.1"
}

func (s *Server) handleBlob(r *http.Request) reply {
	id, err := blob.ParseID(r.PathValue("id"))
	if err != nil {
		return textReply{http.StatusBadRequest, err.Error()}
	}
	if s.o.Blobs == nil {
		return textReply{http.StatusNotFound, "blob not found"}
	}
	b, err := s.o.Blobs.Get(id)
	switch {
	case errors.Is(err, blob.ErrNotFound):
		return textReply{http.StatusNotFound, "blob not found"}
	case err != nil:
		s.o.Logger.Error("read blob", "err", err)
		return textReply{http.StatusInternalServerError, "blob unavailable"}
	}
	return blobReply{b}
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

func (s *Server) handleHistoryJSON(r *http.Request) reply {
	q, err := s.query(r)
	if err != nil {
		return jsonReply{http.StatusBadRequest, map[string]string{"error": err.Error()}}
	}
	list, err := s.o.Index.List(r.Context(), q)
	if err != nil {
		s.o.Logger.Error("list history", "err", err)
		return jsonReply{http.StatusInternalServerError, map[string]string{"error": "history unavailable"}}
	}
	if list == nil {
		list = []transcript.Session{}
	}
	return jsonReply{http.StatusOK, list}
}

type historyRow struct {
	transcript.Session
	When string
	Link string
	// Snippet is where a search matched, in parts, Mark on the matched
	// words.
	Snippet []snippetPart
}

type snippetPart struct {
	Text string
	Mark bool
}

// historyPage is how many sessions one page of the history lists.
const historyPage = 50

// maxHistoryPage bounds the page number: a page is read by listing every
// session before it.
const maxHistoryPage = 1000

func (s *Server) handleHistory(r *http.Request) reply {
	q, err := s.query(r)
	if err != nil {
		return errorPage(http.StatusBadRequest, err.Error())
	}
	page := 1
	if p := r.URL.Query().Get("page"); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > maxHistoryPage {
			return errorPage(http.StatusBadRequest, fmt.Sprintf("page %q: want a number from 1 to %d", p, maxHistoryPage))
		}
		page = n
	}
	// One more than the page holds says whether there is a next page.
	want := page*historyPage + 1
	var rows []historyRow
	total := -1
	if q.Search != "" {
		hits, err := s.o.Index.Search(r.Context(), history.SearchQuery{Text: q.Search, Provider: q.Provider, Since: q.Since, Limit: want})
		if err != nil {
			s.o.Logger.Error("search history", "err", err)
			return errorPage(http.StatusInternalServerError, "the history index could not be searched")
		}
		for _, h := range hits {
			row := s.row(h.Session)
			row.Snippet = snippetParts(h.Snippet, h.Highlights)
			rows = append(rows, row)
		}
		if len(hits) < want {
			total = len(hits)
		}
	} else {
		list, err := s.o.Index.List(r.Context(), history.Query{Provider: q.Provider, Since: q.Since, Limit: want})
		if err != nil {
			s.o.Logger.Error("list history", "err", err)
			return errorPage(http.StatusInternalServerError, "the history index could not be read")
		}
		for _, ss := range list {
			rows = append(rows, s.row(ss))
		}
		total, _ = s.o.Index.Count(r.Context(), history.Query{Provider: q.Provider, Since: q.Since})
	}
	from := min((page-1)*historyPage, len(rows))
	more := len(rows) > page*historyPage
	rows = rows[from:min(len(rows), page*historyPage)]
	var providers []string
	for _, src := range s.o.Sources {
		providers = append(providers, src.Provider())
	}
	link := func(p int) string {
		v := url.Values{}
		if q.Search != "" {
			v.Set("q", q.Search)
		}
		if q.Provider != "" {
			v.Set("provider", q.Provider)
		}
		if sv := r.URL.Query().Get("since"); sv != "" {
			v.Set("since", sv)
		}
		if p > 1 {
			v.Set("page", strconv.Itoa(p))
		}
		if len(v) == 0 {
			return "/"
		}
		return "/?" + v.Encode()
	}
	data := map[string]any{
		"Rows": rows, "Q": q.Search, "Provider": q.Provider, "Providers": providers,
		"From": from + 1, "To": from + len(rows), "Total": total, "Page": page,
	}
	if page > 1 {
		data["Prev"] = link(page - 1)
	}
	if more {
		data["Next"] = link(page + 1)
	}
	return pageReply{status: http.StatusOK, name: "history", data: data}
}

func (s *Server) row(ss transcript.Session) historyRow {
	when := ss.EndedAt
	if when.IsZero() {
		when = ss.StartedAt
	}
	row := historyRow{Session: ss, Link: sessionLink(ss.Provider, ss.ID)}
	if !when.IsZero() {
		row.When = when.Local().Format("2006-01-02 15:04")
	}
	return row
}

func sessionLink(provider, id string) string {
	return "/session/" + pathEscape(provider) + "/" + pathEscape(id)
}

// snippetParts cuts a snippet at its highlights; offsets outside it or
// out of order are ignored rather than trusted.
func snippetParts(snippet string, marks [][2]int) []snippetPart {
	if snippet == "" {
		return nil
	}
	var parts []snippetPart
	last := 0
	for _, m := range marks {
		lo, hi := m[0], m[1]
		if lo < last || hi <= lo || hi > len(snippet) {
			continue
		}
		if lo > last {
			parts = append(parts, snippetPart{Text: snippet[last:lo]})
		}
		parts = append(parts, snippetPart{Text: snippet[lo:hi], Mark: true})
		last = hi
	}
	if last < len(snippet) {
		parts = append(parts, snippetPart{Text: snippet[last:]})
	}
	return parts
}

func pathEscape(s string) string {
	return strings.ReplaceAll(template.URLQueryEscaper(s), "+", "%20")
}

func (s *Server) handleSession(r *http.Request) reply {
	ref := r.PathValue("provider") + ":" + r.PathValue("id")
	if !s.knownProvider(r.PathValue("provider")) || strings.ContainsAny(r.PathValue("id"), "/\\") || r.PathValue("id") == "" {
		return errorPage(http.StatusNotFound, "no such session")
	}
	res, err := s.o.Index.Resolve(r.Context(), ref, s.o.Sources, s.o.Env)
	if err != nil {
		status := http.StatusNotFound
		if _, ok := errors.AsType[*history.AmbiguousError](err); ok {
			status = http.StatusConflict
		} else if !errors.Is(err, history.ErrNoSession) {
			status = http.StatusBadRequest
		}
		return errorPage(status, err.Error())
	}
	if id := r.PathValue("id"); res.Session.ID != id {
		// Only exact ids have pages; a prefix redirects to its session,
		// when it is long enough that another page cannot guess it (an
		// image tag on any site could otherwise make the server load
		// whatever session "a" finds).
		if len(id) < minPrefix {
			return errorPage(http.StatusNotFound, fmt.Sprintf("no session has the id %q; a prefix of an id needs at least %d characters", id, minPrefix))
		}
		return redirectReply{sessionLink(res.Session.Provider, res.Session.ID)}
	}
	page := 1
	if p := r.URL.Query().Get("page"); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 {
			return errorPage(http.StatusBadRequest, fmt.Sprintf("page %q: want a number from 1", p))
		}
		page = n
	}
	// A replay holds its whole transcript while it renders: a few at a
	// time bound the memory of many loads of a huge session (issue 22
	// item 11: 8 loads of a 200 MB transcript took 2 GB).
	if s.renderWait != nil {
		s.renderWait()
	}
	select {
	case s.renders <- struct{}{}:
	case <-r.Context().Done():
		return errorPage(http.StatusServiceUnavailable, "the request ended while it waited for other replays to render")
	}
	release := func() { <-s.renders }
	t, err := history.Load(r.Context(), res, s.o.Env)
	if err != nil {
		release()
		s.o.Logger.Warn("load transcript", "path", res.Session.Path, "err", err)
		return errorPage(http.StatusNotFound, "the transcript could not be read")
	}
	subs := replay.LoadSubagents(r.Context(), res.Source, s.o.Env, t)
	return replayReply{t: t, subs: subs, page: page, link: sessionLink(res.Session.Provider, res.Session.ID), release: release}
}

// writePage renders an already redacted page.
func (s *Server) writePage(w http.ResponseWriter, status int, name, csp string, data map[string]any) {
	data["Version"] = s.o.Version
	data["Page"] = name
	var buf bytes.Buffer
	if err := pages().ExecuteTemplate(&buf, name, data); err != nil {
		s.o.Logger.Error("render page", "page", name, "err", err)
		http.Error(w, "page could not be rendered", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	if csp == "" {
		csp = uiCSP
	}
	h.Set("Content-Security-Policy", csp)
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}
