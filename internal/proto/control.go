package proto

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"time"
)

// This file is the control API of control.sock, the whole of it: the
// version exchange, the envelope, the error codes, the table of ops (each
// with its argument and result types, who may call it and what it can fail
// with), then every argument and result type in table order. The daemon
// serves the table through one Mux (mux.go); the CLI calls only ops in it.
//
// A connection carries JSON lines. The client's first request is hello,
// carrying its protocol version; a daemon that speaks it answers with it
// (a newer daemon speaks older protocols down to its MinControlVersion),
// one that does not refuses it with CodeVersion and a line to show as is,
// and the client, when it speaks the daemon's protocol (status says which),
// says hello again with that one. Until hello succeeds, only the
// frozen ops (hello, status, stop) are served: their shape never changes,
// so that `muster daemon stop` of any version stops a daemon of any other.
// After hello, each request gets one Response, and more requests may
// follow, except where an op's Flow says otherwise. A client that hangs up
// (or shuts its write side) before its response cancels its request: a
// send types no Enter, a resume launches no further session.

// ControlVersion is the control protocol this binary speaks; it is bumped
// when control.sock changes incompatibly. Version 1 had no hello; 3 added
// op watch (the dashboard needs it) and attach from a pane to the sessions
// it started; 4 moved copy mode into the daemon that holds an attached
// terminal (a client of 3 would be handed copy mode back, or meet
// HandbackOpen it cannot serve). A build with the tag
// muster_previous_protocol speaks the one before (previous_protocol.go),
// for the version-skew tests.
const ControlVersion = 4 - previousProtocol

// MinControlVersion is the oldest control protocol this binary still
// speaks, as a client or a daemon: hello settles each connection on the
// newer of the two sides' protocols that both speak, so that a host's
// daemon left at an older version keeps serving what did not change.
// From 3 to 4 only the attach with a passed terminal changed (its
// handbacks), so a connection at 3 attaches through the client
// (DirectAttach) and every other op is the same.
const MinControlVersion = 3

// DirectAttach reports whether a connection at protocol may pass the
// user's terminal with an attach (AttachArgs.Terminal): the handbacks of
// the daemon that holds it are those of protocol 4 on.
func DirectAttach(protocol int) bool { return protocol >= 4 }

// Speaks reports whether this binary speaks protocol (another side's).
func Speaks(protocol int) bool {
	return protocol >= MinControlVersion && protocol <= ControlVersion
}

// MaxControlRequest bounds one JSON request line on control.sock.
const MaxControlRequest = 1 << 20

// Request is one JSON line on control.sock.
type Request struct {
	Op   string          `json:"op"`
	Args json.RawMessage `json:"args,omitempty"`
}

