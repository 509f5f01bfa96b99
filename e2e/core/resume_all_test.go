package core_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// `muster resume --all` starts sessions side by side and prints each as it
// comes back: when its first line is printed, more than one session's
// program has started again (they resume side by side) and not all of
// them have (it did not wait for every session before printing). Each
// resumed pane waits out the daemon's settle time before it counts.
func TestResumeAllIsConcurrentAndStreams(t *testing.T) {
	e := newEnv(t)
	marks := t.TempDir()
	const n = 20
	var names []string
	for i := range n {
		name := fmt.Sprintf("s%02d", i)
		names = append(names, name)
		e.must("new", "--name", name, "--detach", "--cmd", fmt.Sprintf("touch %s/%s; exec sleep 1000", marks, name))
	}
	e.must("daemon", "stop", "--force")
	for _, s := range e.ls() {
		if s.State != "restorable" {
			t.Fatalf("after daemon stop %s is %q, want restorable", s.Name, s.State)
		}
	}
	entries, _ := os.ReadDir(marks)
	for _, en := range entries {
		os.Remove(filepath.Join(marks, en.Name()))
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, e.bin, "resume", "--all")
	cmd.Env = e.vars
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	sc := bufio.NewScanner(stdout)
	if !sc.Scan() {
		t.Fatalf("resume --all printed nothing: %v", cmd.Wait())
	}
	first := sc.Text()
	started, _ := os.ReadDir(marks)
	var lines []string
	lines = append(lines, first)
	go func() {
		for sc.Scan() {
			lines = append(lines, sc.Text())
		}
		exited <- cmd.Wait()
	}()
	if len(started) < 2 {
		t.Errorf("when %q was printed only %d session had started again: sessions resume one after another", first, len(started))
	}
	if len(started) == n {
		t.Errorf("%q was printed only once all %d sessions had started again: nothing streams", first, n)
	}
	if err := <-exited; err != nil {
		t.Fatalf("resume --all: %v\n%s", err, strings.Join(lines, "\n"))
	}
	var got []string
	for _, l := range lines {
		name, rest, _ := strings.Cut(l, ": ")
		if rest != "resumed" {
			t.Errorf("line %q, want NAME: resumed", l)
		}
		got = append(got, name)
	}
	slices.Sort(got)
	if !slices.Equal(got, names) {
		t.Errorf("resumed %v, want %v", got, names)
	}
	for _, s := range e.ls() {
		if s.State != "running" {
			t.Errorf("after resume --all %s is %q, want running", s.Name, s.State)
		}
	}
}
