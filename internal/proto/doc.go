// Package proto holds the wire types shared by the daemon and its clients:
// the agent event envelope of events.sock (seed 004, DESIGN §4, event.go)
// and the control API of control.sock (control.go: the version exchange and
// the table of ops with their types, access rules and error codes; mux.go:
// the one dispatcher; frame.go: attach frames). It does no I/O.
package proto
