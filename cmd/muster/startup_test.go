package main

import (
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/musterhq/muster/internal/testing/testbin"
)

// Start-up budget of `muster --version`, from GODEBUG=inittrace=1: every
// package muster links runs its init in every command, so init that only
// one command needs (chroma's lexer and style registries, 71,000
// allocations and 4.7 MB, were this) belongs in that command, built on
// first use. Measured on 2026-12-02 with Go 1.26.8 after replays' registries became lazy:
// 156 packages, 9,613 allocations, 1.35 MB (before: 158, 80,926, 6.0 MB).
// The budgets leave room for ordinary growth; passing one is a decision
// to make in review, with the trace in hand.
const (
	maxInitPackages = 175
	maxInitAllocs   = 13000
	maxInitBytes    = 2 << 20
)

// TestVersionInitBudget counts allocations and packages, not time, so that
// a loaded machine cannot fail it.
func TestVersionInitBudget(t *testing.T) {
	bin := testbin.Muster(t)
	home := t.TempDir()
	cmd := exec.Command(bin, "--version")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1", "MUSTER_HOME="+home, "HOME="+home)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("muster --version: %v\n%s", err, stderr.Bytes())
	}
	pkgs, allocs, size := 0, 0, 0
	var top []string
	for line := range strings.Lines(stderr.String()) {
		// init PKG @T ms, C ms clock, B bytes, A allocs
		f := strings.Fields(line)
		if len(f) != 11 || f[0] != "init" || f[8] != "bytes," || f[10] != "allocs" {
			continue
		}
		b, err1 := strconv.Atoi(f[7])
		a, err2 := strconv.Atoi(f[9])
		if err1 != nil || err2 != nil {
			t.Fatalf("unexpected inittrace line %q", line)
		}
		pkgs++
		allocs += a
		size += b
		if a > 1000 {
			top = append(top, f[1]+" "+f[9])
		}
	}
	t.Logf("muster --version init: %d packages, %d allocations, %d bytes; over 1,000 allocations: %v", pkgs, allocs, size, top)
	if pkgs < 50 {
		t.Fatalf("only %d init lines in the trace; did GODEBUG=inittrace change format?\n%s", pkgs, stderr.Bytes())
	}
	if pkgs > maxInitPackages {
		t.Errorf("muster --version initialises %d packages, budget %d", pkgs, maxInitPackages)
	}
	if allocs > maxInitAllocs {
		t.Errorf("muster --version's init makes %d allocations, budget %d; heaviest: %v", allocs, maxInitAllocs, top)
	}
	if size > maxInitBytes {
		t.Errorf("muster --version's init allocates %d bytes, budget %d; heaviest: %v", size, maxInitBytes, top)
	}
}
