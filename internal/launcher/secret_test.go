package launcher

import (
	"slices"
	"testing"
)

func TestSecretAssignments(t *testing.T) {
	tests := []struct {
		cmd  string
		want []string
	}{
		{"agent --x", nil},
		{"OPENAI_API_KEY=sk-1 agent", []string{"OPENAI_API_KEY"}},
		{"env GH_TOKEN=x DEBUG=1 agent", []string{"GH_TOKEN"}},
		{"'DB_PASSWORD=x' agent", []string{"DB_PASSWORD"}},
		{"agent --api-key=x", nil}, // not a variable name
		{"FOO=1 agent; Secret_thing=2 b", []string{"Secret_thing"}},
	}
	for _, tt := range tests {
		t.Run(tt.cmd, func(t *testing.T) {
			got, err := SecretAssignments(tt.cmd)
			if err != nil || !slices.Equal(got, tt.want) {
				t.Errorf("SecretAssignments(%q) = %q, %v; want %q", tt.cmd, got, err, tt.want)
			}
		})
	}
	if _, err := SecretAssignments("a 'b"); err == nil {
		t.Error("unterminated quote accepted")
	}
	for name, want := range map[string]bool{"ANTHROPIC_API_KEY": true, "GITHUB_TOKEN": true, "HOME": false, "keychain": true, "PATH": false} {
		if SecretName(name) != want {
			t.Errorf("SecretName(%q) = %v", name, !want)
		}
	}
}
