//go:build !darwin

package daemon

func otherProcs() procTree { return nil }
