// Package panepeer tells whether the process at the other end of a Unix
// socket (its pid from SO_PEERCRED) runs inside a Muster pane, and which.
// It is the one classification both of the daemon's sockets use:
// control.sock (internal/daemon) decides from it which ops a caller may
// run, and events.sock (internal/events, through the daemon) which
// surfaces a caller may send events for. The policies live with the
// sockets; this package only places the process.
//
// The rule, exactly: the process is inside pane P when, in this order, its
// ancestry (itself included) reaches the root process of P's live pane;
// or its session id (getsid) is that root process (every pane is its own
// session); or its initial environment (/proc/PID/environ) carries
// MUSTER_SURFACE_ID of a surface of P, live or not (a background job that
// outlived its pane). A process that cannot be read (it died, or lives in a
// pid namespace the daemon cannot see) is "unidentified": inside a pane,
// but no known one. Any other process is outside every pane.
//
// This is not a sandbox. A same-user process that double-forks, calls
// setsid and execs itself with a clean environment leaves the pane's
// ancestry, session and environment behind; one that ptraces the user's
// shell can act as the user. The README's security section says so.
package panepeer
