// Package core tests Muster end to end the way a user runs it: the real
// muster binary, a real daemon per test (MUSTER_HOME in a temp dir), real
// PTYs and real programs in the panes, tmux and a PTY client for attach.
// It has no code of its own; the tests are in package core_test.
package core
