package proto

import "testing"

func TestBranchMark(t *testing.T) {
	for _, c := range []struct {
		w    WorktreeInfo
		want string
	}{
		{WorktreeInfo{Branch: "muster/api"}, "muster/api"},
		{WorktreeInfo{Branch: "feat", Dirty: 3}, "feat*"},
		{WorktreeInfo{Branch: "feat", Ahead: 2}, "feat ↑2"},
		{WorktreeInfo{Branch: "feat", Dirty: 1, Ahead: 12}, "feat* ↑12"},
	} {
		if got := c.w.BranchMark(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.w, got, c.want)
		}
	}
}
