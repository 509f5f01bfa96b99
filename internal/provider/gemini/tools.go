package gemini

import (
	"encoding/json"

	"github.com/musterhq/muster/internal/transcript"
)

// tool is how one Gemini CLI tool maps onto the canonical model.
type tool struct {
	name    string
	renames map[string]string
}

var (
	toFilePath = map[string]string{"absolute_path": "file_path", "path": "file_path"}
	toPath     = map[string]string{"dir_path": "path"}
)

var tools = map[string]tool{
	"run_shell_command":   {name: transcript.ToolBash},
	"replace":             {name: transcript.ToolEdit, renames: toFilePath},
	"edit":                {name: transcript.ToolEdit, renames: toFilePath},
	"write_file":          {name: transcript.ToolWrite, renames: toFilePath},
	"read_file":           {name: transcript.ToolRead, renames: toFilePath},
	"glob":                {name: transcript.ToolGlob, renames: toPath},
	"search_file_content": {name: transcript.ToolGrep, renames: toPath},
	"grep":                {name: transcript.ToolGrep, renames: toPath},
	"grep_search":         {name: transcript.ToolGrep, renames: toPath},
	"list_directory":      {name: transcript.ToolLS, renames: toPath},
	"ls":                  {name: transcript.ToolLS, renames: toPath},
	"web_fetch":           {name: transcript.ToolWebFetch},
	"google_web_search":   {name: transcript.ToolWebSearch},
	"web_search":          {name: transcript.ToolWebSearch},
	"write_todos":         {name: transcript.ToolTodoWrite},
}

// canonical returns the canonical tool name for raw and its arguments with
// canonical keys; unknown tools keep their name and arguments.
func canonical(raw string, args []byte) (string, json.RawMessage) {
	t, ok := tools[raw]
	if !ok {
		return raw, transcript.RawJSON(args)
	}
	if len(args) == 0 {
		return t.name, nil
	}
	if t.renames == nil {
		return t.name, transcript.RawJSON(args)
	}
	return t.name, transcript.RenameKeys(args, t.renames)
}
