package cursor

import (
	"encoding/base64"
	"fmt"
	"io"
	"strings"

	"github.com/musterhq/muster/internal/transcript"
)

// parseJSONL reads an agent-transcripts JSONL file line by line; a line
// over the limit is skipped with a warning.
func parseJSONL(b *builder, r io.Reader) {
	sc := transcript.NewLineScanner(r, 0)
	for sc.Scan() {
		if sc.TooLong() {
			b.warnf("line %d: over %d bytes; skipped", sc.Line(), transcript.DefaultMaxLine)
			continue
		}
		b.jsonlLine(sc.Line(), sc.Bytes())
	}
	if err := sc.Err(); err != nil {
		b.warnf("read: %v", err)
	}
}

// jsonlLine applies one line of a JSONL transcript.
func (b *builder) jsonlLine(line int, raw []byte) {
	// Each line its own string: items keep parts of it, and the scanner
	// reuses its buffer.
	l := strings.TrimSpace(string(raw))
	if l == "" {
		return
	}
	if !transcript.ValidJSONString(l) {
		b.warnf("line %d: malformed JSON", line)
		return
	}
	v := transcript.Parse(l)
	if !v.IsObject() {
		b.warnf("line %d: not a JSON object", line)
		return
	}
	var role, model string
	var content, msg transcript.Value
	v.ForEach(func(k string, val transcript.Value) bool {
		switch k {
		case "role":
			role = val.Str()
		case "message":
			msg = val
		case "content":
			content = val
		}
		return true
	})
	msg.ForEach(func(k string, val transcript.Value) bool {
		switch k {
		case "content":
			content = val
		case "model":
			model = val.Str()
		}
		return true
	})
	switch role {
	case "user":
		b.userJSONL(line, content)
	case "assistant":
		b.assistantJSONL(line, content, model)
	}
}

func (b *builder) userJSONL(line int, content transcript.Value) {
	if content.IsString() {
		b.prompt(userQuery(content.Str()), nil, false)
		return
	}
	var text strings.Builder
	var images []transcript.Image
	hasImage := false
	content.ForEach(func(_ string, blk transcript.Value) bool {
		switch blk.Get("type").Str() {
		case "text":
			if text.Len() > 0 {
				text.WriteByte('\n')
			}
			text.WriteString(blk.Get("text").Str())
		case "tool_result":
			b.toolResult(blk.Get("tool_use_id").Str(), blockText(blk.Get("content")), blk.Get("is_error").IsTrue())
		case "image":
			src := blk.Get("source")
			mt, ok := transcript.ImageMIME(src.Get("media_type").Str())
			if !ok || src.Get("type").Str() != "base64" {
				return true
			}
			hasImage = true
			if !b.full {
				return true
			}
			data, err := base64.StdEncoding.DecodeString(src.Get("data").Str())
			if err != nil {
				b.warnf("line %d: image is not valid base64", line)
				return true
			}
			if err := b.budget.Take(int64(len(data))); err != nil {
				b.warnf("line %d: %v", line, err)
				return true
			}
			images = append(images, transcript.Image{MIME: mt, DataURL: transcript.DataURL(mt, data)})
		}
		return true
	})
	if text.Len() > 0 || hasImage {
		b.prompt(userQuery(text.String()), images, hasImage)
	}
}

func (b *builder) assistantJSONL(line int, content transcript.Value, model string) {
	if content.IsString() {
		b.say(transcript.AssistantText, content.Str(), model)
		return
	}
	n := 0
	content.ForEach(func(_ string, blk transcript.Value) bool {
		switch blk.Get("type").Str() {
		case "text":
			b.say(transcript.AssistantText, blk.Get("text").Str(), model)
		case "thinking":
			b.say(transcript.Thinking, blk.Get("thinking").Str(), model)
		case "reasoning":
			b.say(transcript.Thinking, blk.Get("text").Str(), model)
		case "tool_use":
			n++
			id := blk.Get("id").String()
			synthetic := id == ""
			if synthetic {
				id = fmt.Sprintf("%d#%d", line, n)
			}
			var input string
			if in := blk.Get("input"); in.IsObject() {
				input = in.Raw
			}
			b.toolUse(id, synthetic, blk.Get("name").Str(), input, model)
		case "tool_result":
			b.toolResult(blk.Get("tool_use_id").Str(), blockText(blk.Get("content")), blk.Get("is_error").IsTrue())
		}
		return true
	})
}

// blockText flattens tool_result content: a string or text blocks.
func blockText(v transcript.Value) string {
	if v.IsString() {
		return v.Str()
	}
	if !v.IsArray() {
		if v.Exists() && !v.IsNull() {
			return v.Raw
		}
		return ""
	}
	var parts []string
	v.ForEach(func(_ string, blk transcript.Value) bool {
		if t := blk.Get("text"); t.IsString() {
			parts = append(parts, t.Str())
		}
		return true
	})
	return strings.Join(parts, "\n")
}
