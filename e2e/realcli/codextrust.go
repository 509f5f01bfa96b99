package realcli

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode"

	"github.com/pelletier/go-toml/v2"
)

// codexSessionEndTimeout is the longest SessionEnd hook timeout Codex
// accepts: it clamps longer ones to 3 s, and trusts the clamped form.
const codexSessionEndTimeout = 3

// codexDefaultTimeout is the timeout Codex gives a hook that sets none.
const codexDefaultTimeout = 600

// TrustCodexHooks records every command hook of codexHome/hooks.json as
// trusted in codexHome/config.toml, exactly as Codex 0.169 records it when
// the user picks "Trust all" in its hook review: one
// [hooks.state."<hooks.json>:<event_snake>:<group>:<handler>"] table per
// handler with trusted_hash = "sha256:<hex>", the hash of the handler's
// normalized identity (event name, the handler with its defaults filled in,
// as compact JSON with sorted keys). A hook that changes needs trusting
// again. Matchers and handler fields other than type, command, timeout and
// async are refused, since their normal form is not pinned down here.
func TrustCodexHooks(codexHome string) error {
	hooksPath, err := filepath.Abs(filepath.Join(codexHome, "hooks.json"))
	if err != nil {
		return fmt.Errorf("trust codex hooks: %w", err)
	}
	raw, err := os.ReadFile(hooksPath)
	if err != nil {
		return fmt.Errorf("trust codex hooks: %w", err)
	}
	var file struct {
		Hooks map[string][]map[string]json.RawMessage `json:"hooks"`
	}
	if err := json.Unmarshal(raw, &file); err != nil {
		return fmt.Errorf("trust codex hooks: parse %s: %w", hooksPath, err)
	}
	state := map[string]any{}
	for event, groups := range file.Hooks {
		label := snakeCase(event)
		for gi, group := range groups {
			for k := range group {
				if k != "hooks" {
					return fmt.Errorf("trust codex hooks: %s group %d: field %q is not supported", event, gi, k)
				}
			}
			var handlers []map[string]any
			if err := json.Unmarshal(group["hooks"], &handlers); err != nil {
				return fmt.Errorf("trust codex hooks: %s group %d: %w", event, gi, err)
			}
			for hi, h := range handlers {
				hash, err := codexHookHash(label, h)
				if err != nil {
					return fmt.Errorf("trust codex hooks: %s group %d hook %d: %w", event, gi, hi, err)
				}
				key := fmt.Sprintf("%s:%s:%d:%d", hooksPath, label, gi, hi)
				state[key] = map[string]any{"trusted_hash": hash}
			}
		}
	}
	configPath := filepath.Join(codexHome, "config.toml")
	config := map[string]any{}
	if b, err := os.ReadFile(configPath); err == nil {
		if err := toml.Unmarshal(b, &config); err != nil {
			return fmt.Errorf("trust codex hooks: parse %s: %w", configPath, err)
		}
	} else if !os.IsNotExist(err) {
		return fmt.Errorf("trust codex hooks: %w", err)
	}
	hooks, _ := config["hooks"].(map[string]any)
	if hooks == nil {
		hooks = map[string]any{}
		config["hooks"] = hooks
	}
	old, _ := hooks["state"].(map[string]any)
	if old == nil {
		old = map[string]any{}
	}
	for k, v := range state {
		old[k] = v
	}
	hooks["state"] = old
	out, err := toml.Marshal(config)
	if err != nil {
		return fmt.Errorf("trust codex hooks: encode %s: %w", configPath, err)
	}
	tmp := configPath + ".tmp"
	if err := os.WriteFile(tmp, out, 0o600); err != nil {
		return fmt.Errorf("trust codex hooks: %w", err)
	}
	if err := os.Rename(tmp, configPath); err != nil {
		return fmt.Errorf("trust codex hooks: %w", err)
	}
	return nil
}

// codexHookHash returns Codex's trust hash of one handler of event label.
func codexHookHash(label string, h map[string]any) (string, error) {
	if h["type"] != "command" {
		return "", fmt.Errorf("type %v is not supported (only command)", h["type"])
	}
	command, ok := h["command"].(string)
	if !ok || strings.TrimSpace(command) == "" {
		return "", fmt.Errorf("command is missing or empty")
	}
	timeout := codexDefaultTimeout
	if v, ok := h["timeout"]; ok {
		f, ok := v.(float64)
		if !ok || f < 0 || f != float64(int(f)) {
			return "", fmt.Errorf("timeout %v is not a whole number of seconds", v)
		}
		timeout = int(f)
	}
	if label == "session_end" && timeout > codexSessionEndTimeout {
		timeout = codexSessionEndTimeout
	}
	async := false
	if v, ok := h["async"]; ok {
		b, ok := v.(bool)
		if !ok {
			return "", fmt.Errorf("async %v is not a boolean", v)
		}
		async = b
	}
	for k := range h {
		switch k {
		case "type", "command", "timeout", "async":
		default:
			return "", fmt.Errorf("field %q is not supported", k)
		}
	}
	// encoding/json sorts map keys and writes no spaces: the canonical form.
	identity := map[string]any{
		"event_name": label,
		"hooks": []any{map[string]any{
			"async": async, "command": command, "timeout": timeout, "type": "command",
		}},
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(identity); err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(strings.TrimSuffix(b.String(), "\n")))
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}

// snakeCase turns a hook event name into Codex's label: PreToolUse →
// pre_tool_use.
func snakeCase(s string) string {
	var b strings.Builder
	for i, r := range s {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}
