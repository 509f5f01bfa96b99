//go:build !muster_previous_protocol

package proto

// previousProtocol is 0 in every build but the version-skew tests'
// (previous_protocol.go).
const previousProtocol = 0
