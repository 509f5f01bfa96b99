package provider

import "bytes"

// The bytes of single keys as they reach a pane, for KeyReader
// implementations: a key arrives as its legacy byte, or in the kitty
// keyboard protocol (CSI code u, CSI code;1 u, CSI code;1:1 u) when the
// program asked for it and the attached terminal speaks it.

// IsEscKey reports whether input is one press of Esc.
func IsEscKey(input []byte) bool {
	if len(input) == 1 {
		return input[0] == 0x1b
	}
	return isKittyKey(input, "27")
}

// IsEnterKey reports whether input is one press of Enter.
func IsEnterKey(input []byte) bool {
	if len(input) == 1 {
		return input[0] == '\r' || input[0] == '\n'
	}
	return isKittyKey(input, "13")
}

// IsCtrlCKey reports whether input is one press of Ctrl-C: ETX, or the
// kitty protocol's c with the Ctrl modifier (CSI 99;5 u, CSI 99;5:1 u).
func IsCtrlCKey(input []byte) bool {
	if len(input) == 1 {
		return input[0] == 0x03
	}
	rest, ok := bytes.CutPrefix(input, []byte("\x1b[99;5"))
	return ok && (string(rest) == "u" || string(rest) == ":1u")
}

// IsCharKey reports whether input is one press of the printable ASCII key
// c, without modifiers.
func IsCharKey(input []byte, c byte) bool {
	if len(input) == 1 {
		return input[0] == c
	}
	if c < 0x20 || c > 0x7e {
		return false
	}
	return isKittyKey(input, itoa3(int(c)))
}

func itoa3(n int) string {
	if n >= 100 {
		return string([]byte{byte('0' + n/100), byte('0' + n/10%10), byte('0' + n%10)})
	}
	return string([]byte{byte('0' + n/10), byte('0' + n%10)})
}

func isKittyKey(b []byte, code string) bool {
	rest, ok := bytes.CutPrefix(b, []byte("\x1b["+code))
	if !ok {
		return false
	}
	switch string(rest) {
	case "u", ";1u", ";1:1u":
		return true
	}
	return false
}
