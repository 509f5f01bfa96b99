// Package native is what the daemon knows about a pane without any hook:
// terminal activity (seed 000, "Activity and attention"), native run
// estimation (seed 004, "Native run estimation"; DESIGN §5), and the
// fusion rule, which fills the provider hooks' silences with that
// evidence. It owns the activity rules, foreground process
// identification, the following of an agent's transcript as it grows, and
// the fusion rule (Fuse, below). What a provider's titles mean
// (provider.TitleReader) and where its transcript is and what its lines
// say about turns (provider.TurnReader, Claude Code and Codex) are the
// provider packages'. It does not own the scanner (internal/termsignal),
// the run states (internal/runstate, reached through Config.Events), or the
// panes.
//
// # Activity
//
// Activity(surface) folds the pane's signals, latest first:
//
//	OSC 9;4;1|2|3|4 (progress shown)          working
//	OSC 9;4;0 (progress removed)              waiting (for input)
//	OSC 9, OSC 777;notify, OSC 99, BEL        attention (bells debounced by
//	                                          termsignal.BellLimiter)
//	OSC 7501 state=working | idle, done |     working | waiting |
//	  blocked | clear                         attention | "" (Codex)
//	titles, per provider (TitleActivity,      Gemini CLI ◇ Ready / ✦ Working… /
//	  provider.TitleReader)                   ✋ Action Required; Codex spinner /
//	                                          "[ ! ] Action Required" / plain
//
// A notification or a bell (past the bell limiter) is also a request for
// the user's attention: Config.Listener.AttentionRequested gets it, at most once per
// Config.AttentionInterval (2 s) per pane, and the daemon opens an
// attention item with its text (events.Engine.Notify), except for a bell
// within a second of the user's own keystroke (a shell's failed
// completion). ConEmu commands (9;N) are never notifications: the scanner
// tells them apart.
//
// Titles are a fallback: once the program in the foreground sent OSC 9;4 or
// OSC 7501 its titles are ignored (Codex keeps spinning its title while
// 7501 says blocked). Titles count only for the provider of the pane or of
// the agent observed in its foreground. When that agent leaves, the
// activity resets to "". Activity is independent of hooks: it is tracked
// for every pane.
//
// # Native run estimation
//
// Only for a provider whose hooks are not injected into the launch
// (Surface.HooksInjected) and not heard from on the surface
// (HookEventSeen); otherwise only the fusion rule reads the agent's
// transcript. Hooks merely installed count for nothing (issue 23): an
// agent started before `muster hooks setup` never loads them, and Codex
// runs none it was not told to trust. Every event has a null
// sessionID and a hookName under "muster.native." (or, for the end of a
// coarse run, under the source of the evidence that ended it):
//
//   - launchObserved (started): the foreground process group of the pane
//     (Surface.ForegroundPGID) is led by a built-in provider's executable
//     (all.Launch(...).Executables; the base name of argv[0], of the
//     script an interpreter runs — node, bun, deno, a shell for a #!
//     script — minus .exe/.js), or, for a first-class launch, is the
//     pane's own process whatever its name.
//     For a provider whose transcript is not read (Cursor, OpenCode) this
//     opens the coarse run, with an id derived from the surface, the
//     process group, the launch and the run's own start. For a provider
//     with a turn reader (Claude Code, Codex, Gemini CLI) the agent is
//     idle at launch, at its prompt or a start-up dialog, so no run opens
//     then: the first turn its transcript starts is the first run, or,
//     when no transcript is followed (none found, or two agents in one
//     directory), a coarse run opens once the pane's activity has said
//     working for 3 s (OSC 9;4, 7501, a working title; its message names
//     the signal), work that began after the last coarse run ended.
//   - turnEnded (`muster.terminal.turnEnded`, source terminal): a coarse
//     run ends when the pane's activity goes from working (or attention)
//     back to waiting after the run opened: Codex's OSC 7501 done
//     (succeeded) or idle (interrupted: its Esc), OSC 9;4;0, Gemini CLI's
//     Ready title (succeeded); the message is the signal. The change
//     wakes the poll loop, so the run ends within milliseconds. A coarse
//     run that fused evidence ended first (a key, a status, the daemon's
//     reading of a failed turn) is not ended again. Either way the agent
//     is idle again, and only new evidence opens its next run.
//   - commandFinished: the agent left the foreground and the shell reported
//     OSC 133 (or 633) D: exit 0 → succeeded, 129/130/143 → interrupted,
//     other → failed, no status → succeeded.
//   - processExited: the agent's process group is gone without a D within
//     2 s (or one poll, if longer), or the pane's process exited (SurfaceExited, with its exit
//     status when the agent was the pane's own process).
//   - turnStarted / turnCompleted, for providers with a turn reader (Claude
//     Code and Codex): the agent's transcript is split into one run per
//     prompt turn whose id is
//     hookevent.TurnRunID(provider, turn key) — the key is Claude Code's
//     promptId and Codex's turn_id, exactly what the hook helper receives
//     as prompt_id and turn_id — so a hook arriving mid-turn (or installed
//     later) lands on the same run. The first turn ends the coarse run as
//     succeeded ("split into prompt turns"), one nanosecond before the
//     turn's start so that the turn stays the current run. A new prompt
//     while a turn is open ends that turn as interrupted; the agent exiting
//     ends it as interrupted (or failed, by exit status). The turn readers'
//     docs list the records read. Records older than the launch are history.
//   - request (`muster.terminal.request`, source terminal): the agent's
//     terminal says it waits for the user (provider.RequestReader: Codex's
//     OSC 7501 state=blocked, Gemini CLI's "✋ Action Required" title):
//     approval-requested (or input-requested) on the open turn or coarse
//     run, at once (the signal wakes the poll loop, and the transcript is
//     looked for at once: the request belongs to the turn it is about to
//     say); with none open, a coarse run opens for it. Recorded once per
//     request and run, so that a turn read after the request gets it too.
//     Its answer is the fusion rule's (the user's key, the agent working
//     again).
//   - hooksTookOver: when the hooks start reporting (HookEventSeen) an
//     open coarse run ends at its own last event time; an open turn is
//     left to the hooks, which share its id.
//
// Cursor gets the coarse run only: its hooks key a turn by
// conversation_id/generation_id, and no local store holds the generation
// id, so a turn run read from store.db could not share the hook's run id.
// OpenCode has no turn identifier at all. Gemini CLI's chat file keys
// turns by message ids no hook carries (provider.PrivateTurnKeys): hooked,
// it is read for the fusion rule only (below); hook-less, each prompt it
// records opens a coarse run (`muster.native.turnStarted`, the prompt as
// message), which its cancel ends interrupted and its API error failed
// (`muster.transcript.turnEnded`), and a success, which it does not
// mark, ends when the title says Ready (turnEnded above).
//
// A transcript followed by a session id (one the agent's processes prove,
// or the id assigned at launch, now on disk) gives that id to
// Config.Listener.NativeIDFound: the daemon records it, so that a session whose hooks
// never ran resumes its conversation (issue 23). Without hooks the proof
// of the processes is asked for even when an id is known: nothing else
// would see a /clear.
//
// Transcripts are found by the provider's locator (provider.TurnLocator)
// from the captured native id (Surface.NativeID); with none, from the id
// the agent's own processes prove (provider.ProcessSessionReader: Claude
// Code's sessions/<pid>.json, the rollout a Codex TUI holds open; asked
// every 2 s, so a /clear is followed); with neither, as the single
// transcript of the agent's working directory modified since the launch
// that no other surface follows, and only while every other pane's agent
// of the provider in that directory follows the transcript of its own id
// (prove.go; one whose id is known but whose transcript is not yet found
// could lose it to the scan): two agents without an id are left coarse
// rather than guessed, as are two Codexes in daemon mode, whose rollouts
// only the shared app-server holds. Found by scanning, a newer transcript
// there is followed after /clear. At most 4 MiB of a transcript are read
// per poll.
//
// # The fusion rule
//
// Hooks stay the authority for the events they report. Where a provider
// is known to be silent (issue 10's table: Claude Code fires no hook for
// an Esc mid-turn, a denied permission or a declined question, and none
// between an approval and the tool's end), other evidence moves the run,
// and only that:
//
//   - the provider's transcript, read incrementally also while its hooks
//     report (the turn readers above): a turn end the provider marks
//     provider.Turn.HookSilent (Claude Code's "[Request interrupted by
//     user…]", Codex's turn_aborted) ends the turn's own run
//     (hookevent.TurnRunID of its key, the hooks' run id) —
//     `muster.transcript.turnEnded`. Gemini CLI's chat file is read for
//     this only (provider.PrivateTurnKeys: its hooks carry no turn id and
//     it marks no successful end): its cancel ("Request cancelled.", an
//     info message) ends the surface's current Gemini run if that run
//     started before the record, hooks or not (hook-less, the coarse
//     run). It is what tells a cancel from an API error, whose AfterAgent
//     payload is the same; geminihook reads the same record when
//     AfterAgent fires;
//   - the user's keys: every write to a pane on the user's behalf
//     (attach, send; Input) is read by the provider of the surface's
//     current run (provider.KeyReader) in that run's state. A key that
//     answers a pending approval or question puts the run back to running,
//     pending confirmation by the next hook or transcript record
//     (`muster.keystroke.answered`); a key that interrupts (Esc or Ctrl-C
//     mid-turn, Esc at a dialog) ends it interrupted
//     (`muster.keystroke.interrupted`).
//     A write may hold several keys (`muster send --keys Down Enter`): the
//     first that does something counts. Writes longer than 16 bytes and
//     bracketed pastes are text and prove nothing;
//   - the agent's own status through its terminal (OSC 7501, OSC 9;4):
//     every such signal of a pane is read by the provider of the
//     surface's current run (provider.StatusReader) in that run's state —
//     Claude Code's state=idle while a run is open ends it interrupted
//     (an Esc, a denial, a declined question, Ctrl-C), its working or
//     progress while a dialog waits answers it — as
//     `muster.terminal.status` with the OSC sequence as its message. It
//     is fused as it arrives (Signals queues it on the pane's reader
//     goroutine), so it acts within milliseconds of the agent writing it;
//     other terminal evidence goes through Observe.
//
// Fuse decides against the surface's current run as the board has it
// (Config.Runs): evidence about the current run acts only while it
// is running or waiting, and `running` only answers a waiting run.
// Evidence older than the event that put the run in its state (a key
// typed, a status sent, before the hook reporting the dialog was fired)
// says nothing about that state.
//
// An answer is pending confirmation: the agent working again (OSC 7501
// working, OSC 9;4 progress, a title that moves the pane's activity to
// working: Gemini CLI's "✦ Working…"), a hook or a transcript record of
// the run confirms it (or ends the run). When nothing follows within
// answerConfirm (5 s), for every provider, the key was lost or did
// nothing: the run goes back to the request it answered
// (`muster.keystroke.unconfirmed`, approval-requested or
// input-requested, which opens the item again). A program that says
// nothing at all after an answer it took (no status, no title, no hook
// until its tool ends) shows its request again after 5 s, until its next
// hook: a run never stays running on a key nothing confirmed.
//
// A key that would answer a dialog, typed while the board says running,
// is held for lateHook (1 s): if the hook of a dialog fired before the
// key then arrives, the key answered it; a dialog whose hook fired after
// the key was not answered by it. Likewise a key that would interrupt a
// turn, typed while no run is open, is held for the start hook of a turn
// that began before it (a prompt, then Esc at once). Evidence naming its run (a transcript record) acts whatever the board
// knows, unless that run is current and already ended: a hook that
// arrives late cannot undo it, because the reducer orders by occurredAt
// and keeps ended runs ended. Never is free text on the screen read.
//
// TestPropertyTurnEnds plays random turns of each CLI, delivering hooks,
// transcript records, keys (lost ones too) and terminal statuses with
// their own delays: no ordering leaves a run waiting or running after its
// turn ended, and an ended run is followed by running only for a new
// turn's start.
//
// Every fused event records its evidence: the hook name says the source
// (runstate.SourceOfHook: transcript, keystroke, terminal), the message
// holds the raw signal (the key as a Go string, the transcript record's
// text, the OSC sequence), occurredAt the time it was seen; `muster
// explain` shows the three. An interrupt by the user's own key or denial
// opens no attention item (interrupted never does) and resolves the open
// approval or input item, because the run moved on. After a key answers a
// dialog, Run reads the panes every 200 ms for 5 s, so that a "No" picked
// with the arrows and Enter, known only from the transcript, shows within
// 2 s. Evidence is queued (Observe, Input never block) and fused by one
// goroutine of Run, so a key is applied within a millisecond of reaching
// the pane (measured: 30–730 µs), whatever a poll is reading.
//
// # Model and context
//
// The transcript a turn reader follows also says which model answered
// and how full its context is (provider.TurnUsage records: Claude Code's
// message.model and usage, Codex's turn_context and token_count, Gemini
// CLI's gemini messages). They go to Config.Listener.UsageReported as
// read, history included (the latest figure is the current context), and
// the zero Usage when the agent leaves the foreground: the daemon shows
// them in `muster ls --json` and the dashboard. Nothing is estimated.
//
// # Wiring (daemon)
//
//	est := native.New(native.Config{
//		Events: d, Runs: d, // engine.Emit and engine.SurfaceCurrentRun
//		Listener: d,        // records a proven id, attention, usage
//		Logger: logger, Env: transcriptEnv,
//	})
//	g.Go(func() error { return est.Run(ctx) })
//	// after pane.Start and engine.RegisterSurface; injected: the launch got
//	// `--settings` hooks (daemon.injectHooks changed argv):
//	est.SurfaceStarted(native.Surface{ID: surfaceID, SessionID: rec.ID, Provider: rec.Provider,
//		PID: p.PID(), CWD: rec.CWD, ForegroundPGID: p.ForegroundPGID,
//		NativeID: func() string { return currentNativeID(rec.ID) }, HooksInjected: injected})
//	// in the pane's signal callback (reader goroutine):
//	est.Signals(surfaceID, sigs)
//	// when events.sock accepts a provider hook event for a surface (Codex: the routed one):
//	est.HookEventSeen(surfaceID, ev.Provider)
//	// for every write to the pane on the user's behalf (attach, send):
//	est.Input(surfaceID, data)
//	// in OnExit, before engine.CloseSurface:
//	est.SurfaceExited(ctx, surfaceID, code)
//
// # Cost
//
// One goroutine polls every surface once per Config.Poll (1 s): one ioctl
// and, while no agent is tracked, one small read of /proc/PID/cmdline per
// pane (on macOS, two sysctls); with an agent tracked, one stat of its
// transcript and a read of what was appended. BenchmarkPollIdleShells
// measures 50 idle panes at about 0.1% of a core.
//
// A followed transcript is also watched (fsnotify, one watch per file,
// made when Run first follows one): a write wakes the poll loop at once,
// at most every 100 ms, so a transcript record moves its run within
// milliseconds of being written rather than at the next poll (e2e/realcli
// measured the record's own timestamp to the state: Claude Code 1.06–1.45
// s with the 1 s poll, 0.28–0.45 s watched, most of it Claude's delay in
// writing its record; Codex 22–37 ms). An idle transcript costs nothing
// more.
package native
