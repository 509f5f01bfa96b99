//go:build muster_previous_protocol

package proto

// previousProtocol makes this build speak the control protocol before
// this one: e2e/hosts installs such a build on a host to test a daemon of
// another protocol for real. Never shipped.
const previousProtocol = 1
