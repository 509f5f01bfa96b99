package store

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
)

// TestConcurrentOpensOfANewDatabase: the daemon's history watcher and a
// `muster history` started with it both create history.db at once; each
// must get a migrated store, not "disk I/O error" from two connections
// switching a new file to WAL together, nor a migration run twice.
func TestConcurrentOpensOfANewDatabase(t *testing.T) {
	for round := range 10 {
		path := filepath.Join(t.TempDir(), fmt.Sprintf("history-%d.db", round))
		var wg sync.WaitGroup
		errs := make(chan error, 6)
		for range 6 {
			wg.Go(func() {
				s, err := OpenIndex(context.Background(), path)
				if err != nil {
					errs <- err
					return
				}
				errs <- s.Close()
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
		}
	}
}