// Response answers a Request.
type Response struct {
	OK     bool            `json:"ok"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *Error          `json:"error,omitempty"`
}

// Error is a failure the CLI can show as-is: a stable code and a one-line
// message, with an optional hint saying what to do.
type Error struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Hint    string `json:"hint,omitempty"`
}

func (e *Error) Error() string { return e.Message }

// Errorf builds an *Error.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Stable control error codes.
const (
	CodeBadRequest  = "bad_request" // malformed JSON, arguments of the wrong shape, a missing name
	CodeNotFound    = "not_found"   // no such session or attention item
	CodeConflict    = "conflict"    // the name is taken, the id prefix is ambiguous, it already runs
	CodeInvalid     = "invalid"     // well-formed but unacceptable: a bad name, directory or template
	CodeInternal    = "internal"    // the daemon failed (the store, the emulator)
	CodeUnsupported = "unsupported" // an unknown op, or one this daemon cannot serve yet
	CodeExited      = "exited"      // the session's process is not running
	// CodeForbidden refuses a request because of who sent it: a process
	// inside a Muster pane asked to drive another pane, to stop the
	// daemon, to acknowledge every attention item, to resume or to
	// attach. Run the command from a terminal outside Muster.
	CodeForbidden = "forbidden"
	// CodeUnauthorized refuses a request that needs a pane's event
	// capability (native_capture) and did not carry the right one.
	CodeUnauthorized = "unauthorized"
	// CodeBusy means the daemon holds as many control connections as it
	// allows and none of them could be dropped; retry shortly.
	CodeBusy = "busy"
	// CodeVersion means the client and the daemon speak different control
	// protocols; the message says which and to run `muster daemon restart`.
	CodeVersion = "version_mismatch"
	// CodeLimit refuses a request that would take the daemon past a
	// limit of config.toml's [limits]: panes a pane may start, emulator
	// cells of every live pane. Nothing changed; the message names the limit.
	CodeLimit = "limit"
	// CodeBlocked refuses a confirmed send to an agent that waits for
	// approval or sits in a dialog that would swallow the text; nothing
	// was typed, and the message names the state.
	CodeBlocked = "blocked"
	// CodeTimeout: what the op waited for was not seen in time.
	CodeTimeout = "timeout"
	// CodeHostDown: host.call could not reach the host over its relay;
	// the message says the host's state (unreachable, connecting,
	// needs-attention) and why, as internal/host's Error does, and the
	// hint is the ssh command to run once by hand, if any.
	CodeHostDown = "host_down"
	// CodeNoRelay: host.call cannot relay to that host (its muster has no
	// relay command, or its daemon speaks no protocol of ours); the
	// caller runs the host's muster over ssh instead.
	CodeNoRelay = "no_relay"
)

// CommonCodes can come back from any op: a malformed request, a daemon
// failure, no room for the connection, or an op other than a frozen one
// sent before hello. Ops that are not ReadOnly can also be Forbidden.
var CommonCodes = []string{CodeBadRequest, CodeInternal, CodeBusy, CodeVersion}

// Op names.
const (
	OpHello         = "hello"          // the version exchange; first on every connection
	OpStatus        = "status"         // the daemon's pid, version and counts
	OpStop          = "stop"           // stop the daemon and every pane
	OpRestart       = "restart"        // hand every pane to a new daemon image
	OpList          = "ls"             // every session
	OpNew           = "new"            // start a session
	OpSend          = "send"           // type text (and Enter) into a pane
	OpCapture       = "capture"        // read a pane's screen
	OpKill          = "kill"           // end a session's process and forget the session
	OpRename        = "rename"         // rename a session
	OpAttach        = "attach"         // switch the connection to the pane's frames (frame.go)
	OpResume        = "resume"         // relaunch sessions whose process died with a daemon
	OpNativeCapture = "native_capture" // record the provider's own session id (`muster hook capture`)
	OpAttention     = "attention"      // the attention drawer
	OpAck           = "ack"            // resolve attention items
	OpWait          = "wait"           // block until sessions reach run states
	OpExplain       = "explain"        // why a session is in its run state
	OpPreview       = "preview"        // a pane's screen, pushed again whenever it changes
	OpWatch         = "watch"          // the sessions and the attention drawer, pushed again whenever they change
	OpSendConfirm   = "send_confirm"   // type a prompt and Enter, answer once the agent was seen to take it
	OpWorktrees     = "worktrees"      // the git worktrees sessions were started in
	OpWorktreeRm    = "worktree_rm"    // remove a worktree nothing would be lost with
	OpSetupConsent  = "setup_consent"  // consent to a repository's worktree setup files
	OpAutocontinue  = "autocontinue"   // continue a session at its usage limit's reset, or not
	OpHostCall      = "host.call"      // one op of another host's daemon, over the relay this daemon holds to it
)

// Access says who may call an op. Processes inside a Muster pane may not
// drive other panes (README "Security"; internal/daemon/peer.go decides
// who is inside which pane); processes outside every pane may call any op.
type Access int

const (
	// ReadOnly ops change nothing; any peer may call them.
	ReadOnly Access = iota + 1
	// OwnPane ops act on one session: a peer inside a pane may call them
	// for its own pane and the sessions started from it (new records the
	// new session as the pane's child; ack checks each item's session;
	// native_capture also needs the pane's capability; attach refuses the
	// caller's own pane, which would feed the pane its own output).
	OwnPane
	// Outside ops are refused to every peer inside a pane.
	Outside
)

func (a Access) String() string {
	switch a {
	case ReadOnly:
		return "read-only"
	case OwnPane:
		return "own-pane"
	case Outside:
		return "outside-only"
	}
	return fmt.Sprintf("Access(%d)", int(a))
}

// Flow says what the connection does after an op's response.
type Flow int

const (
	// Reply: one response; the connection may carry further requests.
	Reply Flow = iota + 1
	// Last: one response, and the connection ends (stop).
	Last
	// Blocking: one response, once what the op waits for holds, which may
	// take as long as the client stays; the connection ends with it, and
	// the op is cancelled when the client hangs up (wait).
	Blocking
	// Frames: after a successful response the connection carries attach
	// frames both ways (frame.go) until either side leaves.
	Frames
	// Stream: after a successful response the daemon sends more
	// Responses of the op's result type, one JSON line each, until either
	// side leaves; the client sends nothing further (preview, watch).
	Stream
	// Handshake: hello, which the connection itself answers.
	Handshake
)

// None is the argument or result type of an op that takes or returns
// nothing: its arguments are ignored and its result is left out.
type None struct{}

// Op describes one control op.
type Op struct {
	Name   string
	Args   reflect.Type // None: takes no arguments
	Result reflect.Type // None: answers with no result
	Access Access
	Flow   Flow
	// Frozen ops are served before hello and never change shape.
	Frozen bool
	// Codes are what the op can fail with besides CommonCodes (and
	// CodeForbidden unless it is ReadOnly).
	Codes []string
}

// MayReturn reports whether the op can fail with code.
func (o Op) MayReturn(code string) bool {
	return slices.Contains(CommonCodes, code) || slices.Contains(o.Codes, code) ||
		code == CodeForbidden && o.Access != ReadOnly
}

func t[T any]() reflect.Type { return reflect.TypeFor[T]() }

// Ops is the control API. Absent or null arguments decode as the zero
// value of the op's argument type; each op checks what it needs.
var Ops = []Op{
	// name, arguments, result, who may call it, flow, frozen, and the codes
	// it can fail with besides CommonCodes:
	{OpHello, t[Hello](), t[HelloResult](), ReadOnly, Handshake, true, nil},
	{OpStatus, t[None](), t[DaemonStatus](), ReadOnly, Reply, true, nil},
	{OpStop, t[None](), t[None](), Outside, Last, true, nil},
	{OpRestart, t[RestartArgs](), t[None](), Outside, Last, true, []string{CodeInvalid, CodeUnsupported}},
	{OpList, t[None](), t[[]SessionInfo](), ReadOnly, Reply, false, nil},
	{OpNew, t[NewArgs](), t[SessionInfo](), OwnPane, Reply, false, []string{CodeInvalid, CodeConflict, CodeLimit}},
	{OpSend, t[SendArgs](), t[None](), OwnPane, Reply, false, []string{CodeNotFound, CodeConflict, CodeExited}},
	{OpCapture, t[CaptureArgs](), t[CaptureResult](), OwnPane, Reply, false, []string{CodeNotFound, CodeConflict}},
	{OpKill, t[Target](), t[None](), OwnPane, Reply, false, []string{CodeNotFound, CodeConflict}},
	{OpRename, t[RenameArgs](), t[None](), OwnPane, Reply, false, []string{CodeInvalid, CodeNotFound, CodeConflict}},
	{OpAttach, t[AttachArgs](), t[AttachResult](), OwnPane, Frames, false, []string{CodeInvalid, CodeNotFound, CodeConflict}},
	{OpResume, t[ResumeArgs](), t[[]ResumeOutcome](), Outside, Reply, false, []string{CodeInvalid, CodeNotFound, CodeConflict}},
	{OpNativeCapture, t[NativeCaptureArgs](), t[None](), OwnPane, Reply, false, []string{CodeInvalid, CodeNotFound, CodeUnauthorized, CodeExited}},
	{OpSendConfirm, t[SendConfirmArgs](), t[SendConfirmResult](), OwnPane, Blocking, false, []string{CodeNotFound, CodeConflict, CodeExited, CodeBlocked, CodeTimeout}},
	{OpWorktrees, t[None](), t[[]WorktreeInfo](), ReadOnly, Reply, false, nil},
	{OpWorktreeRm, t[WorktreeRmArgs](), t[WorktreeRemoved](), Outside, Reply, false, []string{CodeNotFound, CodeConflict, CodeInvalid}},
	{OpSetupConsent, t[SetupConsentArgs](), t[None](), Outside, Reply, false, []string{CodeInvalid, CodeConflict}},
	{OpAutocontinue, t[AutocontinueArgs](), t[None](), OwnPane, Reply, false, []string{CodeNotFound, CodeConflict}},
	{OpAttention, t[AttentionArgs](), t[[]AttentionItem](), ReadOnly, Reply, false, []string{CodeUnsupported}},
	{OpAck, t[AckArgs](), t[AckResult](), OwnPane, Reply, false, []string{CodeNotFound, CodeUnsupported}},
	{OpWait, t[WaitArgs](), t[WaitResult](), ReadOnly, Blocking, false, []string{CodeInvalid, CodeNotFound, CodeUnsupported}},
	{OpExplain, t[Target](), t[Explanation](), ReadOnly, Reply, false, []string{CodeNotFound, CodeUnsupported}},
	{OpPreview, t[PreviewArgs](), t[PreviewScreen](), OwnPane, Stream, false, []string{CodeNotFound, CodeConflict, CodeUnsupported}},
	{OpWatch, t[None](), t[WatchUpdate](), ReadOnly, Stream, false, []string{CodeUnsupported}},
	// OwnPane: a peer inside a pane may relay the host's read-only ops
	// only (the handler checks the inner op); the inner op's own codes
	// pass through.
	{OpHostCall, t[HostCallArgs](), t[json.RawMessage](), OwnPane, Reply, false, []string{CodeInvalid, CodeNotFound, CodeUnsupported, CodeHostDown, CodeNoRelay,
		CodeConflict, CodeExited, CodeLimit, CodeUnauthorized}},
}

var opIndex = func() map[string]Op {
	m := make(map[string]Op, len(Ops))
	for _, o := range Ops {
		m[o.Name] = o
	}
	return m
}()

// Lookup finds an op of the table by name.
func Lookup(name string) (Op, bool) {
	o, ok := opIndex[name]
	return o, ok
}

// VersionMismatch is the one line shown when a client and the running
// daemon speak different control protocols. An empty version is one the
// other side did not say (a client from before hello, or a daemon that
// did not answer status).
func VersionMismatch(daemonVersion string, daemonProtocol int, clientVersion string, clientProtocol int) *Error {
	return &Error{Code: CodeVersion, Message: fmt.Sprintf(
		"the running daemon is %s, this client is %s; run `muster daemon restart` to replace it, keeping every pane",
		describeVersion(daemonVersion, daemonProtocol, clientProtocol),
		describeVersion(clientVersion, clientProtocol, daemonProtocol))}
}

func describeVersion(v string, protocol, other int) string {
	switch {
	case v != "":
		v = "version " + v
	case protocol < other:
		v = "older"
	case protocol > other:
		v = "newer"
	default:
		v = "of an unknown version"
	}
	return fmt.Sprintf("%s (control protocol %d)", v, protocol)
}

// Hello are the arguments of op "hello".
type Hello struct {
	Protocol int    `json:"protocol"` // the client's ControlVersion, or an older one it speaks (MinControlVersion)
	Version  string `json:"version"`  // the client's binary version, for the mismatch message
}

// HelloResult answers op "hello".
type HelloResult struct {
	Protocol int    `json:"protocol"`
	Version  string `json:"version"` // the daemon's binary version
	PID      int    `json:"pid"`
}

// DaemonStatus answers op "status".
type DaemonStatus struct {
	PID       int    `json:"pid"`
	Version   string `json:"version"`
	StartedAt string `json:"started_at"`
	Home      string `json:"home"`
	Sessions  int    `json:"sessions"`
	Panes     int    `json:"panes"`
	// Protocol is the daemon's ControlVersion; 0 from a daemon of
	// protocol 1, which did not report it.
	Protocol int `json:"protocol,omitempty"`
	// Handoff is the last restart that ended in this daemon image: the
	// new image's report, or the old image's when it took its panes back.
	Handoff *HandoffReport `json:"handoff,omitempty"`
	// BackgroundAgents says that a CLI's own supervisor may run agents
	// for the daemon's user (provider.BackgroundLister): `muster ls` lists
	// them beside the panes by running that CLI, which the daemon does
	// not, so a host's listing is then taken through its muster.
	BackgroundAgents bool `json:"background_agents,omitempty"`
	// Caller is where the process that asked runs when that is inside a
	// pane, as this daemon's rules for callers inside panes place it: a
	// command that would drive a session on another host over ssh asks,
	// so that a pane drives no other host's sessions there either.
	Caller *StatusCaller `json:"caller,omitempty"`
}

// StatusCaller is a caller inside a pane (DaemonStatus.Caller).
type StatusCaller struct {
	Pane    string `json:"pane,omitempty"`    // the pane's session name, "" when unidentified
	Control bool   `json:"control,omitempty"` // the pane is the user's own (NewArgs.Control)
}

// RestartArgs are the arguments of op "restart": the daemon re-executes
// itself as Executable (absolute), which must adopt its panes; Token
// names the restart in the HandoffReport that follows.
type RestartArgs struct {
	Executable string `json:"executable"`
	Token      string `json:"token"`
}

// HandoffReport says how a restart ended (DaemonStatus.Handoff).
type HandoffReport struct {
	Token       string `json:"token"`
	FromVersion string `json:"from_version"`
	// Panes is how many panes the image took over.
	Panes int `json:"panes"`
	// Refused is why the new image did not take the panes, and the old
	// one took them back; empty when it did.
	Refused string `json:"refused,omitempty"`
	// Millis is the time from the request to the panes' readers running
	// again.
	Millis int64 `json:"millis"`
}

// SessionInfo is one row of `muster ls --json`; op "ls" answers a list of
// them. Fields are only ever added.
type SessionInfo struct {
	ID       string `json:"id"`
	Name     string `json:"name"`
	Provider string `json:"provider"`
	// Pane is the pane word: live | exited | restorable (vocabulary.go).
	Pane string `json:"pane"`
	// State is Pane in its older words (running for live), kept for
	// scripts that read it.
	State string `json:"state"`
	// Status is the one word for the session (SessionInfo.StatusWord).
	Status    string `json:"status"`
	PID       int    `json:"pid"`
	CWD       string `json:"cwd"`
	ExitCode  *int   `json:"exit_code"`
	CreatedAt string `json:"created_at"`
	Command   string `json:"command"`
	SurfaceID string `json:"surface_id"`
	Title     string `json:"title,omitempty"`
	Reason    string `json:"reason,omitempty"`

	NativeSessionID string  `json:"native_session_id"`
	NativeConfirmed bool    `json:"native_confirmed"`
	RunState        *string `json:"run_state"`
	RunID           *string `json:"run_id"`
	Attention       int     `json:"attention"`
	LastEventAt     *string `json:"last_event_at"`

	// Activity is what the terminal says the program is doing (seed 000):
	// working | waiting | attention, or "" when it says nothing.
	Activity         string  `json:"activity"`
	ActivitySince    *string `json:"activity_since"`
	ActivityEvidence string  `json:"activity_evidence,omitempty"`
	// ActivityPercent is the value (0..100) of the OSC 9;4 progress bar
	// while the activity is working; absent when the program shows none.
	ActivityPercent *int `json:"activity_percent,omitempty"`

	// Model is the model the session's agent last reported (a hook
	// payload, its transcript); "" when none did.
	Model string `json:"model,omitempty"`
	// ContextTokens is how many tokens the agent's context held at its
	// last reply, as its transcript reports it; ContextWindow the model's
	// window, from the provider's own report or a dated table of the
	// provider package. Zero is unknown: never estimated.
	ContextTokens int64 `json:"context_tokens,omitempty"`
	ContextWindow int64 `json:"context_window,omitempty"`
	// Control: the pane is the user's own (NewArgs.Control).
	Control bool `json:"control,omitempty"`
	// Clients is how many clients are attached to the pane now.
	Clients int `json:"clients,omitempty"`

	// What the pane's whole process tree costs at the daemon's last
	// sample (config.toml [cost]); absent while no sample has seen it.
	// CPUPercent is a share of one core over the last interval.
	RSSBytes   *int64   `json:"rss_bytes,omitempty"`
	PSSBytes   *int64   `json:"pss_bytes,omitempty"`
	CPUPercent *float64 `json:"cpu_percent,omitempty"`
	Processes  int      `json:"processes,omitempty"`
	// MemoryCeiling is the RSS past which the tree raises an attention
	// item (config.toml's cost.memory_ceiling or its session's); 0: none.
	MemoryCeiling int64 `json:"memory_ceiling,omitempty"`

	// Worktree is the git worktree the session was started in.
	Worktree *WorktreeInfo `json:"worktree,omitempty"`
	// LimitResetsAt is, while RunState is limited, when the agent said
	// its limit resets (RFC 3339); absent when it did not say.
	LimitResetsAt *string `json:"limit_resets_at,omitempty"`
	// ContinueAfterLimit: Muster sends the provider's continue when the
	// limit resets (NewArgs.ContinueAfterLimit, op autocontinue).
	ContinueAfterLimit bool `json:"continue_after_limit,omitempty"`

	// External is set on a row that is no pane of Muster's: an agent a
	// CLI's own supervisor runs (Claude Code's `claude --bg`), which
	// `muster ls` lists beside the panes. Such a row has Pane and State
	// PaneExternal, Status the CLI's word, and no surface.
	External *ExternalAgent `json:"external,omitempty"`
}

// PaneExternal is the pane word of a row for an agent Muster does not run
// (SessionInfo.External).
const PaneExternal = "external"

// ExternalAgent is what the CLI's supervisor says of an agent it runs.
type ExternalAgent struct {
	Supervisor string `json:"supervisor"` // the command that listed it: "claude agents"
	ID         string `json:"id"`         // the supervisor's id for it
	Status     string `json:"status"`     // the CLI's word for the process: busy, idle, …
	State      string `json:"state"`      // the CLI's word for the agent: working, …
	// Attach is the command that opens it in a terminal, joining the
	// running agent (never a second one on its conversation); `muster new
	// --cmd` with it opens it in a pane.
	Attach string `json:"attach"`
}

