// Package hookinstall is the engine behind `muster hooks setup|status|remove`
// (DESIGN.md §7): it installs, reports and removes Muster's hook entries in
// each provider's own configuration. For every provider it installs both the
// capture adapter (`muster hook capture --provider P --process-id "$PPID"`,
// on the session-start event) and the lifecycle helper (`muster hook event
// P`, on every lifecycle event of research/providers.md). It does not run
// hooks, talk to the daemon or print anything; the CLI does.
//
// # Providers
//
// Which file holds a provider's hooks, which events get entries, what an
// entry looks like and which provider settings turn hooks off are the
// provider's (provider.HookInstaller, in internal/provider/<name>): a JSON
// settings file (Claude Code, Codex, Gemini CLI, Cursor) or a plugin file
// of Muster's own (OpenCode, which has no command hooks). This package
// owns the editing, the markers, status and the backups, for every
// provider alike. SettingsJSON renders the same entries for a launch that
// takes settings on its command line (provider.Launch.HookArgs).
//
// # Our entries
//
// Every command we install ends with the shell comment "# muster-hooks:v1"
// (Marker). A handler whose command ends with such a comment is ours, in any
// position; nothing else is. In Claude, Codex and Gemini files our handlers
// sit in groups of their own appended at the end of each event's array (so
// that Codex's index-based trust records of the user's hooks stay valid);
// in Cursor files they are appended handlers. Status compares our entries
// with what this muster would write: installed, outdated (older or newer
// marker version, another binary path, missing or different entries, or
// ours mixed into a foreign group) or not installed. The commands carry no
// other state, so SettingsJSON (for `claude --settings`) yields
// byte-identical commands and Claude Code runs each only once when both
// sources are present.
//
// # Edits
//
// Files are edited by splicing text at byte offsets found by a small parser
// (comments are allowed for Gemini), so keys, key order, formatting,
// comments, unknown entries, other tools' hooks and CRLF line ends stay as
// they were; new text copies the file's indentation, line ends and key
// separator. A file that does not parse, or whose "hooks" has the wrong
// shape, is refused with a one-line error and left untouched. Writes go to a
// temporary file in the same directory that is synced, given the old mode
// and renamed over the target; a symlinked config is edited at its target;
// a file that changed since it was read is not overwritten.
//
// Before the first change to an existing file that holds none of our
// entries, its bytes are saved once as <file>.muster-backup (never
// overwritten). Setup is idempotent: when everything is installed it writes
// nothing, even if the provider has reformatted the file since. Remove
// deletes our entries and then prunes the containers that became empty and
// did not exist in the backup (event arrays, "hooks", Cursor's "version");
// when the result equals the backup, the backup's exact bytes are written,
// so setup → setup → remove returns the original bytes. A file muster
// created (no backup) is deleted again once nothing but "{}" is left; a
// created directory is left in place. Without a backup, empty containers
// the user added after setup may be pruned too, and an empty container with
// only white space inside comes back as {} or [].
package hookinstall
