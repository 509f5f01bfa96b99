package tui

import (
	"context"
	"fmt"

	tea "charm.land/bubbletea/v2"
)

// Run shows the dashboard on the terminal until the user quits, and returns
// the session the user chose to attach to ("" when they quit). The caller
// attaches, then calls Run again with Select set to come back.
func Run(ctx context.Context, o Options) (attach string, err error) {
	// Preview streams end with the dashboard, also those still opening
	// when it quit.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	m := New(o)
	m.ctx = ctx
	final, err := tea.NewProgram(m, tea.WithContext(ctx)).Run()
	if err != nil {
		return "", fmt.Errorf("run dashboard: %w", err)
	}
	m, ok := final.(Model)
	if !ok {
		return "", nil
	}
	return m.Attach(), nil
}
