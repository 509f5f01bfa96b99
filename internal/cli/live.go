package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/musterhq/muster/internal/client"
	"github.com/musterhq/muster/internal/proto"
)

// liveSessions asks a running daemon for its sessions; nil when none runs
// or it does not answer in time. History, show and replay work without
// the daemon and never start it.
func liveSessions(ctx context.Context, f *Factory) []proto.SessionInfo {
	dirs, err := f.Dirs()
	if err != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, dirs, Version)
	if err != nil {
		return nil
	}
	defer c.Close()
	var list []proto.SessionInfo
	if c.Call(ctx, proto.OpList, nil, &list) != nil {
		return nil
	}
	return list
}

// liveRef maps the name of a Muster session to its current conversation,
// PROVIDER:ID; other references are returned unchanged. A name wins over
// an id prefix that happens to spell the same.
func liveRef(ctx context.Context, f *Factory, ref string) (string, error) {
	if ref == "" || strings.ContainsAny(ref, ":/~") || strings.HasPrefix(ref, ".") {
		return ref, nil
	}
	for _, s := range liveSessions(ctx, f) {
		if s.Name != ref {
			continue
		}
		if s.NativeSessionID == "" {
			return "", &UserError{Err: fmt.Errorf("session %s has no conversation id yet", ref),
				Hint: "its agent reports one once it starts (`muster explain " + ref + "`)", Code: ExitError}
		}
		return s.Provider + ":" + s.NativeSessionID, nil
	}
	return ref, nil
}

// livePanes maps PROVIDER:ID to the running session whose pane holds that
// conversation.
func livePanes(ctx context.Context, f *Factory) map[string]proto.SessionInfo {
	out := map[string]proto.SessionInfo{}
	for _, s := range liveSessions(ctx, f) {
		if s.State == "running" && s.NativeSessionID != "" {
			out[s.Provider+":"+s.NativeSessionID] = s
		}
	}
	return out
}
