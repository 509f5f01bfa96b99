package transcript

import "testing"

func TestEnvDir(t *testing.T) {
	env := Env{Home: "/h", Getenv: func(k string) string { return map[string]string{"SET": "/x"}[k] }}
	for _, tc := range []struct{ got, want string }{
		{env.Dir("SET", "", ".a"), "/x"},
		{env.Dir("SET", "sub", ".a"), "/x/sub"},
		{env.Dir("UNSET", "sub", ".local", "share", "a"), "/h/.local/share/a"},
		{Env{}.Dir("UNSET", "", ".a"), ""},
	} {
		if tc.got != tc.want {
			t.Errorf("Dir = %q, want %q", tc.got, tc.want)
		}
	}
}
