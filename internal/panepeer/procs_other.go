//go:build !darwin

package panepeer

func otherProcs() Procs { return nil }
