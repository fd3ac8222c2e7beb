// Package strictjson decodes one JSON document into a Go value strictly:
// the input is exactly one JSON value (no trailing data, no second
// value), no object repeats a key, and every object key decoded into a
// struct names one of its fields exactly, with the case of its json tag.
//
// The input is also UTF-8 throughout, and no \u escape in it is a lone
// UTF-16 surrogate (CheckText).
//
// encoding/json alone is lenient on all four: it stops after the first
// value, keeps the last of duplicated keys, matches field names without
// regard to case, so `{"suite":"a","SUITE":"b"}` decodes as suite "b"
// even with DisallowUnknownFields, and replaces invalid UTF-8 and lone
// surrogates with U+FFFD, so "sec\xfftest" and "sec\ufffdtest" decode
// to the same string. A file that two readers could read differently, or
// whose bytes could change without its value changing, is refused
// instead.
package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"sort"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Error is a strictness violation (not a syntax or type error, which
// encoding/json reports).
type Error struct {
	// Path locates the offending value ("tasks[2]", "profiles.x").
	Path    string
	Problem string
}

func (e *Error) Error() string {
	if e.Path == "" {
		return e.Problem
	}
	return e.Path + ": " + e.Problem
}

// Unmarshal decodes b into v (a non-nil pointer) under the rules of the
// package doc, with unknown fields refused as by DisallowUnknownFields.
func Unmarshal(b []byte, v any) error {
	if err := CheckText(b); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var raw any
	if err := dec.Decode(&raw); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		if err == nil {
			return &Error{Problem: fmt.Sprintf("data after the JSON value at byte %d", dec.InputOffset())}
		}
		return &Error{Problem: fmt.Sprintf("data after the JSON value: %v", err)}
	}
	if err := checkDuplicates(b); err != nil {
		return err
	}
	if err := checkKeys(raw, reflect.TypeOf(v), ""); err != nil {
		return err
	}
	dec = json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// CheckDuplicates reports text that is not UTF-8 (CheckText) or a
// repeated key in any object of the single JSON value b; it does not
// check the rest of the strict rules.
func CheckDuplicates(b []byte) error {
	if err := CheckText(b); err != nil {
		return err
	}
	return checkDuplicates(b)
}

// CheckText refuses JSON text b that is not UTF-8, or whose strings hold
// a \u escape of a UTF-16 surrogate that is not half of a pair:
// encoding/json decodes both to U+FFFD, so the bytes could change
// without the decoded value changing. It checks no other syntax.
func CheckText(b []byte) error {
	for i := 0; i < len(b); {
		c := b[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && size == 1 {
				return &Error{Problem: fmt.Sprintf("invalid UTF-8 at byte %d (0x%02x)", i, c)}
			}
			i += size
			continue
		}
		if c != '\\' {
			i++
			continue
		}
		// A backslash is an escape inside a string (anywhere else the
		// decoder reports a syntax error); only \u escapes can be wrong
		// here.
		if i+1 >= len(b) || b[i+1] != 'u' {
			i += 2
			continue
		}
		r, ok := hex4(b[i+2:])
		if !ok {
			i += 2 // the decoder reports the malformed escape
			continue
		}
		if !utf16.IsSurrogate(r) {
			i += 6
			continue
		}
		if r < 0xdc00 && len(b) >= i+12 && b[i+6] == '\\' && b[i+7] == 'u' {
			if r2, ok := hex4(b[i+8:]); ok && r2 >= 0xdc00 && r2 < 0xe000 {
				i += 12
				continue
			}
		}
		return &Error{Problem: fmt.Sprintf("\\u%04x at byte %d is a lone UTF-16 surrogate, not a character", r, i)}
	}
	return nil
}

// hex4 decodes the four hex digits at the start of b.
func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		var d byte
		switch {
		case '0' <= c && c <= '9':
			d = c - '0'
		case 'a' <= c && c <= 'f':
			d = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(d)
	}
	return r, true
}

// checkDuplicates walks the token stream; each open object keeps the set
// of its keys.
func checkDuplicates(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	type frame struct {
		obj     bool
		keys    map[string]bool
		wantKey bool
		path    string
		index   int
		key     string
	}
	var stack []*frame
	child := func() string {
		if len(stack) == 0 {
			return ""
		}
		f := stack[len(stack)-1]
		if f.obj {
			return join(f.path, f.key)
		}
		return fmt.Sprintf("%s[%d]", f.path, f.index)
	}
	after := func() { // a value ended inside the top frame
		if len(stack) == 0 {
			return
		}
		f := stack[len(stack)-1]
		if f.obj {
			f.wantKey = true
		} else {
			f.index++
		}
	}
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if len(stack) > 0 {
			if f := stack[len(stack)-1]; f.obj && f.wantKey {
				if k, ok := tok.(string); ok {
					if f.keys[k] {
						return &Error{Path: f.path, Problem: fmt.Sprintf("key %q appears twice", k)}
					}
					f.keys[k] = true
					f.key, f.wantKey = k, false
					continue
				}
			}
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{obj: true, keys: map[string]bool{}, wantKey: true, path: child()})
		case json.Delim('['):
			stack = append(stack, &frame{path: child()})
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			after()
		default:
			after()
		}
	}
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// checkKeys matches the decoded value raw against type t: object keys
// decoded into a struct must equal a field's json name exactly.
func checkKeys(raw any, t reflect.Type, path string) error {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || raw == nil {
		return nil
	}
	if t.Implements(unmarshalerType) || reflect.PointerTo(t).Implements(unmarshalerType) {
		return nil // the type decodes itself
	}
	switch t.Kind() {
	case reflect.Struct:
		obj, ok := raw.(map[string]any)
		if !ok {
			return nil // encoding/json reports the type error
		}
		fields := jsonFields(t)
		for _, k := range sortedKeys(obj) {
			v := obj[k]
			ft, ok := fields[k]
			if !ok {
				for name := range fields {
					if strings.EqualFold(name, k) {
						return &Error{Path: path, Problem: fmt.Sprintf("key %q differs from the field %q only in case", k, name)}
					}
				}
				return &Error{Path: path, Problem: fmt.Sprintf("unknown field %q", k)}
			}
			if err := checkKeys(v, ft, join(path, k)); err != nil {
				return err
			}
		}
	case reflect.Slice, reflect.Array:
		arr, ok := raw.([]any)
		if !ok {
			return nil
		}
		for i, v := range arr {
			if err := checkKeys(v, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case reflect.Map:
		obj, ok := raw.(map[string]any)
		if !ok {
			return nil
		}
		for _, k := range sortedKeys(obj) {
			if err := checkKeys(obj[k], t.Elem(), join(path, k)); err != nil {
				return err
			}
		}
	}
	return nil
}

func sortedKeys(m map[string]any) []string {
	k := make([]string, 0, len(m))
	for s := range m {
		k = append(k, s)
	}
	sort.Strings(k)
	return k
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// jsonFields maps the JSON names of t's fields, with embedded structs'
// fields promoted as encoding/json does, to their types.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	m := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				for k, v := range jsonFields(ft) {
					if _, ok := m[k]; !ok {
						m[k] = v
					}
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		m[name] = f.Type
	}
	return m
}

// IsStrictness reports whether err is a strictness violation rather
// than a syntax or type error.
func IsStrictness(err error) bool {
	var e *Error
	return errors.As(err, &e)
}
