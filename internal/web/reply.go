package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/musterhq/muster/internal/blob"
	"github.com/musterhq/muster/internal/redact"
	"github.com/musterhq/muster/internal/replay"
	"github.com/musterhq/muster/internal/transcript"
)

// A reply is what a handler answers. Writing it is the only way a handler
// reaches the client, and every reply that carries text from transcripts
// or sessions redacts all of it as it is written, so no page can forget.
type reply interface {
	write(s *Server, w http.ResponseWriter, r *http.Request)
}

// pageReply is one of the UI's pages (pages.go) with its data.
type pageReply struct {
	status int
	name   string
	data   map[string]any
	// csp replaces uiCSP (the Live page allows its script).
	csp string
}

func (p pageReply) write(s *Server, w http.ResponseWriter, r *http.Request) {
	data, _ := redact.Value(p.data)
	if data == nil {
		data = map[string]any{}
	}
	s.writePage(w, p.status, p.name, p.csp, data)
}

func errorPage(status int, msg string) reply {
	return pageReply{status: status, name: "error", data: map[string]any{"Message": msg}}
}

// jsonReply is an API answer.
type jsonReply struct {
	status int
	v      any
}

func (j jsonReply) write(s *Server, w http.ResponseWriter, r *http.Request) {
	v, _ := redact.Value(j.v)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		s.o.Logger.Error("encode json", "err", err)
		http.Error(w, "answer could not be encoded", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(j.status)
	w.Write(buf.Bytes())
}

// textReply is a plain-text message, usually an error.
type textReply struct {
	status int
	msg    string
}

func (t textReply) write(s *Server, w http.ResponseWriter, r *http.Request) {
	msg, _ := redact.String(t.msg)
	http.Error(w, msg, t.status)
}

// replayReply is the replay page of a transcript, always redacted: the
// server has no way to ask for a replay without redaction.
type replayReply struct {
	t    *transcript.Transcript
	subs []*transcript.Transcript
	page int
	link string // the session page's path
	// release gives back the render token once the page is written.
	release func()
}

func (rp replayReply) write(s *Server, w http.ResponseWriter, r *http.Request) {
	defer rp.release()
	out, err := replay.HTML(rp.t, replay.Options{
		Version:   s.o.Version,
		Nav:       []replay.Link{{Label: "← History", URL: "/"}, {Label: "Live", URL: "/live"}, {Label: "Stats", URL: "/stats"}},
		Page:      rp.page,
		Subagents: rp.subs,
		PageURL: func(n int) string {
			if n == 1 {
				return rp.link
			}
			return rp.link + "?page=" + strconv.Itoa(n)
		},
	})
	if errors.Is(err, replay.ErrNoPage) {
		errorPage(http.StatusNotFound, fmt.Sprintf("the replay has no page %d", rp.page)).write(s, w, r)
		return
	}
	if err != nil {
		s.o.Logger.Error("render replay", "err", err)
		errorPage(http.StatusInternalServerError, "the replay could not be rendered").write(s, w, r)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", replayCSP)
	h.Set("Cache-Control", "no-store")
	w.Write(out)
}

// redirectReply sends the client to a path of this server.
type redirectReply struct {
	to string
}

func (rd redirectReply) write(s *Server, w http.ResponseWriter, r *http.Request) {
	http.Redirect(w, r, rd.to, http.StatusFound)
}

// blobReply is a published blob, served as stored: its id is its
// SHA-256, so it cannot be rewritten, and `muster replay --publish`
// redacted it unless the user chose otherwise.
type blobReply struct {
	b blob.Blob
}

func (br blobReply) write(s *Server, w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Cache-Control", "public, max-age=31536000, immutable")
	h.Set("ETag", `"`+br.b.SHA256+`"`)
	ctype := http.DetectContentType(br.b.Content)
	if strings.HasPrefix(ctype, "text/html") {
		h.Set("Content-Security-Policy", replayCSP)
	}
	h.Set("Content-Type", ctype)
	// ServeContent answers If-None-Match (304) and ranges from the ETag.
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(br.b.Content))
}
