package hookinstall

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkSetupRemove measures the in-memory setup and remove of a
// realistic Claude settings file.
func BenchmarkSetupRemove(b *testing.B) {
	data, err := os.ReadFile(filepath.Join("testdata", "claude-settings.json"))
	if err != nil {
		b.Fatal(err)
	}
	mem := memoryFrom(data, true, false)
	for b.Loop() {
		out, _, err := jsonSpecOf("claude").setupText("f", data, true, memory{}, musterBin)
		if err != nil {
			b.Fatal(err)
		}
		if _, _, _, err := jsonSpecOf("claude").removeText("f", []byte(out), mem, true); err != nil {
			b.Fatal(err)
		}
	}
}
