// Command fakeagent plays Claude Code 2.1.328, Codex CLI 0.169.0 and Gemini
// CLI 0.61.0 (and a generic "custom" agent) on a terminal, so that Muster's
// integration tests can drive real-shaped agents without a model, a network
// or the real 1 GB of CLIs. Everything it does was copied from what the real
// CLIs did offline (research/real-cli in the shared tree): the flags they
// accept and refuse, where they keep transcripts and what the records look
// like, which hook configuration they read, which hook events they fire, in
// which order, with which payload fields and environment, and the terminal
// titles and OSC sequences they print.
//
// Tests build it with fakeagenttest.Build, which also creates the links
// claude, codex, gemini and fakeagent to it; put that directory first on PATH.
// The persona is the base name of argv[0] (anything unknown is "custom") or
// --persona NAME, given anywhere on the command line.
//
// # Prompt language
//
// Each line typed at the "> " prompt is one turn. Enter is \r or \n.
//
//	reply TEXT   the assistant answers TEXT
//	tool CMD     a Bash tool call that needs approval: the approval hooks
//	             fire, "Allow? [y/n]" is shown; y or Enter approves (nothing
//	             is run, a result is recorded, the turn ends normally), n or
//	             Esc denies (the turn ends with no Stop, as in the real CLIs)
//	run CMD      a Bash tool call that needs no approval
//	slow N CMD   a Bash tool call that needs no approval and runs N ms; Esc
//	             interrupts it (Claude PostToolUseFailure is_interrupt)
//	fail         a turn that fails like an unreachable API (Claude
//	             StopFailure; Gemini AfterAgent "[no response text]"; Codex an
//	             error and no Stop)
//	limit        Claude only: a turn stopped at the plan's usage limit
//	             (StopFailure error rate_limit, "5-hour limit reached ∙
//	             resets 3pm (UTC)"); other personas answer it "ok"
//	sleep N      a turn that takes N milliseconds and answers "ok"
//	clear        /clear: a new session id (Claude SessionEnd reason clear,
//	             then SessionStart source clear)
//	exit         exit (also /exit, /quit, quit): SessionEnd
//	anything     the same as "reply ok"
//
// Esc or Ctrl-C during a turn interrupts it (no Stop). Ctrl-C twice, or
// Ctrl-D twice on an empty line, exits. A hangup (SIGHUP, SIGTERM, end of
// input) exits with the "other" SessionEnd reason.
//
// # Environment
//
//	FAKEAGENT_LOG            append one JSON line per invocation:
//	                         {"persona","argv","cwd","pid","ppid","env"} where
//	                         env holds the MUSTER_* variables
//	FAKEAGENT_HOOK_LOG       append one JSON line per hook command run:
//	                         {"persona","event","command","exit_code",
//	                         "stdout","stderr","ms"}
//	FAKEAGENT_EXIT_AT_START  1: exit 1 right after logging the invocation,
//	                         before any hook or transcript
//	FAKEAGENT_NO_HOOKS       1: run no hooks
//	FAKEAGENT_NOTIFY_DELAY   how long an approval waits before Claude's
//	                         Notification(permission_prompt) (real: about
//	                         6 s; default 200ms); a Go duration or milliseconds
//	FAKEAGENT_IDLE_DELAY     how long Claude waits after a turn before
//	                         Notification(idle_prompt) (default 60s; "off")
//	FAKEAGENT_LIMIT_RESETS   when Claude's limit turn says the limit resets
//	                         ("3:07pm (UTC)"; default "3pm (UTC)")
//	FAKEAGENT_SCRIPT         a file of prompt lines run at start, as if typed
//	                         (also --script FILE for the custom persona)
//	FAKEAGENT_HOME           the custom persona's state dir (default
//	                         ~/.fakeagent)
//	FAKEAGENT_HOOK           the custom persona's capture command
//	FAKEAGENT_CODEX_HOOK_TRUST  1: Codex runs only hooks with a
//	                         [hooks.state."<file>:<event>:<g>:<h>"] entry in
//	                         config.toml, unless --dangerously-bypass-hook-trust
//	FAKEAGENT_CODEX_DAEMON_IDLE how long the Codex daemon lives without
//	                         clients (default 5s; the real one stays)
//
// Provider homes are read like the real CLIs: CLAUDE_CONFIG_DIR, CODEX_HOME,
// GEMINI_CLI_HOME, else HOME.
//
// # Processes
//
// Hooks run through /bin/sh -c as children of the agent process, so "$PPID"
// in a hook command is the agent, except where the real CLI differs:
// Gemini CLI re-executes itself (the child gets GEMINI_CLI_NO_RELAUNCH=true)
// and the hooks are children of the child; Codex without --no-daemon hands
// its thread to a shared, detached daemon, started by the first Codex with
// that Codex's environment, which writes the rollouts and runs the hooks
// ($CODEX_HOME/app-server-control/app-server-control.sock, pid in
// $CODEX_HOME/app-server-daemon/daemon.pid).
package main
