package hookinstall

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/musterhq/muster/internal/provider"
)

// pluginMarkerRE finds the marker on the first line of a plugin of ours
// (provider.HookPlugin).
var pluginMarkerRE = regexp.MustCompile(`^// muster-hooks:v([0-9]+)\b`)

func pluginVersion(data []byte) int {
	m := pluginMarkerRE.FindSubmatch(data)
	if m == nil {
		return 0
	}
	v, _ := strconv.Atoi(string(m[1]))
	return v
}

// marker is the plugin's first-line marker after "// ".
func marker() string { return fmt.Sprintf("muster-hooks:v%d", MarkerVersion) }

func setupPlugin(name, path, musterPath string, pl *provider.HookPlugin) (Result, error) {
	r := Result{Provider: name, Path: path}
	f, err := readFile(path)
	if err != nil {
		return r, err
	}
	want := pl.Source(musterPath, marker())
	if f.exists {
		if pluginVersion(f.data) == 0 {
			return r, fmt.Errorf("%s exists and was not written by muster; move it away, then run setup again", path)
		}
		if string(f.data) == want {
			return r, nil
		}
	}
	if err := f.writeAtomic([]byte(want)); err != nil {
		return r, err
	}
	r.Changed, r.Created = true, !f.exists
	if !f.exists {
		r.Notes = append(r.Notes, pl.CreateNotes...)
	}
	return r, nil
}

func removePlugin(name, path string) (Result, error) {
	r := Result{Provider: name, Path: path}
	f, err := readFile(path)
	if err != nil {
		return r, err
	}
	if !f.exists || pluginVersion(f.data) == 0 {
		return r, nil
	}
	if f.symlink {
		if err := os.Remove(path); err != nil {
			return r, fmt.Errorf("remove %s: %w", path, err)
		}
	} else if err := f.remove(); err != nil {
		return r, err
	}
	r.Changed, r.Deleted = true, true
	return r, nil
}

func statusPlugin(r Report, musterPath string, pl *provider.HookPlugin) Report {
	f, err := readFile(r.Path)
	if err != nil {
		r.State, r.Detail = Unreadable, err.Error()
		return r
	}
	if !f.exists {
		return r
	}
	v := pluginVersion(f.data)
	r.Version = v
	switch {
	case v == 0:
		r.State, r.Detail = NotInstalled, "the file exists but was not written by muster"
	case string(f.data) == pl.Source(musterPath, marker()):
		r.State = Installed
	case v < MarkerVersion:
		r.State, r.Detail = Outdated, fmt.Sprintf("installed by an older muster (hooks v%d, this muster writes v%d)", v, MarkerVersion)
	case !strings.Contains(string(f.data), pl.Binary(musterPath)):
		r.State, r.Detail = Outdated, "the plugin runs a different muster binary"
	default:
		r.State, r.Detail = Outdated, "the plugin differs from what this muster installs"
	}
	return r
}
