package core_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/musterhq/muster/internal/history"
	"github.com/musterhq/muster/internal/testing/poll"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// TestDaemonIndexesIntoHistoryDB: the daemon's transcript watcher writes
// the history index to history.db, the file `muster history` reads, and
// muster.db, whose one writer commits agent events, holds no index
// (issue 22: an event ack waited behind a large full-text row).
func TestDaemonIndexesIntoHistoryDB(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a daemon")
	}
	e := newEnv(t)
	const id = "dddddddd-0000-4000-8000-00000000000d"
	writeClaudeSession(t, e, id, "index me in my own file")
	e.must("ls") // starts the daemon, whose watcher indexes at once
	state := filepath.Join(e.home, "state")
	idx, err := history.Open(context.Background(), filepath.Join(state, "history.db"), "e2e")
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	var n int
	poll.Wait(t, 30*time.Second, func() bool {
		got, err := idx.List(context.Background(), history.Query{})
		n = len(got)
		return err == nil && n == 1 && got[0].ID == id
	}, func() string {
		return fmt.Sprintf("the daemon to index the transcript into history.db (it lists %d sessions)", n)
	})

	db, err := sql.Open("sqlite", "file:"+filepath.Join(state, "muster.db")+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.QueryRow(`SELECT count(*) FROM sqlite_master WHERE name LIKE 'history%'`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("muster.db holds %d history tables (%v)", n, err)
	}
}
