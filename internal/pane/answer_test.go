package pane

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// statusQuery and statusReply stand for Claude Code's OSC 7501 probe and
// the daemon's answer.
const (
	statusQuery = "\x1b]7501;?\x07"
	statusReply = "\x1b]7501;?\x07"
)

// queryAnswerer strips statusQuery from the output and answers it.
type queryAnswerer struct{ pending bool }

func (q *queryAnswerer) Scan(p []byte) ([]byte, string, bool) {
	if i := bytes.Index(p, []byte(statusQuery)); i >= 0 {
		q.pending = true
		p = append(p[:i:i], p[i+len(statusQuery):]...)
	}
	return p, "", false
}

func (q *queryAnswerer) Answer() []byte {
	if !q.pending {
		return nil
	}
	q.pending = false
	return []byte(statusReply)
}

// TestAnswerPrecedesLaterReplies: a program that sends a query the
// Answerer answers and then DA1 (Claude Code's probe: queries, then DA1 as
// the sentinel that says every query before it went unanswered) reads the
// answer before the emulator's DA1 reply, always. Claude Code 2.1.328 sent
// no OSC 7501 status in 2 of 8 runs because the emulator's reply won the
// race to the PTY.
func TestAnswerPrecedesLaterReplies(t *testing.T) {
	for i := range 10 {
		p, err := Start(Config{
			Argv: []string{"sh", "-c", `stty -icanon -echo min 1; printf '\033]7501;?\007\033[c'; dd bs=1 count=3 2>/dev/null | od -An -c; sleep 10`},
			Cols: 80, Rows: 24,
			Scanner: &queryAnswerer{},
		})
		if err != nil {
			t.Fatal(err)
		}
		got := waitCapture(t, p, "033")
		p.Close(time.Second)
		if first := strings.Fields(got); len(first) < 3 || first[1] != "]" || first[2] != "7" {
			t.Fatalf("run %d: the program read %q first, want the answer %q before the DA1 reply", i, got, statusReply)
		}
	}
}