// AutocontinueArgs turn a session's continue after a usage limit on or
// off.
type AutocontinueArgs struct {
	Name string `json:"name"`
	On   bool   `json:"on"`
}

// HostCallArgs are the arguments of op "host.call": Op, with Args, as the
// daemon of Host (a host of config.toml) serves it. Only ops of flow
// Reply go this way: the relay carries one call at a time and no
// descriptor.
type HostCallArgs struct {
	Host string          `json:"host"`
	Op   string          `json:"op"`
	Args json.RawMessage `json:"args,omitempty"`
}

// Caller is a connection to a daemon that calls one op at a time (a
// *client.Client): a failure of the op itself is a *Error.
type Caller interface {
	Call(ctx context.Context, op string, args, out any) error
	Close() error
}

// NewArgs are the arguments of op "new".
type NewArgs struct {
	Name      string   `json:"name,omitempty"`
	Provider  string   `json:"provider,omitempty"`
	Dir       string   `json:"dir"`
	Cmd       string   `json:"cmd,omitempty"`        // shell command (--cmd)
	ResumeCmd string   `json:"resume_cmd,omitempty"` // custom resume template
	Args      []string `json:"args,omitempty"`       // after --
	// ResumeID reopens a past conversation of Provider (the dashboard's
	// history tab): the pane runs the provider's resume command for this
	// native id instead of starting a new conversation.
	ResumeID string            `json:"resume_id,omitempty"`
	Env      map[string]string `json:"env,omitempty"` // the caller's environment (SHELL, PATH, …)
	Cols     int               `json:"cols,omitempty"`
	Rows     int               `json:"rows,omitempty"`
	// Control makes the pane the user's own: its processes may drive
	// every session as the user may. Refused from inside a pane.
	Control bool `json:"control,omitempty"`
	// Worktree starts the session in a new git worktree of the
	// repository that holds Dir.
	Worktree *WorktreeArgs `json:"worktree,omitempty"`
	// ContinueAfterLimit has Muster send the provider's continue once
	// a usage limit the agent stopped at resets (nil: config.toml's
	// usage_limit.continue).
	ContinueAfterLimit *bool `json:"continue_after_limit,omitempty"`
}

