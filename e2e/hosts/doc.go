// Package hosts tests `muster host` and HOST:NAME end to end against a real
// OpenSSH server: each test starts its own sshd on 127.0.0.1 (a random
// port, its own host key and config in a temp dir) and logs in as a second
// Unix user it creates, so the "remote" muster runs as another user with
// another home, daemon and runtime directory, as on another machine. It
// needs root (to create the user) and openssh-server (installed when
// missing); it has no code of its own; the tests are in package hosts_test.
package hosts
