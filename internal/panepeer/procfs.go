package panepeer

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// ProcFS reads processes from a Linux procfs mount.
type ProcFS struct {
	Dir string // "/proc" when empty
}

func (p ProcFS) path(pid int, name string) string {
	dir := p.Dir
	if dir == "" {
		dir = "/proc"
	}
	return filepath.Join(dir, strconv.Itoa(pid), name)
}

var errMalformed = errors.New("malformed stat")

// Stat reads the ppid and session fields of <dir>/<pid>/stat. The command
// name is in parentheses and may itself contain ") ", so fields are counted
// after the last ')'.
func (p ProcFS) Stat(pid int) (Stat, error) {
	// A stat line is well under 1 KiB: one read.
	f, err := os.Open(p.path(pid, "stat"))
	if err != nil {
		return Stat{}, err
	}
	var buf [1024]byte
	n, err := f.Read(buf[:])
	f.Close()
	if err != nil {
		return Stat{}, err
	}
	b := buf[:n]
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return Stat{}, errMalformed
	}
	// state ppid pgrp session …
	f4 := bytes.Fields(b[i+1:])
	if len(f4) < 4 {
		return Stat{}, errMalformed
	}
	var st Stat
	if st.PPID, err = strconv.Atoi(string(f4[1])); err != nil {
		return Stat{}, errMalformed
	}
	if st.SID, err = strconv.Atoi(string(f4[3])); err != nil {
		return Stat{}, errMalformed
	}
	return st, nil
}

// Session is getsid(pid), read from the kernel whatever Dir is.
func (ProcFS) Session(pid int) (int, error) { return unix.Getsid(pid) }

// Environ reads the environment the process was started with; later
// setenv calls inside the process do not show here.
func (p ProcFS) Environ(pid int, key string) (string, error) {
	b, err := os.ReadFile(p.path(pid, "environ"))
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

// System returns the Procs of this system, or nil when other processes
// cannot be read here.
func System() Procs {
	p := ProcFS{}
	if _, err := p.Stat(os.Getpid()); err == nil {
		return p
	}
	return otherProcs()
}