// SendArgs are the arguments of op "send".
type SendArgs struct {
	Name  string `json:"name"`
	Text  string `json:"text"`
	Enter bool   `json:"enter,omitempty"`
}

// WorktreeArgs ask `new` for a git worktree.
type WorktreeArgs struct {
	// Branch is checked out in the worktree, made from the repository's
	// HEAD when it does not exist; "" is muster/NAME.
	Branch string `json:"branch,omitempty"`
}

// WorktreeInfo is a worktree a session was started in, and what removing
// it could lose (as last inspected; worktree_rm inspects again).
type WorktreeInfo struct {
	Path       string `json:"path"`
	Repo       string `json:"repo"`
	Branch     string `json:"branch"`
	BaseCommit string `json:"base_commit"`
	Session    string `json:"session"` // the owning session's name ("" once it is gone)
	SessionID  string `json:"session_id"`
	Live       bool   `json:"live"`   // a live pane runs in it
	Exists     bool   `json:"exists"` // the directory is there
	Dirty      int    `json:"dirty"`  // changed and untracked files
	Ahead      int    `json:"ahead"`  // commits since the base
	Unpushed   int    `json:"unpushed"`
	// Setup says, in new's answer, what became of the repository's setup
	// files: "ran", "none", or why they did not run.
	Setup string `json:"setup,omitempty"`
}

