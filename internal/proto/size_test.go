package proto

import (
	"errors"
	"strings"
	"testing"
)

func TestCheckSize(t *testing.T) {
	for _, tc := range []struct {
		name       string
		cols, rows int
		ok         bool
	}{
		{"unknown", 0, 0, true},
		{"smallest", 1, 1, true},
		{"typical", 80, 24, true},
		{"largest", MaxTermSize, MaxTermSize, true},
		{"too wide", MaxTermSize + 1, 24, false},
		{"too tall", 80, MaxTermSize + 1, false},
		{"huge", 100000, 100000, false},
		{"negative", -1, -1, false},
		{"negative cols", -80, 24, false},
		{"zero cols", 0, 24, false},
		{"zero rows", 80, 0, false},
		{"min int", -1 << 63, 24, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckSize(tc.cols, tc.rows)
			if tc.ok {
				if err != nil {
					t.Fatalf("CheckSize(%d, %d) = %v, want nil", tc.cols, tc.rows, err)
				}
				return
			}
			e, ok := errors.AsType[*Error](err)
			if !ok || e.Code != CodeInvalid {
				t.Fatalf("CheckSize(%d, %d) = %#v, want code %s", tc.cols, tc.rows, err, CodeInvalid)
			}
			if !strings.Contains(e.Message, "1–1000") || strings.Contains(e.Message, "\n") {
				t.Errorf("message %q does not name the range on one line", e.Message)
			}
			if ValidSize(tc.cols, tc.rows) {
				t.Errorf("ValidSize(%d, %d) = true", tc.cols, tc.rows)
			}
		})
	}
}

func TestClampSize(t *testing.T) {
	for _, tc := range []struct {
		name                     string
		cols, rows, wantC, wantR int
	}{
		{"in range", 120, 40, 120, 40},
		{"huge", 4000, 4000, MaxTermSize, MaxTermSize},
		{"one side huge", 4000, 50, MaxTermSize, 50},
		{"zero", 0, 0, DefaultCols, DefaultRows},
		{"negative", -5, -5, DefaultCols, DefaultRows},
		{"edges", 1, MaxTermSize, 1, MaxTermSize},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, r := ClampSize(tc.cols, tc.rows)
			if c != tc.wantC || r != tc.wantR {
				t.Errorf("ClampSize(%d, %d) = %d, %d; want %d, %d", tc.cols, tc.rows, c, r, tc.wantC, tc.wantR)
			}
			if !ValidSize(c, r) {
				t.Errorf("ClampSize gave an invalid size %dx%d", c, r)
			}
		})
	}
}
