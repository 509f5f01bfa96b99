// Package termsignal is the streaming terminal-signal scanner that sits in
// front of the headless emulator on each pane's output path (DESIGN.md §3,
// §5). It finds the signals an agent or shell sends through its terminal and
// strips the OSC sequences it interprets, so that the emulator never sees
// them.
//
// # Grammar
//
// An OSC is ESC ] <number> ; <payload> and ends only on BEL or ESC \. The
// 8-bit ST byte 0x9C is never a terminator: it is a UTF-8 continuation byte
// in ✳ (E2 9C B3, Claude Code's title) and in much CJK text, and treating it
// as ST is charmbracelet/x#848. CAN or SUB aborts a sequence, and ESC
// followed by anything but \ aborts it and starts a new escape with that
// byte. An OSC we interpret is collected up to MaxOSC bytes; a longer one is
// stripped whole and reports nothing.
//
// # Signals
//
//   - OSC 0, 1, 2: title (KindTitle). The text is everything after the first
//     ';' and may contain ';'. Scanner.Title keeps the current one.
//   - OSC 7 file://host/path (percent-decoded) and OSC 9;9;path: KindCwd.
//   - OSC 9;4;state[;percent]: KindProgress, states 0–4, percent clamped to
//     0..100.
//   - OSC 9;text: KindNotify, unless the text matches ^[0-9]+(;|$), which is
//     a ConEmu command (only 4 and 9 are read).
//   - OSC 777;notify;title;body: KindNotify; the body may contain ';'. Other
//     777 extensions are stripped and ignored.
//   - OSC 99 (kitty): KindNotify once the chunks of an id are complete (i=,
//     d=0 until d=1, p=title|body, e=1 for base64), at most 16 KiB per
//     id. p=close is stripped; p=? queries pass through.
//   - OSC 133 and 633 A, B, C, D: KindPrompt, with the exit code of D masked
//     to 0..255 and err= taking precedence.
//   - OSC 7501 (agent status, emitted by Codex, and by Claude Code once
//     its query is answered): KindAgentStatus with state=. The query
//     7501;? (Claude Code) is KindStatusQuery, stripped: the daemon answers
//     it, whether or not a client is attached.
//   - BEL in the ground state: KindBell. The BEL itself passes through;
//     BellLimiter debounces.
//
// # Output
//
// Feed returns the stream with every OSC above stripped, except the kitty
// query named. Everything else passes through byte for byte: other OSC (8
// hyperlinks, 10/11/12 colour queries), CSI, DCS, APC, and plain UTF-8.
//
// That stream is the emulator's. An attached client's terminal gets another,
// from a Scanner made by NewClientFilter: the raw stream minus only what
// Muster consumes (OSC 7501 and its query, OSC 9;4, and the notifications
// OSC 9, 777;notify and 99), so that titles, prompt marks and queries still
// reach the user's terminal, but a notification is not shown twice and the
// agent's status protocol stays between the agent and Muster.
//
// tmux passthrough (ESC P tmux; ... ESC \, with each ESC of the payload
// doubled) is unwrapped: the wrapper is stripped and the payload, with ESC
// ESC turned back into ESC, is scanned as if the program had written it
// directly. Signals inside it are reported and stripped, and the rest of the
// payload passes on unwrapped, as tmux would pass it to its own terminal.
// The unwrapped payload joins the stream where the wrapper stood, so a
// sequence it leaves open continues in the bytes after the wrapper (and is
// aborted if the next thing there is another wrapper's ESC P). Wrappers nest
// up to four deep; a deeper one passes through as an ordinary DCS.
//
// Feed holds back the few bytes of an escape sequence whose fate is not yet
// known at the end of a chunk (ESC, ESC ] and the OSC number, ESC P and part
// of "tmux;"), and a query being collected; they come out with the next
// chunk, or from Flush at the end of the stream.
//
// The package is pure: no I/O, no goroutines, no clock. Title glyphs of
// particular providers are interpreted elsewhere.
package termsignal
