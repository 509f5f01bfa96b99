package opencode

import (
	"encoding/json"

	"github.com/musterhq/muster/internal/transcript"
)

var editKeys = map[string]string{
	"filePath":   "file_path",
	"oldString":  "old_string",
	"newString":  "new_string",
	"replaceAll": "replace_all",
}

var tools = map[string]struct {
	name    string
	renames map[string]string
}{
	"bash":        {name: transcript.ToolBash},
	"edit":        {name: transcript.ToolEdit, renames: editKeys},
	"multiedit":   {name: transcript.ToolMultiEdit, renames: editKeys},
	"write":       {name: transcript.ToolWrite, renames: map[string]string{"filePath": "file_path"}},
	"read":        {name: transcript.ToolRead, renames: map[string]string{"filePath": "file_path"}},
	"glob":        {name: transcript.ToolGlob},
	"grep":        {name: transcript.ToolGrep},
	"list":        {name: transcript.ToolLS},
	"webfetch":    {name: transcript.ToolWebFetch},
	"websearch":   {name: transcript.ToolWebSearch},
	"todowrite":   {name: transcript.ToolTodoWrite},
	"task":        {name: transcript.ToolTask},
	"patch":       {name: transcript.ToolApplyPatch, renames: map[string]string{"patchText": "patch"}},
	"apply_patch": {name: transcript.ToolApplyPatch, renames: map[string]string{"patchText": "patch"}},
}

// canonical returns the canonical name of an OpenCode tool and its input
// with canonical keys; unknown tools keep their name and input.
func canonical(raw string, input []byte) (string, json.RawMessage) {
	t, ok := tools[raw]
	if !ok {
		t.name = raw
	}
	if len(input) == 0 {
		return t.name, nil
	}
	if t.renames == nil {
		return t.name, json.RawMessage(input)
	}
	out := transcript.RenameKeys(input, t.renames)
	if t.name == transcript.ToolMultiEdit {
		out = renameEdits(out)
	}
	return t.name, out
}

// renameEdits maps the keys inside a multiedit's edits array.
func renameEdits(input json.RawMessage) json.RawMessage {
	edits := transcript.ParseBytes(input).Get("edits")
	if !edits.IsArray() {
		return input
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(input, &obj) != nil {
		return input
	}
	var list []json.RawMessage
	edits.ForEach(func(_ string, e transcript.Value) bool {
		list = append(list, transcript.RenameKeys([]byte(e.Raw), editKeys))
		return true
	})
	b, err := json.Marshal(list)
	if err != nil {
		return input
	}
	obj["edits"] = b
	out, err := json.Marshal(obj)
	if err != nil {
		return input
	}
	return out
}
