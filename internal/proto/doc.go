// Package proto owns every message that crosses a process boundary and
// every limit on them: the agent event envelope of events.sock (seed 004,
// DESIGN §4; event.go for the types, eventwire.go for its one encoder, the
// hook helper's, its one decoder, the daemon's, its replies and its
// limits), the control API of control.sock (control.go: the version
// exchange and the table of ops with their types, access rules and error
// codes; mux.go: the one dispatcher; frame.go: attach frames; size.go:
// terminal sizes). It does no I/O.
package proto
