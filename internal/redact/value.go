package redact

import (
	"encoding/json"
	"reflect"
)

var rawMessageType = reflect.TypeFor[json.RawMessage]()

// Value returns a deep copy of v with every string in it redacted, and the
// count of replacements: struct fields, slice and array elements, map keys
// and values, through pointers and interfaces, and json.RawMessage values
// as JSON. Other byte slices (binary data) and unexported fields are copied
// as they are, and v itself is not modified. It is meant for what a server
// is about to encode (page data, API answers), which has no cycles.
func Value[T any](v T) (T, int) {
	n := 0
	out := reflect.New(reflect.TypeFor[T]()).Elem()
	out.Set(deep(reflect.ValueOf(&v).Elem(), &n))
	return *out.Addr().Interface().(*T), n
}

// deep returns a redacted copy of v, of v's type.
func deep(v reflect.Value, n *int) reflect.Value {
	switch v.Kind() {
	case reflect.String:
		s, m := String(v.String())
		if s == v.String() {
			return v
		}
		*n += m
		out := reflect.New(v.Type()).Elem()
		out.SetString(s)
		return out
	case reflect.Pointer:
		if v.IsNil() {
			return v
		}
		out := reflect.New(v.Type().Elem())
		out.Elem().Set(deep(v.Elem(), n))
		return out
	case reflect.Interface:
		if v.IsNil() {
			return v
		}
		out := reflect.New(v.Type()).Elem()
		out.Set(deep(v.Elem(), n))
		return out
	case reflect.Struct:
		out := reflect.New(v.Type()).Elem()
		out.Set(v)
		for i := range v.NumField() {
			if f := out.Field(i); f.CanSet() {
				f.Set(deep(v.Field(i), n))
			}
		}
		return out
	case reflect.Slice:
		if v.IsNil() {
			return v
		}
		if v.Type() == rawMessageType {
			raw, m := JSON(v.Bytes())
			*n += m
			return reflect.ValueOf(raw)
		}
		out := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		if v.Type().Elem().Kind() == reflect.Uint8 {
			reflect.Copy(out, v)
			return out
		}
		for i := range v.Len() {
			out.Index(i).Set(deep(v.Index(i), n))
		}
		return out
	case reflect.Array:
		out := reflect.New(v.Type()).Elem()
		for i := range v.Len() {
			out.Index(i).Set(deep(v.Index(i), n))
		}
		return out
	case reflect.Map:
		if v.IsNil() {
			return v
		}
		out := reflect.MakeMapWithSize(v.Type(), v.Len())
		for it := v.MapRange(); it.Next(); {
			out.SetMapIndex(deep(it.Key(), n), deep(it.Value(), n))
		}
		return out
	}
	return v
}
