package strictjson

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// Options tune DecodeBounded.
type Options struct {
	// RequireFields refuses an object decoded into a struct that lacks a
	// field json.Marshal always writes (one without omitempty): a document
	// this program wrote has them all, so re-encoding the value is never
	// much larger than the document.
	RequireFields bool
	// MaxFootprint, when positive, bounds Footprint: the bytes the decoded
	// value and its re-encoding are estimated to take. A document over it
	// is refused before anything is decoded.
	MaxFootprint int64
	// Text, when set, checks every object key and string value (after
	// unescaping); its error is reported with the value's path.
	Text func(s string) error
}

// DecodeBounded decodes the single JSON value b into v (a non-nil
// pointer) under the rules of Unmarshal (one value, no repeated key,
// object keys equal to a field's json name exactly) plus: every string is
// valid UTF-8 and passes opt.Text, struct fields are present as
// opt.RequireFields says, and the decoded value's estimated size is at
// most opt.MaxFootprint.
//
// Unlike Unmarshal it builds no intermediate tree: the checks walk b once,
// guided by v's type, holding only a stack as deep as the document, so the
// memory it takes is a small multiple of len(b) and of the decoded value,
// however the document is shaped. That is what a large untrusted document
// (a certificate of up to hundreds of MiB) needs.
func DecodeBounded(b []byte, v any, opt Options) error {
	// The one text rule of every reader (CheckText), before the syntax, so
	// invalid UTF-8 is named by its byte offset wherever it is read.
	if err := CheckText(b); err != nil {
		return err
	}
	if !json.Valid(b) {
		var x struct{}
		// Valid says only no; Unmarshal of the same bytes says where. Into
		// an empty struct it keeps nothing.
		err := json.Unmarshal(b, &x)
		var se *json.SyntaxError
		if errors.As(err, &se) && strings.Contains(se.Error(), "after top-level value") {
			return &Error{Problem: fmt.Sprintf("data after the JSON value at byte %d", se.Offset-1)}
		}
		if err != nil {
			return err
		}
		return &Error{Problem: "not valid JSON"}
	}
	t := reflect.TypeOf(v)
	if t == nil || t.Kind() != reflect.Pointer {
		return &Error{Problem: "decoding needs a non-nil pointer"}
	}
	w := walker{s: string(b), opt: opt}
	w.skipSpace()
	if err := w.value(t.Elem()); err != nil {
		return err
	}
	w.skipSpace()
	if w.i != len(w.s) {
		return &Error{Problem: fmt.Sprintf("data after the JSON value at byte %d", w.i)}
	}
	w.footprint += int64(t.Elem().Size())
	if opt.MaxFootprint > 0 && w.footprint > opt.MaxFootprint {
		return &Error{Problem: fmt.Sprintf("decoding it would take about %d bytes, more than the %d allowed for a document of %d bytes", w.footprint, opt.MaxFootprint, len(b))}
	}
	return json.Unmarshal(b, v)
}

// Footprint estimates, as DecodeBounded does, the bytes decoding b into v
// and re-encoding it takes, for a valid document; -1 for an invalid one.
func Footprint(b []byte, v any) int64 {
	w := walker{s: string(b)}
	w.skipSpace()
	if !json.Valid(b) || w.value(reflect.TypeOf(v).Elem()) != nil {
		return -1
	}
	return w.footprint + int64(reflect.TypeOf(v).Elem().Size())
}

// walker checks a document json.Valid accepted, guided by the Go type each
// value decodes into; s is the document, i the position.
type walker struct {
	s         string
	i         int
	opt       Options
	footprint int64
	// path is the stack of keys ("k") and indices ("[3]") to the value
	// being walked, turned into a string only for an error.
	path []pathElem
}

type pathElem struct {
	key   string
	index int
	isKey bool
}

func (w *walker) where() string {
	var b strings.Builder
	for _, p := range w.path {
		if p.isKey {
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(p.key)
		} else {
			fmt.Fprintf(&b, "[%d]", p.index)
		}
	}
	return b.String()
}

func (w *walker) fail(format string, a ...any) error {
	return &Error{Path: w.where(), Problem: fmt.Sprintf(format, a...)}
}

func (w *walker) skipSpace() {
	for w.i < len(w.s) {
		switch w.s[w.i] {
		case ' ', '\t', '\n', '\r':
			w.i++
		default:
			return
		}
	}
}

