//go:build !linux && !darwin

package native

import "errors"

func inspectProcess(int) (procInfo, error) {
	return procInfo{}, errors.ErrUnsupported
}

func processCwd(int) string { return "" }

func groupAlive(int) bool { return false }