// WorktreeRmArgs name a worktree by its path or its session.
type WorktreeRmArgs struct {
	Target string `json:"target"`
	// Force removes a dirty or unpushed worktree (never a live one); an
	// unpushed branch is kept.
	Force bool `json:"force,omitempty"`
}

// WorktreeRemoved is what worktree_rm did.
type WorktreeRemoved struct {
	Path          string `json:"path"`
	Branch        string `json:"branch"`
	BranchDeleted bool   `json:"branch_deleted"`
}

// SetupConsentArgs consent to a repository's setup files as they are now:
// the daemon reads them again and records the consent only when their
// hash is still SHA256.
type SetupConsentArgs struct {
	Repo   string `json:"repo"`
	SHA256 string `json:"sha256"`
}

// SendConfirmArgs are the arguments of op "send_confirm": Text and Enter
// are typed as op "send" types them, once the agent is not blocked.
type SendConfirmArgs struct {
	Name string `json:"name"`
	Text string `json:"text"`
	// Force types even when the agent waits for approval or sits in a
	// dialog.
	Force bool `json:"force,omitempty"`
	// TimeoutMS bounds the wait for the agent to take the prompt (0:
	// 30 s).
	TimeoutMS int64 `json:"timeout_ms,omitempty"`
	// WaitDone also waits for the turn the prompt started to end.
	WaitDone bool `json:"wait_done,omitempty"`
}

// Evidence that an agent took a prompt.
const (
	// TookRunStarted: a new run started after the text was typed (a
	// hook, a transcript record or the native estimator said so).
	TookRunStarted = "run-started"
	// TookTerminalWorking: the pane's terminal said the program works
	// (OSC 9;4 progress, OSC 7501, a working title) after the text was
	// typed, before any run event.
	TookTerminalWorking = "terminal-working"
)

