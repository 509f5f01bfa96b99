package daemon

import (
	"fmt"

	"github.com/musterhq/muster/internal/launcher"
	"github.com/musterhq/muster/internal/store"
)

// renderResume renders a custom launcher's resume command for the captured
// native id; the template was validated before the session was stored.
func renderResume(rec store.Session) (string, error) {
	t, err := launcher.ResumeTemplate(rec.ShellCommand, rec.ResumeTemplate)
	if err != nil {
		return "", fmt.Errorf("resume template: %w", err)
	}
	return t.Render(rec.NativeID)
}
