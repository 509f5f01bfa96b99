package tui

import (
	"context"
	"fmt"

	tea "charm.land/bubbletea/v2"
)

// Run shows the dashboard on the terminal until the user quits, and returns
// the session the user chose to attach to ("" when they quit) and the
// dashboard's state. The caller attaches, then calls Run again with Select
// and State set to come back where it was.
func Run(ctx context.Context, o Options) (attach string, state *State, err error) {
	// Preview streams end with the dashboard, also those still opening
	// when it quit.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	m := New(o)
	m.ctx = ctx
	final, err := tea.NewProgram(m, tea.WithContext(ctx)).Run()
	if err != nil {
		return "", nil, fmt.Errorf("run dashboard: %w", err)
	}
	m, ok := final.(Model)
	if !ok {
		return "", nil, nil
	}
	return m.Attach(), m.State(), nil
}
