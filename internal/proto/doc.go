// Package proto holds the wire types shared by the daemon and its clients:
// the agent event envelope of events.sock (seed 004, DESIGN §4) and the
// control API of control.sock. It does no I/O.
package proto
