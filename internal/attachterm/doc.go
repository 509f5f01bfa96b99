// Package attachterm owns the bytes between a pane and the user's terminal
// while attached, whichever side writes them: the daemon, which writes to
// and reads from the terminal the client passed it, or the attach client,
// which relays the pane over the control socket for a terminal it cannot
// pass. Output keeps to the user's alternate screen and hands the mouse
// between the attached side and the pane's program (Filter, Mouse); input
// has the attached side's own mouse reports taken out (MouseInput) and its
// keys found (Keys, the one key scan); copy mode shows the pane's history
// in place of the pane (CopyMode).
package attachterm