// SendConfirmResult says how the agent was seen to take the prompt and,
// with WaitDone, how the turn ended.
type SendConfirmResult struct {
	Took   string `json:"took"`   // TookRunStarted | TookTerminalWorking
	Detail string `json:"detail"` // the event or signal: "started from hook UserPromptSubmit (claude)"
	RunID  string `json:"run_id,omitempty"`
	// Forced: the agent was blocked and Force typed anyway; Blocked names
	// the state it was in.
	Forced  bool   `json:"forced,omitempty"`
	Blocked string `json:"blocked,omitempty"`
	// Outcome is, with WaitDone, the run's end: succeeded | failed |
	// interrupted | disconnected, "exited" when the pane did, or ended
	// when another run began first.
	Outcome string `json:"outcome,omitempty"`
}

// CaptureArgs are the arguments of op "capture".
type CaptureArgs struct {
	Name       string `json:"name"`
	ANSI       bool   `json:"ansi,omitempty"`
	Scrollback int    `json:"scrollback,omitempty"`
}

// CaptureResult carries the screen text.
type CaptureResult struct {
	Text string `json:"text"`
}

// Target names a session for ops that act on one (kill, explain).
type Target struct {
	Name string `json:"name"`
}

// RenameArgs are the arguments of op "rename".
type RenameArgs struct {
	Name    string `json:"name"`
	NewName string `json:"new_name"`
}

// AttachArgs are the arguments of op "attach".
type AttachArgs struct {
	Name     string `json:"name"`
	Cols     int    `json:"cols"`
	Rows     int    `json:"rows"`
	ReadOnly bool   `json:"read_only,omitempty"`
	// Terminal says the request passed the user's terminal (SCM_RIGHTS):
	// the daemon then writes the pane to it and reads its keys itself,
	// with no client process in between (AttachResult.Direct), until it
	// hands the terminal back (FrameHandback). The fields below say what
	// the daemon needs for that; a client that passes no terminal sends
	// none of them.
	Terminal bool `json:"terminal,omitempty"`
	// DetachKey and CopyKey are the client's keys (config.ParseKey
	// names); an empty CopyKey means copy mode has no key.
	DetachKey string `json:"detach_key,omitempty"`
	CopyKey   string `json:"copy_key,omitempty"`
	// Mouse lets the daemon take the user's mouse while the program has
	// not, for the wheel to open copy mode.
	Mouse bool `json:"mouse,omitempty"`
	// EscapeTimeMS is how long, in milliseconds, a read of the user's
	// keys that ends in the start of a sequence waits for the rest before
	// it is sent as typed; 0 means the default, a negative value none.
	EscapeTimeMS int `json:"escape_time_ms,omitempty"`
	// Hint is one line, safe to print, shown over the bottom row of the
	// first repaint.
	Hint string `json:"hint,omitempty"`
	// Notice asks to hear of other sessions' new attention items
	// (FrameNotice); nil for none.
	Notice *AttachNotice `json:"notice,omitempty"`
}

// MaxEscapeTimeMS bounds AttachArgs.EscapeTimeMS: a wait longer than
// tmux's default half second only delays Esc.
const MaxEscapeTimeMS = 500

// EscapeTime is the wait AttachArgs asks for, bounded.
func (a AttachArgs) EscapeTime() time.Duration {
	return EscapeTime(a.EscapeTimeMS)
}

// EscapeTime turns a configured escape time in milliseconds into the
// wait: 0 is the default (10 ms), a negative value no wait at all, and
// anything above MaxEscapeTimeMS is MaxEscapeTimeMS.
func EscapeTime(ms int) time.Duration {
	switch {
	case ms == 0:
		return DefaultEscapeTime
	case ms < 0:
		return 0
	case ms > MaxEscapeTimeMS:
		ms = MaxEscapeTimeMS
	}
	return time.Duration(ms) * time.Millisecond
}

// DefaultEscapeTime is how long a read that ends in the start of a
// sequence (ESC, ESC [, part of a mouse report) waits for the rest before
// it goes to the pane as typed, as tmux's escape-time, whose 500 ms
// default makes Esc in vim and "esc to interrupt" feel slow. A terminal
// writes one sequence in one write; 10 ms covers its being split by a
// slow link without a person noticing the wait.
const DefaultEscapeTime = 10 * time.Millisecond

// AttachResult answers op "attach", before frames start.
type AttachResult struct {
	Name     string `json:"name"`
	Exited   bool   `json:"exited"`
	ReadOnly bool   `json:"read_only"`
	// Direct: the daemon took the terminal the request passed; output
	// and snapshot frames do not come until it hands it back.
	Direct bool `json:"direct,omitempty"`
}

// Handback is the payload of FrameHandback: the daemon that held the
// user's terminal stopped writing to and reading from it, for the reason
// given, and the client has it. For HandbackOpen the client runs the
// user's pager (or, with Editor, their editor) on File, copy mode's text,
// then sends FrameResume: the daemon takes the terminal back into copy
// mode.
type Handback struct {
	Reason string `json:"reason"` // HandbackDetach, HandbackOpen or HandbackRestart
	File   string `json:"file,omitempty"`
	Editor bool   `json:"editor,omitempty"`
}

// The reasons of a Handback.
const (
	HandbackDetach = "detach" // the detach key, or the terminal ended
	HandbackOpen   = "open"   // copy mode's o (pager) or e (editor)
	// HandbackRestart: the daemon is restarting (op "restart"); the pane
	// runs on, and the client attaches again once the new image answers.
	HandbackRestart = "restart"
)

