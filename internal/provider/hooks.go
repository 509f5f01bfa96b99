package provider

import (
	"github.com/musterhq/muster/internal/provider/hookmap"
	"github.com/musterhq/muster/internal/transcript"
)

// HookInstaller is a provider whose hooks `muster hooks setup` installs
// (internal/hookinstall edits the file; the provider says which file and
// what goes in it).
type HookInstaller interface {
	Provider
	HookInstall() HookInstall
}

// HookInstall describes where and how a provider's hooks are installed.
// Exactly one of JSON and Plugin is set.
type HookInstall struct {
	// Config returns the file setup edits; an error when it cannot be
	// trusted for writing (a relative directory in the environment, no
	// absolute home).
	Config func(env transcript.Env) (string, error)
	// JSON describes hooks kept in the provider's JSON settings file.
	JSON *HookJSON
	// Plugin describes a plugin file of Muster's own.
	Plugin *HookPlugin
	// SetupNotes are what the user must know after a setup that changed
	// the file.
	SetupNotes []string
	// Notes reports provider settings that keep installed hooks from
	// running. settings is the settings file with its comments blanked, ""
	// when there is none. Nil when there are none to check.
	Notes func(env transcript.Env, settings string) []string
}

// HookJSON is a JSON settings file whose "hooks" object maps event names
// to arrays: of groups, each with its own "hooks" array of handlers, or of
// handlers (Flat).
type HookJSON struct {
	JSONC   bool // the provider reads the file with comments stripped
	Flat    bool // event arrays hold handlers, not groups
	Version bool // the file needs "version": 1 at the top
	Events  []HookEvent
	// Entries returns what setup appends to the array of ev: values of
	// type Object, []any, string, int or bool. cmds are the commands to
	// run, the capture command first when ev.Capture.
	Entries func(ev HookEvent, cmds []string) []any
}

// HookEvent is one provider hook event Muster installs into.
type HookEvent struct {
	Name    string
	Capture bool // also install the capture command (`muster hook capture`)
	Timeout int  // in the provider's unit; 0 means the provider default
}

// Object is a JSON object whose keys keep their order.
type Object []Field

// Field is one member of an Object.
type Field struct {
	Key   string
	Value any
}

// HookPlugin is a plugin file that runs inside the provider and spawns
// muster itself, for a provider without command hooks.
type HookPlugin struct {
	// Source is the file for musterPath. Its first line starts with "// "
	// and marker, by which status and remove know the file is Muster's.
	Source func(musterPath, marker string) string
	// Binary is the part of Source that names musterPath, so that status
	// can tell a plugin of another binary from an edited one.
	Binary func(musterPath string) string
	// CreateNotes are what the user must know after the file was created.
	CreateNotes []string
}

// HookMapper is a provider whose hook payloads the hook helper maps. The
// mapping lives in a light subpackage of the provider
// (internal/provider/<name>/<name>hook, standard library only) registered
// in internal/provider/all/hooks, because the hook helper, which agents run
// on every hook, cannot link the rest of the provider.
type HookMapper interface {
	Provider
	HookMapping() *hookmap.Mapping
}

// NativeCapturer is a provider whose own session-start hook payload may be
// piped to `muster hook capture` unchanged: its session id is the
// payload's "session_id" or "sessionId" (internal/nativeid). Every provider
// may send the canonical event.
type NativeCapturer interface {
	Provider
	CapturesNativePayload()
}
