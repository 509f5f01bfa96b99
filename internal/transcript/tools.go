package transcript

// Canonical tool names. Providers map their own names onto these so that
// analytics count the same action once across providers.
const (
	ToolBash      = "Bash"
	ToolEdit      = "Edit"
	ToolMultiEdit = "MultiEdit"
	ToolWrite     = "Write"
	ToolRead      = "Read"
	ToolGrep      = "Grep"
	ToolGlob      = "Glob"
	ToolLS        = "LS"
	ToolWebFetch  = "WebFetch"
	ToolWebSearch = "WebSearch"
	ToolTask      = "Task"
	ToolTodoWrite = "TodoWrite"
	// ToolApplyPatch carries a unified/Codex-style patch in Input["patch"].
	ToolApplyPatch = "ApplyPatch"
)
