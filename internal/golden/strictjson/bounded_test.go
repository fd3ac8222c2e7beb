package strictjson

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// TestDecodeBounded: the rules of Unmarshal hold for DecodeBounded, and
// its own: UTF-8, the text check, required fields and the footprint.
func TestDecodeBounded(t *testing.T) {
	noCtl := func(s string) error {
		if strings.ContainsRune(s, '\x1b') {
			return errors.New("escape character")
		}
		return nil
	}
	for _, tc := range []struct {
		name, in string
		opt      Options
		want     string // "" means accepted
	}{
		{"ok", `{"suite":"e4m3","tasks":["a","b"],"items":[{"name":"x"}],"ptr":{"name":"y"},"extra":{"k":{"name":"z"}}}`, Options{}, ""},
		{"escapes", `{"suite":"e\u0034m3 \"q\" \\","tasks":["\u00e9"]}`, Options{}, ""},
		{"trailing garbage", `{"suite":"e4m3"} x`, Options{}, "data after the JSON value at byte 17"},
		{"second object", `{"suite":"e4m3"}{"suite":"e5m2"}`, Options{}, "data after the JSON value at byte 16"},
		{"duplicate key", `{"suite":"e4m3","suite":"e5m2"}`, Options{}, `key "suite" appears twice`},
		{"duplicate escaped key", `{"suite":"e4m3","s\u0075ite":"e5m2"}`, Options{}, `key "suite" appears twice`},
		{"duplicate nested key", `{"items":[{"name":"a"},{"name":"b","name":"c"}]}`, Options{}, `items[1]: key "name" appears twice`},
		{"duplicate map key", `{"meta":{"k":"1","k":"2"}}`, Options{}, `meta: key "k" appears twice`},
		{"case-folded key", `{"SUITE":"e4m3"}`, Options{}, `key "SUITE" differs from the field "suite" only in case`},
		{"unknown key", `{"suite":"e4m3","colour":"red"}`, Options{}, `unknown field "colour"`},
		{"syntax error", `{"suite":`, Options{}, "unexpected end of JSON input"},
		{"type error", `{"suite":1}`, Options{}, "cannot unmarshal number"},
		{"object for a string", `{"suite":{"a":1}}`, Options{}, "suite: an object where string is expected"},
		{"invalid UTF-8", "{\"suite\":\"a\xffb\"}", Options{}, "invalid UTF-8 at byte 11 (0xff)"},
		{"text check", `{"tasks":["ok","\u001b[2J"]}`, Options{Text: noCtl}, `tasks[1]: string "\x1b[2J": escape character`},
		{"text check on keys", `{"meta":{"\u001b":"x"}}`, Options{Text: noCtl}, `escape character`},
		{"required field missing", `{"suite":"e4m3"}`, Options{RequireFields: true}, `field "tasks" is missing`},
		{"required nested field missing", `{"suite":"e4m3","tasks":null,"items":[{}]}`, Options{RequireFields: true}, `items[0]: field "name" is missing`},
		{"omitempty fields may be absent", `{"suite":"e4m3","tasks":null}`, Options{RequireFields: true}, ""},
		{"footprint", `{"tasks":["","","","","","","","","","","","","","","","","",""]}`, Options{MaxFootprint: 100}, "more than the 100 allowed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var d doc
			err := DecodeBounded([]byte(tc.in), &d, tc.opt)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

// TestGrownCapacity: the sum of capacities follows append's growth.
func TestGrownCapacity(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want int64
	}{{0, 1}, {1, 1}, {2, 3}, {3, 7}, {256, 511}, {257, 511 + 512}} {
		if got := grownCapacity(tc.n); got != tc.want {
			t.Errorf("grownCapacity(%d) = %d, want %d", tc.n, got, tc.want)
		}
	}
}

// FuzzDecodeBounded: DecodeBounded (without its own extra rules) accepts
// exactly what Unmarshal accepts, and decodes the same value; it never
// panics, whatever the bytes.
func FuzzDecodeBounded(f *testing.F) {
	for _, s := range []string{
		`{"suite":"e4m3","tasks":["a","b"],"items":[{"name":"x"}],"ptr":{"name":"y"},"extra":{"k":{"name":"z"}},"meta":{"a":"b"}}`,
		`{"suite":"e\u0034m3 \"q\" \\","tasks":["\u00e9"]}`,
		`{"suite":"e4m3","suite":"x"}`, `{"SUITE":1}`, `[1,2]`, `{"tasks":[[]]}`, `{"ptr":null} `, "{\"suite\":\"\xff\"}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var a, c doc
		errA := Unmarshal(b, &a)
		errB := DecodeBounded(b, &c, Options{})
		if errB == nil && !reflect.DeepEqual(a, c) {
			t.Fatalf("decoded %+v, Unmarshal %+v", c, a)
		}
		// DecodeBounded refuses invalid UTF-8, which Unmarshal replaces.
		if errA == nil && errB != nil && !strings.Contains(errB.Error(), "not valid UTF-8") {
			t.Fatalf("Unmarshal accepts, DecodeBounded refuses: %v", errB)
		}
		if errA != nil && errB == nil {
			t.Fatalf("Unmarshal refuses (%v), DecodeBounded accepts", errA)
		}
	})
}