// value walks one value that decodes into t (nil: into nothing known,
// walked only for the document-wide rules).
func (w *walker) value(t reflect.Type) error {
	for t != nil && t.Kind() == reflect.Pointer {
		if w.s[w.i] != 'n' {
			w.footprint += int64(t.Elem().Size())
		}
		t = t.Elem()
	}
	if t != nil && (t.Implements(unmarshalerType) || reflect.PointerTo(t).Implements(unmarshalerType)) {
		t = nil // the type decodes itself: only the document-wide rules
	}
	if t != nil && t.Kind() == reflect.Interface {
		t = nil
	}
	switch c := w.s[w.i]; {
	case c == '{':
		return w.object(t)
	case c == '[':
		return w.array(t)
	case c == '"':
		if t != nil && t.Kind() != reflect.String {
			return w.fail("a string where %s is expected", t)
		}
		s, err := w.str()
		if err != nil {
			return err
		}
		// Re-encoding writes the escapes, into a buffer that grows: a
		// weight of four per byte added.
		w.footprint += int64(len(s)) + 4*escaped(s)
		return nil
	default: // number, true, false, null: encoding/json checks their types
		for w.i < len(w.s) {
			switch w.s[w.i] {
			case ',', ']', '}', ' ', '\t', '\n', '\r':
				return nil
			}
			w.i++
		}
		return nil
	}
}

// fieldSet is the set of a struct's fields seen in one object: a bit
// mask, allocating only for a struct of more than 64 fields (so that
// walking many small objects allocates nothing).
type fieldSet struct {
	mask uint64
	more []bool
}

func newFieldSet(n int) fieldSet {
	if n > 64 {
		return fieldSet{more: make([]bool, n)}
	}
	return fieldSet{}
}

func (s *fieldSet) has(i int) bool {
	if s.more != nil {
		return s.more[i]
	}
	return s.mask&(1<<i) != 0
}

func (s *fieldSet) add(i int) {
	if s.more != nil {
		s.more[i] = true
		return
	}
	s.mask |= 1 << i
}

// escaped is how many bytes longer json.Marshal writes s than len(s):
// it escapes <, > and & as \u003c (and CheckText-like callers refuse the
// control characters it would also escape).
func escaped(s string) int64 {
	n := strings.Count(s, "<") + strings.Count(s, ">") + strings.Count(s, "&")
	return 5 * int64(n)
}

// str reads a string token at w.i, unescaped, and applies the text rules.
func (w *walker) str() (string, error) {
	start := w.i
	w.i++
	esc := false
	for {
		c := w.s[w.i]
		if c == '\\' {
			esc = true
			w.i += 2
			continue
		}
		w.i++
		if c == '"' {
			break
		}
	}
	raw := w.s[start:w.i]
	s := raw[1 : len(raw)-1]
	if esc {
		// Only here does the string escape (to the heap): walking many
		// plain strings allocates nothing.
		var u string
		if err := json.Unmarshal([]byte(raw), &u); err != nil {
			return "", w.fail("string: %v", err)
		}
		s = u
	}
	if !utf8.ValidString(s) {
		return "", w.fail("string %s is not valid UTF-8", strconv.QuoteToASCII(truncate(s)))
	}
	if w.opt.Text != nil {
		if err := w.opt.Text(s); err != nil {
			return "", w.fail("string %s: %v", strconv.QuoteToASCII(truncate(s)), err)
		}
	}
	return s, nil
}

func truncate(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}

func (w *walker) array(t reflect.Type) error {
	var elem reflect.Type
	if t != nil {
		if t.Kind() != reflect.Slice && t.Kind() != reflect.Array {
			return w.fail("an array where %s is expected", t)
		}
		elem = t.Elem()
	}
	w.i++
	w.skipSpace()
	if w.s[w.i] == ']' {
		w.i++
		return nil
	}
	w.path = append(w.path, pathElem{})
	n := 0
	for ; ; n++ {
		w.path[len(w.path)-1] = pathElem{index: n}
		w.skipSpace()
		if err := w.value(elem); err != nil {
			return err
		}
		w.skipSpace()
		c := w.s[w.i]
		w.i++
		if c == ']' {
			break
		}
	}
	if elem != nil {
		w.footprint += int64(elem.Size()) * grownCapacity(n+1)
	}
	w.path = w.path[:len(w.path)-1]
	return nil
}

