// Package attachterm owns the bytes between a pane and the user's terminal
// while attached, whichever side writes them: the attach client, which
// gets the pane over the control socket, or the daemon, which writes to
// and reads from the terminal the client passed it. Output keeps to the
// user's alternate screen and hands the mouse between the attached side
// and the pane's program (Filter, Mouse); input has the attached side's
// own mouse reports taken out (MouseInput) and its keys found (Keys).
package attachterm
