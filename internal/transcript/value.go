package transcript

import (
	"math"
	"strconv"
	"strings"
	"unsafe"
)

// Value is one JSON value read with this package's scanner, for parsers
// that walk documents of several shapes (Gemini CLI's chat records,
// OpenCode's parts, Cursor's blobs, stats' details). Parse it from a
// document ValidJSON accepted; on anything else the readers return
// missing values rather than failing. Reading follows what those parsers
// relied on when they used gjson: Get takes a dotted path, and the
// conversions (String, Int, Float, Bool) are as lenient as gjson's.
//
// The zero Value is missing. Raw aliases the parsed text.
type Value struct {
	Raw string
}

// Parse returns the value that s holds (white space around it ignored).
func Parse(s string) Value { return Value{Raw: strings.TrimSpace(s)} }

// ParseBytes is Parse of a copy of b.
func ParseBytes(b []byte) Value { return Parse(string(b)) }

// bytesOf views s as bytes for the scanner, which never writes to them.
func bytesOf(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// aliasString is the inverse of bytesOf, for parts of a Value's Raw.
func aliasString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// Exists reports whether the value is present (null is present).
func (v Value) Exists() bool { return v.Raw != "" }

// IsObject, IsArray, IsString and IsTrue look at the first byte, which
// for a validated document says what the value is.
func (v Value) IsObject() bool { return v.Raw != "" && v.Raw[0] == '{' }

// IsArray reports whether the value is an array.
func (v Value) IsArray() bool { return v.Raw != "" && v.Raw[0] == '[' }

// IsString reports whether the value is a string.
func (v Value) IsString() bool { return v.Raw != "" && v.Raw[0] == '"' }

// IsTrue reports whether the value is the literal true.
func (v Value) IsTrue() bool { return v.Raw == "true" }

// IsNull reports whether the value is null or missing.
func (v Value) IsNull() bool { return v.Raw == "" || v.Raw == "null" }

func (v Value) isNumber() bool {
	return v.Raw != "" && (v.Raw[0] == '-' || '0' <= v.Raw[0] && v.Raw[0] <= '9')
}

// Str is the text of a string value, "" for any other.
func (v Value) Str() string {
	if !v.IsString() {
		return ""
	}
	return Str(bytesOf(v.Raw))
}

// String is the text of a string, "true" or "false", a number or an
// object or array as written, and "" for null or a missing value.
func (v Value) String() string {
	switch {
	case v.IsString():
		return v.Str()
	case v.IsNull():
		return ""
	}
	return v.Raw
}

// Int is a number (a fraction truncated), a string holding one, 1 for
// true, and 0 otherwise.
func (v Value) Int() int64 {
	switch {
	case v.IsTrue():
		return 1
	case v.isNumber():
		return Int(bytesOf(v.Raw))
	case v.IsString():
		s := v.Str()
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return n
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(f) || f > math.MaxInt64 || f < math.MinInt64 {
			return 0
		}
		return int64(f)
	}
	return 0
}

// Float is a number, a string holding one, 1 for true, and 0 otherwise.
func (v Value) Float() float64 {
	var s string
	switch {
	case v.IsTrue():
		return 1
	case v.isNumber():
		s = v.Raw
	case v.IsString():
		s = v.Str()
	default:
		return 0
	}
	f, _ := strconv.ParseFloat(s, 64)
	return f
}

// Bool is true for true, a string strconv.ParseBool accepts as true, and
// a non-zero number.
func (v Value) Bool() bool {
	switch {
	case v.IsTrue():
		return true
	case v.isNumber():
		return v.Float() != 0
	case v.IsString():
		b, _ := strconv.ParseBool(v.Str())
		return b
	}
	return false
}

// Get follows a dotted path ("time.start", "content.0.name"): a step is
// an object's key (its first member of that name) or an array's index. A
// missing step gives a missing value.
func (v Value) Get(path string) Value {
	for key := range strings.SplitSeq(path, ".") {
		if v.IsArray() {
			v = v.index(key)
		} else {
			v = v.member(key)
		}
		if !v.Exists() {
			return Value{}
		}
	}
	return v
}

func (v Value) index(key string) Value {
	i, err := strconv.Atoi(key)
	if err != nil || i < 0 {
		return Value{}
	}
	var out Value
	v.ForEach(func(_ string, e Value) bool {
		if i == 0 {
			out = e
			return false
		}
		i--
		return true
	})
	return out
}

func (v Value) member(key string) Value {
	if !v.IsObject() {
		return Value{}
	}
	var out Value
	eachMember(bytesOf(v.Raw), func(k, val []byte) bool {
		if keyEqual(k, key) {
			out = Value{Raw: aliasString(val)}
			return false
		}
		return true
	})
	return out
}

// keyEqual compares a raw key (escapes as written) with a name.
func keyEqual(raw []byte, name string) bool {
	if string(raw) == name {
		return true
	}
	for _, c := range raw {
		if c == '\\' {
			k, ok := unescape(raw)
			return ok && k == name
		}
	}
	return false
}

// ForEach calls f with each member of an object (its key unescaped) or
// each element of an array (key ""), in order, until f returns false. A
// scalar is passed once, as itself; a missing value never.
func (v Value) ForEach(f func(key string, val Value) bool) {
	switch {
	case !v.Exists():
	case v.IsObject():
		// Keys and values alias Raw, which as a string never changes.
		eachMember(bytesOf(v.Raw), func(rk, rv []byte) bool {
			k := aliasString(rk)
			if strings.IndexByte(k, '\\') >= 0 {
				k, _ = unescape(rk)
			}
			return f(k, Value{Raw: aliasString(rv)})
		})
	case v.IsArray():
		eachElement(bytesOf(v.Raw), func(e []byte) bool {
			return f("", Value{Raw: aliasString(e)})
		})
	default:
		f("", v)
	}
}

// Array is the elements of an array, nil for any other value.
func (v Value) Array() []Value {
	var out []Value
	if v.IsArray() {
		v.ForEach(func(_ string, e Value) bool {
			out = append(out, e)
			return true
		})
	}
	return out
}