// grownCapacity is the sum of the capacities a slice passes through
// when it grows one element at a time to n elements, as encoding/json
// grows the slices it decodes (reflect.Value.Grow, append's policy:
// doubling to 256, then by a quarter and 192): the elements allocated,
// garbage included, about 5n for a long slice.
func grownCapacity(n int) int64 {
	sum := int64(0)
	for c := 1; ; {
		sum += int64(c)
		if c >= n {
			return sum
		}
		if c < 256 {
			c *= 2
		} else {
			c += (c + 3*256) / 4
		}
	}
}

func (w *walker) object(t reflect.Type) error {
	var fields *structFields
	var keyType, elemType reflect.Type
	var seen map[string]bool // keys of a map or untyped object
	var seenField fieldSet   // fields of a struct
	switch {
	case t == nil:
		seen = map[string]bool{}
	case t.Kind() == reflect.Struct:
		fields = fieldsOf(t)
		seenField = newFieldSet(len(fields.list))
	case t.Kind() == reflect.Map:
		keyType, elemType = t.Key(), t.Elem()
		seen = map[string]bool{}
		w.footprint += 48 // the map header
	default:
		return w.fail("an object where %s is expected", t)
	}
	w.i++
	w.skipSpace()
	w.path = append(w.path, pathElem{})
	for w.s[w.i] != '}' {
		k, err := w.str()
		if err != nil {
			return err
		}
		w.path[len(w.path)-1] = pathElem{key: k, isKey: true}
		var vt reflect.Type
		if fields != nil {
			f, ok := fields.byName[k]
			if !ok {
				w.path = w.path[:len(w.path)-1]
				for _, f := range fields.list {
					if strings.EqualFold(f.name, k) {
						return w.fail("key %q differs from the field %q only in case", k, f.name)
					}
				}
				return w.fail("unknown field %q", k)
			}
			if seenField.has(f) {
				w.path = w.path[:len(w.path)-1]
				return w.fail("key %q appears twice", k)
			}
			seenField.add(f)
			vt = fields.list[f].typ
		} else {
			if seen[k] {
				w.path = w.path[:len(w.path)-1]
				return w.fail("key %q appears twice", k)
			}
			seen[k] = true
			if keyType != nil {
				// A map entry: key and value in the map's buckets as it
				// grows, and the sorted keys and buffers json.Marshal
				// makes to write it again (measured: about 300 bytes an
				// entry for string to string).
				w.footprint += 8*int64(keyType.Size()+elemType.Size()) + 2*int64(len(k))
			} else {
				w.footprint += 2*int64(len(k)) + 256
			}
			vt = elemType
		}
		w.skipSpace()
		w.i++ // ':'
		w.skipSpace()
		if err := w.value(vt); err != nil {
			return err
		}
		w.skipSpace()
		if w.s[w.i] == ',' {
			w.i++
			w.skipSpace()
		}
	}
	w.i++
	w.path = w.path[:len(w.path)-1]
	if fields != nil && w.opt.RequireFields {
		for i, f := range fields.list {
			if f.required && !seenField.has(i) {
				return w.fail("field %q is missing", f.name)
			}
		}
	}
	return nil
}

type field struct {
	name     string
	typ      reflect.Type
	required bool
}

type structFields struct {
	list   []field
	byName map[string]int
}

var fieldCache sync.Map // reflect.Type -> *structFields

// fieldsOf lists the JSON fields of struct type t, embedded structs'
// promoted as encoding/json does.
func fieldsOf(t reflect.Type) *structFields {
	if f, ok := fieldCache.Load(t); ok {
		return f.(*structFields)
	}
	sf := &structFields{byName: map[string]int{}}
	var add func(t reflect.Type)
	add = func(t reflect.Type) {
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			tag := f.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, opts, _ := strings.Cut(tag, ",")
			if f.Anonymous && name == "" {
				ft := f.Type
				if ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if ft.Kind() == reflect.Struct {
					add(ft)
					continue
				}
			}
			if !f.IsExported() {
				continue
			}
			if name == "" {
				name = f.Name
			}
			if _, ok := sf.byName[name]; ok {
				continue
			}
			sf.byName[name] = len(sf.list)
			sf.list = append(sf.list, field{name: name, typ: f.Type, required: !strings.Contains(","+opts+",", ",omitempty,")})
		}
	}
	add(t)
	fieldCache.Store(t, sf)
	return sf
}