// ResumeArgs are the arguments of op "resume".
type ResumeArgs struct {
	Names []string `json:"names,omitempty"`
	All   bool     `json:"all,omitempty"`
	// SkipFailing applies --all's rules to Names: a session whose resume
	// failed too often or too recently is skipped, with the reason. The
	// CLI's --all resumes the restorable sessions one request each, to
	// print each as it comes back.
	SkipFailing bool              `json:"skip_failing,omitempty"`
	Env         map[string]string `json:"env,omitempty"`
	Cols        int               `json:"cols,omitempty"`
	Rows        int               `json:"rows,omitempty"`
}

// ResumeOutcome reports one session's resume; op "resume" answers a list.
type ResumeOutcome struct {
	Name    string   `json:"name"`
	Resumed bool     `json:"resumed"`
	Argv    []string `json:"argv,omitempty"`
	Reason  string   `json:"reason,omitempty"`
	// NewConversation: the agent came back without its conversation,
	// because no id of it was ever captured (its hooks never ran and
	// nothing proved its transcript).
	NewConversation bool `json:"new_conversation,omitempty"`
}

// NativeCaptureArgs are the arguments of op "native_capture", sent by
// `muster hook capture` from inside a pane.
type NativeCaptureArgs struct {
	SessionID string `json:"session_id"` // MUSTER_AGENT_SESSION_ID
	// Capability is the pane's MUSTER_EVENT_CAPABILITY: the proof that the
	// request comes from inside the session's live pane. It is never
	// logged or echoed.
	Capability string `json:"capability"`
	Provider   string `json:"provider"`
	NativeID   string `json:"native_id"`
	PID        int    `json:"pid"`
	PPID       int    `json:"ppid"`
	Event      string `json:"event,omitempty"`
	Source     string `json:"source,omitempty"`
}

// The event engine's ops follow: attention, ack, wait, explain. Times are
// RFC 3339 UTC strings.

// AttentionArgs are the arguments of op "attention".
type AttentionArgs struct {
	All bool `json:"all,omitempty"` // include items resolved within the last 24 hours
}

// AttentionItem is one entry of the attention drawer.
type AttentionItem struct {
	ID          int64   `json:"id"`
	SessionID   string  `json:"session_id"`
	SessionName string  `json:"session_name"`
	SurfaceID   string  `json:"surface_id"`
	RunID       string  `json:"run_id"`
	Provider    string  `json:"provider"`
	Reason      string  `json:"reason"` // approval-requested | input-requested | failed | disconnected | succeeded | notification (a terminal notification or bell; no run)
	Message     string  `json:"message"`
	EventID     string  `json:"event_id"`
	OpenedAt    string  `json:"opened_at"`
	Open        bool    `json:"open"`
	ResolvedAt  *string `json:"resolved_at"`
	Resolution  string  `json:"resolution,omitempty"`
	// Host is the host (muster host add) whose daemon holds the item,
	// "" for this machine's; the CLI fills it when it asks every host.
	Host string `json:"host,omitempty"`
}

// AckArgs are the arguments of op "ack": some item ids, or all open items.
type AckArgs struct {
	IDs []int64 `json:"ids,omitempty"`
	All bool    `json:"all,omitempty"`
}

// AckResult lists what op "ack" resolved and what was already resolved.
type AckResult struct {
	Acknowledged []int64 `json:"acknowledged"`
	Already      []int64 `json:"already"`
}

// WaitArgs are the arguments of op "wait"; it is answered once the states
// are reached (ExpandWaitStates reads Until).
type WaitArgs struct {
	Names     []string `json:"names"`
	Until     []string `json:"until"`                // run states and groups
	TimeoutMS int64    `json:"timeout_ms,omitempty"` // 0: no timeout
	Any       bool     `json:"any,omitempty"`        // one session suffices instead of all
}

// Wait outcomes.
const (
	WaitReached = "reached"
	WaitTimeout = "timeout"
	WaitGone    = "gone"
)

// WaitResult answers op "wait".
type WaitResult struct {
	Status   string        `json:"status"` // reached | timeout | gone
	Sessions []WaitSession `json:"sessions"`
}

// WaitSession is one waited-for session as the wait ended.
type WaitSession struct {
	Name      string `json:"name"`
	SessionID string `json:"session_id"`
	State     string `json:"state"`              // derived run state; "" when no run is known
	Terminal  string `json:"terminal,omitempty"` // under idle: the terminal state it follows
	RunID     string `json:"run_id,omitempty"`
	Attention int    `json:"attention"`
	Reached   bool   `json:"reached"`
	Gone      bool   `json:"gone,omitempty"`
	// Pane is the session's pane: running, exited or restorable ("" when
	// the daemon cannot say). An exited or restorable pane satisfies done.
	Pane     string `json:"pane,omitempty"`
	ExitCode *int   `json:"exit_code,omitempty"` // the pane's exit status, once exited
}

