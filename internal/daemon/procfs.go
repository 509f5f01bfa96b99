package daemon

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// procFS reads processes from a Linux procfs mount.
type procFS struct{ dir string }

// stat returns the ppid and session fields of <dir>/<pid>/stat. The command
// name is in parentheses and may itself contain ") ", so fields are counted
// after the last ')'.
func (p procFS) stat(pid int) (ppid, sid int, err error) {
	b, err := os.ReadFile(filepath.Join(p.dir, strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, 0, err
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, 0, errors.New("malformed stat")
	}
	// state ppid pgrp session …
	f := strings.Fields(s[i+1:])
	if len(f) < 4 {
		return 0, 0, errors.New("malformed stat")
	}
	if ppid, err = strconv.Atoi(f[1]); err != nil {
		return 0, 0, errors.New("malformed stat")
	}
	if sid, err = strconv.Atoi(f[3]); err != nil {
		return 0, 0, errors.New("malformed stat")
	}
	return ppid, sid, nil
}

func (p procFS) parent(pid int) (int, error) {
	pp, _, err := p.stat(pid)
	return pp, err
}

func (p procFS) session(pid int) (int, error) {
	_, sid, err := p.stat(pid)
	return sid, err
}

// environ reads the environment the process was started with; later
// setenv calls inside the process do not show here.
func (p procFS) environ(pid int, key string) (string, error) {
	b, err := os.ReadFile(filepath.Join(p.dir, strconv.Itoa(pid), "environ"))
	if err != nil {
		return "", err
	}
	prefix := []byte(key + "=")
	for kv := range bytes.SplitSeq(b, []byte{0}) {
		if v, ok := bytes.CutPrefix(kv, prefix); ok {
			return string(v), nil
		}
	}
	return "", nil
}

// systemProcs returns the procTree of this system, or nil when processes
// cannot be read.
func systemProcs() procTree {
	p := procFS{dir: "/proc"}
	if _, _, err := p.stat(os.Getpid()); err == nil {
		return p
	}
	return otherProcs()
}
