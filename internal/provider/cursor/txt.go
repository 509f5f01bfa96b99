package cursor

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/musterhq/muster/internal/transcript"
)

// parseText reads a legacy .txt transcript.
// parseText reads r line by line; one block is held at a time, up to the
// line limit, past which the rest of it is skipped with a warning.
func parseText(b *builder, r io.Reader) {
	var role string
	var body []string
	size, skipped := 0, false
	flush := func() {
		size, skipped = 0, false
		switch role {
		case "user":
			b.prompt(userQuery(strings.Join(body, "\n")), nil, false)
		case "assistant":
			b.assistantText(body)
		}
		body = body[:0]
	}
	sc := transcript.NewLineScanner(r, 0)
	for sc.Scan() {
		if sc.TooLong() {
			b.warnf("line %d: over %d bytes; skipped", sc.Line(), transcript.DefaultMaxLine)
			continue
		}
		line := string(sc.Bytes())
		switch strings.TrimSpace(line) {
		case "user:", "assistant:":
			flush()
			role = strings.TrimSuffix(strings.TrimSpace(line), ":")
			continue
		}
		if role != "" && !skipped {
			if size += len(line) + 1; size > transcript.DefaultMaxLine {
				b.warnf("line %d: the %s block is over %d bytes; its rest is skipped", sc.Line(), role, transcript.DefaultMaxLine)
				skipped = true
				continue
			}
			body = append(body, line)
		}
	}
	if err := sc.Err(); err != nil {
		b.warnf("read: %v", err)
	}
	flush()
}

// marker reports which block an assistant line opens, if any.
func marker(line string) (kind, rest string) {
	t := strings.TrimSpace(line)
	for _, k := range []string{"[Thinking]", "[Tool call]", "[Tool result]"} {
		if r, ok := strings.CutPrefix(t, k); ok {
			return k, strings.TrimSpace(r)
		}
	}
	return "", ""
}

// endsBlock reports whether line ends an indented block body.
func endsBlock(line string) bool {
	if k, _ := marker(line); k != "" {
		return true
	}
	return strings.TrimSpace(line) != "" && line[0] != ' ' && line[0] != '\t'
}

func (b *builder) assistantText(lines []string) {
	var prose []string
	say := func() {
		b.say(transcript.AssistantText, strings.Join(prose, "\n"), "")
		prose = prose[:0]
	}
	for i := 0; i < len(lines); {
		kind, rest := marker(lines[i])
		if kind == "" {
			prose = append(prose, lines[i])
			i++
			continue
		}
		say()
		j := i + 1
		for j < len(lines) && !endsBlock(lines[j]) {
			j++
		}
		block := lines[i+1 : j]
		switch kind {
		case "[Thinking]":
			b.say(transcript.Thinking, strings.TrimSpace(rest+"\n"+dedent(block)), "")
		case "[Tool call]":
			b.toolUse(fmt.Sprintf("txt-%d", b.t.ToolCallCount+1), true, rest, string(params(block)), "")
		case "[Tool result]":
			b.toolResult("", dedent(block), false)
		}
		i = j
	}
	say()
}

func dedent(lines []string) string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = strings.TrimSpace(l)
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}

// params reads indented "key: value" / "key=value" lines into a JSON object;
// a line that is neither continues the previous value.
func params(lines []string) []byte {
	obj := map[string]string{}
	var order []string
	last := ""
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" {
			continue
		}
		if k, v, ok := splitParam(t); ok {
			if _, seen := obj[k]; !seen {
				order = append(order, k)
			}
			obj[k], last = v, k
			continue
		}
		if last != "" {
			obj[last] += "\n" + t
		}
	}
	if len(order) == 0 {
		return nil
	}
	b, err := json.Marshal(obj)
	if err != nil {
		return nil
	}
	return b
}

func splitParam(t string) (key, value string, ok bool) {
	i := strings.IndexAny(t, ":=")
	if i <= 0 {
		return "", "", false
	}
	key = t[:i]
	for j, r := range key {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || j > 0 && r >= '0' && r <= '9') {
			return "", "", false
		}
	}
	return key, strings.TrimSpace(t[i+1:]), true
}
