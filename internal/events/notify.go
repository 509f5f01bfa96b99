package events

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/musterhq/muster/internal/proto"
	"github.com/musterhq/muster/internal/runstate"
	"github.com/musterhq/muster/internal/termtext"
)

// DefaultNotifyCommand is the desktop notification command for an OS.
func DefaultNotifyCommand(goos string) []string {
	switch goos {
	case "linux", "freebsd", "openbsd", "netbsd":
		// "--": notify-send parses options anywhere on its command line,
		// and the body is an agent's text.
		return []string{"notify-send", "--app-name=Muster", "--", "{title}", "{body}"}
	case "darwin":
		return []string{"osascript",
			"-e", "on run argv",
			"-e", "display notification (item 2 of argv) with title (item 1 of argv)",
			"-e", "end run",
			"{title}", "{body}"}
	}
	return []string{}
}

const notifyTimeout = 10 * time.Second

// notifyLoop runs the notification command for each new item, one at a
// time, off the ingestion path. When ctx ends it drains what is queued,
// within a few seconds.
func (e *Engine) notifyLoop(ctx context.Context) {
	for {
		select {
		case it := <-e.notes:
			e.notify(context.Background(), it)
		case <-ctx.Done():
			dctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			defer cancel()
			for {
				select {
				case it := <-e.notes:
					e.notify(dctx, it)
				default:
					return
				}
			}
		}
	}
}

func (e *Engine) notify(ctx context.Context, it runstate.Item) {
	if len(e.cfg.NotifyCommand) == 0 {
		return
	}
	name := it.SessionID
	if e.cfg.Resolver != nil {
		if n, ok := e.cfg.Resolver.SessionName(it.SessionID); ok {
			name = n
		}
	}
	argv := NotifyArgs(e.cfg.NotifyCommand, it, name)
	ctx, cancel := context.WithTimeout(ctx, notifyTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), NotifyEnv(it, name)...)
	out, err := cmd.CombinedOutput()
	if err != nil && ctx.Err() != context.Canceled {
		if e.notifyWarned.CompareAndSwap(false, true) {
			e.log.Warn("notification command failed; further failures are not logged",
				"command", argv[0], "err", err, "output", strings.TrimSpace(string(out)))
		}
	}
}

// NotifyArgs builds the notification command line for an item. The
// message is an agent's text: escape sequences and control characters are
// removed (a notifier may print it to a terminal or log), and it is cut to
// 200 characters.
func NotifyArgs(tmpl []string, it runstate.Item, sessionName string) []string {
	sessionName = termtext.Line(sessionName)
	title := "Muster: " + ItemTitle(sessionName, string(it.Reason))
	body := termtext.Clip(it.Message, 200)
	r := strings.NewReplacer("{title}", title, "{body}", body, "{session}", sessionName,
		"{reason}", string(it.Reason), "{id}", fmt.Sprint(it.ID))
	argv := make([]string, 0, len(tmpl)+2)
	placed := false
	for i, a := range tmpl {
		if i > 0 && strings.ContainsRune(a, '{') {
			if b := r.Replace(a); b != a {
				placed = true
				a = b
			}
		}
		argv = append(argv, a)
	}
	if !placed {
		argv = append(argv, title, body)
	}
	return argv
}

// NotifyEnv is the environment a notification command gets besides the
// daemon's own: the item's fields, its text made safe to print.
func NotifyEnv(it runstate.Item, sessionName string) []string {
	sessionName = termtext.Line(sessionName)
	return []string{
		"MUSTER_ITEM_ID=" + fmt.Sprint(it.ID),
		"MUSTER_SESSION=" + sessionName,
		"MUSTER_SESSION_ID=" + it.SessionID,
		"MUSTER_PROVIDER=" + termtext.Line(it.Provider),
		"MUSTER_REASON=" + termtext.Line(string(it.Reason)),
		"MUSTER_TITLE=Muster: " + ItemTitle(sessionName, string(it.Reason)),
		"MUSTER_MESSAGE=" + termtext.Clip(it.Message, 200),
	}
}

// ItemTitle says in a few words what an item of a session is ("cx needs
// approval"), for notifications.
func ItemTitle(sessionName, reason string) string {
	return termtext.Line(sessionName) + " " + reasonPhrase(proto.EventKind(reason))
}

func reasonPhrase(r proto.EventKind) string {
	switch r {
	case proto.KindApprovalRequested:
		return "needs approval"
	case proto.KindInputRequested:
		return "needs input"
	case proto.KindFailed:
		return "failed"
	case proto.KindDisconnected:
		return "disconnected"
	case proto.KindSucceeded:
		return "finished"
	case runstate.ReasonNotification:
		return "asks for attention"
	}
	return termtext.Line(string(r))
}
