package unixsock

import (
	"net"
	"os"
	"path/filepath"
	"testing"
)

func TestPeerCredIsTheConnectingProcess(t *testing.T) {
	dir, err := os.MkdirTemp("", "us")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	ln, err := Listen(filepath.Join(dir, "s.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("unix", filepath.Join(dir, "s.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	srv, err := ln.AcceptUnix()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	cred, err := PeerCred(srv)
	if err != nil {
		t.Fatal(err)
	}
	if cred.PID != os.Getpid() || cred.UID != os.Getuid() {
		t.Errorf("PeerCred = %+v, want pid %d uid %d", cred, os.Getpid(), os.Getuid())
	}
	if uid, err := PeerUID(srv); err != nil || uid != os.Getuid() {
		t.Errorf("PeerUID = %d, %v", uid, err)
	}
}
