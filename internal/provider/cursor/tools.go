package cursor

import (
	"encoding/json"

	"github.com/musterhq/muster/internal/transcript"
)

var pathToFile = map[string]string{"path": "file_path", "target_file": "file_path"}

var tools = map[string]struct {
	name    string
	renames map[string]string
}{
	"Shell":      {name: transcript.ToolBash},
	"StrReplace": {name: transcript.ToolEdit, renames: pathToFile},
	"Write":      {name: transcript.ToolWrite, renames: map[string]string{"path": "file_path", "target_file": "file_path", "contents": "content"}},
	"Read":       {name: transcript.ToolRead, renames: pathToFile},
	"Grep":       {name: transcript.ToolGrep},
	"Glob":       {name: transcript.ToolGlob, renames: map[string]string{"glob_pattern": "pattern", "target_directory": "path"}},
	"LS":         {name: transcript.ToolLS, renames: map[string]string{"target_directory": "path"}},
	"WebFetch":   {name: transcript.ToolWebFetch},
	"WebSearch":  {name: transcript.ToolWebSearch, renames: map[string]string{"search_term": "query"}},
	"TodoWrite":  {name: transcript.ToolTodoWrite},
	"Task":       {name: transcript.ToolTask},
}

// canonical returns the canonical name of a Cursor tool and its input with
// canonical keys; unknown tools keep their name and input.
func canonical(raw string, input []byte) (string, json.RawMessage) {
	t, ok := tools[raw]
	if !ok {
		t.name = raw
	}
	if len(input) == 0 {
		return t.name, nil
	}
	if t.renames == nil {
		return t.name, transcript.RawJSON(input)
	}
	return t.name, transcript.RenameKeys(input, t.renames)
}
