package events

// CheckCapability reports whether token is the live event capability of
// the surface, for control ops that a pane's hook must prove it sends
// (native_capture). The check is the one events get: against the stored
// hash, in constant time, and false once the surface has closed.
func (e *Engine) CheckCapability(surfaceID, token string) bool {
	if surfaceID == "" || token == "" {
		return false
	}
	return e.caps.Check(surfaceID, token)
}