// Explanation answers op "explain": why a session is in its state.
type Explanation struct {
	SessionID       string          `json:"session_id"`
	Name            string          `json:"name"`
	State           *string         `json:"run_state"`
	Terminal        string          `json:"terminal,omitempty"`
	IdleAt          *string         `json:"idle_at,omitempty"`
	RunID           *string         `json:"run_id"`
	RunStartedAt    *string         `json:"run_started_at,omitempty"`
	RunEndedAt      *string         `json:"run_ended_at,omitempty"`
	ImpliedStart    bool            `json:"implied_start,omitempty"`
	NativeSessionID string          `json:"native_session_id,omitempty"`
	SurfaceID       string          `json:"surface_id,omitempty"`
	Because         *Evidence       `json:"because"`
	Last            *Evidence       `json:"last"`
	Attention       []AttentionItem `json:"attention"`
	Events          []EventRecord   `json:"events"`
	// Activity is what the pane's terminal says beside the run state (seed
	// 000, "Activity and attention"); null when the session has no live pane.
	Activity *Activity `json:"activity"`
	// Cost is what the pane's process tree costs at the last sample;
	// absent when it has no live pane or none was taken.
	Cost *ProcessCost `json:"cost,omitempty"`
	// Limit says the run stopped at its provider's usage or rate limit
	// (run state limited), from which evidence, and when it resets.
	Limit *Limit `json:"limit,omitempty"`
}

// Limit is an agent stopped at its provider's usage or rate limit.
type Limit struct {
	ResetsAt string `json:"resets_at,omitempty"` // RFC 3339; absent when the agent did not say
	// Evidence names the event that said so: its kind, source and hook.
	Evidence string `json:"evidence"`
	Message  string `json:"message"`
}

// ProcessCost is one sample of a pane's whole process tree.
type ProcessCost struct {
	RSSBytes   int64    `json:"rss_bytes"`
	PSSBytes   int64    `json:"pss_bytes,omitempty"` // 0: unreadable or not read yet
	CPUPercent *float64 `json:"cpu_percent"`         // of one core; null before a second sample
	Processes  int      `json:"processes"`
	// MemoryCeiling is the RSS that raises an attention item (0: none).
	MemoryCeiling int64  `json:"memory_ceiling,omitempty"`
	SampledAt     string `json:"sampled_at"`
	// Evidence names what was read: the files of every process in the
	// tree, attributed by its parent chain to the pane's process.
	Evidence string `json:"evidence"`
}

// Activity is what a pane's terminal signals say its program is doing, and
// the signal that said it.
type Activity struct {
	State        string `json:"state"`                  // working | waiting | attention | "" (nothing known)
	Since        string `json:"since,omitempty"`        // when State was entered
	Evidence     string `json:"evidence,omitempty"`     // the raw signal: "OSC 9;4;3;", "BEL", "OSC 7501;state=idle:app=claude-code"
	Notification string `json:"notification,omitempty"` // the text of a request for attention
	// Recent lists the pane's last activity signals, oldest first, whether
	// or not they changed State.
	Recent []ActivitySignal `json:"recent,omitempty"`
	// Skipped notes the transcript files skipped as hostile while
	// following the pane's agent (a FIFO, a socket, a symbolic link or
	// its loop, a line over the size limit), newest last.
	Skipped []string `json:"skipped,omitempty"`
}

// ActivitySignal is one activity signal a pane's terminal sent.
type ActivitySignal struct {
	At       string `json:"at"`
	Evidence string `json:"evidence"`
}

// Evidence is the provenance of a run state.
type Evidence struct {
	EventID    string `json:"event_id"`
	Kind       string `json:"kind"`
	HookName   string `json:"hook_name,omitempty"`
	Provider   string `json:"provider"`
	Source     string `json:"source"` // hook | sweep | surface | native | transcript | keystroke | terminal
	Message    string `json:"message,omitempty"`
	OccurredAt string `json:"occurred_at"`
	ReceivedAt string `json:"received_at"`
}

// EventRecord is one stored event as explain lists it.
type EventRecord struct {
	Seq   int64  `json:"seq"`
	RunID string `json:"run_id"`
	Evidence
	Effect string `json:"effect"` // applied | confirmed | late | final
}

// PreviewArgs are the arguments of op "preview".
type PreviewArgs struct {
	Name string `json:"name"`
}

// PreviewScreen is one push of op "preview": the pane's screen as its
// emulator holds it, with SGR styling (text from the program: sanitize it
// before printing), sent first at once and then whenever the screen
// changes, at most every MinPreviewInterval. The stream ends after a push
// with Exited set, or when the session goes away.
type PreviewScreen struct {
	Name      string   `json:"name"`
	SurfaceID string   `json:"surface_id"`
	Cols      int      `json:"cols"`
	Rows      int      `json:"rows"`
	Lines     []string `json:"lines"` // trailing blank rows left out
	Exited    bool     `json:"exited,omitempty"`
	ExitCode  *int     `json:"exit_code,omitempty"`
}

// MinPreviewInterval spaces the pushes of one preview stream: a human
// reads no faster, and a pane streaming output would otherwise cost a
// screen render per chunk.
const MinPreviewInterval = 100 * time.Millisecond

// WatchUpdate is one push of op "watch", which feeds the dashboard: the
// first carries both lists, and each later one the lists that changed
// since the push before it, whole; a list that did not change is left out
// (absent, which decodes as nil, while an empty list is []). Sessions are
// op "ls"'s rows, Attention op "attention"'s items with all set: the open
// ones and those resolved in the last 24 hours, oldest first.
//
// The daemon pushes as things happen (an event, a new, exited, renamed or
// killed session, a pane's activity or title), at most every
// MinWatchInterval, so that a burst of changes costs one push. Pushes never
// queue: a client still reading the last one when the next is due gets the
// state as it is once it has read it, and one that does not read for
// longer than the daemon's write timeout is dropped; reconnecting gives a
// full first push again, which is also how a client resyncs after a daemon
// restart.
type WatchUpdate struct {
	Sessions  []SessionInfo   `json:"sessions,omitzero"`
	Attention []AttentionItem `json:"attention,omitzero"`
}

// MinWatchInterval spaces the pushes of one watch stream.
const MinWatchInterval = 100 * time.Millisecond
